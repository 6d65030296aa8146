package obpart

import (
	"bytes"
	"cmp"
)

// Coll is a collation a partition key string may have, as far as
// placement is concerned.
type Coll uint8

// Collations.
const (
	// CollNone is any collation obgate does not compute with.
	CollNone Coll = iota
	// CollGeneralCI is utf8mb4_general_ci: weights from the collation's
	// table, trailing spaces do not count (PAD SPACE).
	CollGeneralCI
	// CollPadBin is utf8mb4_bin: bytes, trailing spaces do not count.
	CollPadBin
	// CollBinary is binary: bytes, every byte counts; 'x ' and 'x' differ.
	CollBinary
)

// OceanBase collation ids (ObCollationType).
const (
	IDGeneralCI = 45 // utf8mb4_general_ci
	IDPadBin    = 46 // utf8mb4_bin
	IDBinary    = 63 // binary
	idUTF8CI    = 33 // utf8_general_ci: OceanBase's utf8 is utf8mb4
	idUTF8Bin   = 83 // utf8_bin
)

// CollOf returns the collation of OceanBase collation id.
func CollOf(id int64) Coll {
	switch id {
	case IDGeneralCI, idUTF8CI:
		return CollGeneralCI
	case IDPadBin, idUTF8Bin:
		return CollPadBin
	case IDBinary:
		return CollBinary
	}
	return CollNone
}

// DecodeUTF8MB4 decodes the character that starts s as ob_mb_wc_utf8mb4
// does and returns it with its length, or a length of 0 when s is empty
// or does not start with a valid sequence. Unlike utf8.DecodeRune it takes
// the surrogates U+D800..U+DFFF as characters, as OceanBase does.
func DecodeUTF8MB4(s []byte) (rune, int) {
	if len(s) == 0 {
		return 0, 0
	}
	c := s[0]
	cont := func(b byte) bool { return b^0x80 < 0x40 }
	switch {
	case c < 0x80:
		return rune(c), 1
	case c < 0xC2:
		return 0, 0
	case c < 0xE0:
		if len(s) < 2 || !cont(s[1]) {
			return 0, 0
		}
		return rune(c&0x1F)<<6 | rune(s[1]^0x80), 2
	case c < 0xF0:
		if len(s) < 3 || !cont(s[1]) || !cont(s[2]) || (c < 0xE1 && s[1] < 0xA0) {
			return 0, 0
		}
		return rune(c&0x0F)<<12 | rune(s[1]^0x80)<<6 | rune(s[2]^0x80), 3
	case c < 0xF5:
		if len(s) < 4 || !cont(s[1]) || !cont(s[2]) || !cont(s[3]) ||
			(c < 0xF1 && s[1] < 0x90) || (c > 0xF3 && s[1] > 0x8F) {
			return 0, 0
		}
		return rune(c&0x07)<<18 | rune(s[1]^0x80)<<12 | rune(s[2]^0x80)<<6 | rune(s[3]^0x80), 4
	}
	return 0, 0
}

// replacement is the weight of every character beyond U+FFFF
// (OB_CS_REPLACEMENT_CHARACTER).
const replacement = 0xFFFD

// GeneralCIWeight is the utf8mb4_general_ci sort weight of r.
func GeneralCIWeight(r rune) uint16 {
	if r < 0 || r > 0xFFFF {
		return replacement
	}
	if p := generalCIPages[r>>8]; p != nil {
		return p[r&0xFF]
	}
	return uint16(r)
}

// Compare orders a and b in collation c, as the server compares partition
// bounds and keys (strnncollsp). CollNone compares bytes.
func (c Coll) Compare(a, b []byte) int {
	switch c {
	case CollGeneralCI:
		return compareGeneralCI(a, b)
	case CollPadBin:
		n := min(len(a), len(b))
		if r := bytes.Compare(a[:n], b[:n]); r != 0 {
			return r
		}
		return comparePadded(a[n:], b[n:])
	}
	return bytes.Compare(a, b)
}

// compareGeneralCI is ob_strnncollsp_utf8mb4: weight by weight while both
// strings have characters; from an invalid sequence on, the rest compares
// byte by byte; what is left of the longer string compares with spaces.
func compareGeneralCI(a, b []byte) int {
	for len(a) > 0 && len(b) > 0 {
		ra, na := DecodeUTF8MB4(a)
		rb, nb := DecodeUTF8MB4(b)
		if na == 0 || nb == 0 {
			if r := bytes.Compare(a[:min(len(a), len(b))], b[:min(len(a), len(b))]); r != 0 {
				return r
			}
			return cmp.Compare(len(a), len(b))
		}
		if wa, wb := GeneralCIWeight(ra), GeneralCIWeight(rb); wa != wb {
			return cmp.Compare(wa, wb)
		}
		a, b = a[na:], b[nb:]
	}
	return comparePadded(a, b)
}

// comparePadded compares the tails of two strings once one of them has
// ended: the longer one's bytes against spaces (a multi-byte character's
// bytes are all above a space).
func comparePadded(a, b []byte) int {
	sign := 1
	if len(a) < len(b) {
		a, sign = b, -1
	}
	for _, c := range a {
		if c != ' ' {
			if c < ' ' {
				return -sign
			}
			return sign
		}
	}
	return 0
}

// hashChunk is the weight buffer ob_hash_sort_utf8mb4 hashes at a time
// (HASH_BUFFER_LENGTH).
const hashChunk = 128

// Hash is the KEY hash of the string s in collation c with seed
// (ObCharset::hash with the collation's hash_sort, MySQL mode). A
// CollNone string hashes as binary.
func (c Coll) Hash(s []byte, seed uint64) uint64 {
	switch c {
	case CollGeneralCI:
		return hashGeneralCI(trimSpaces(s), seed)
	case CollPadBin:
		return Murmur64A(trimSpaces(s), seed)
	}
	return Murmur64A(s, seed)
}

// hashGeneralCI hashes the weights of s, two little-endian bytes each, in
// chunks of hashChunk bytes, each chunk's hash the seed of the next. It
// stops at the first invalid sequence; a string of no characters leaves
// the seed as it is.
func hashGeneralCI(s []byte, seed uint64) uint64 {
	var buf [hashChunk]byte
	n, h := 0, seed
	for {
		r, size := DecodeUTF8MB4(s)
		if size == 0 {
			break
		}
		s = s[size:]
		if n > hashChunk-2 {
			h = Murmur64A(buf[:n], h)
			n = 0
		}
		w := GeneralCIWeight(r)
		buf[n], buf[n+1] = byte(w), byte(w>>8)
		n += 2
	}
	if n > 0 {
		h = Murmur64A(buf[:n], h)
	}
	return h
}

// trimSpaces returns s without its trailing ' ' bytes.
func trimSpaces(s []byte) []byte {
	for len(s) > 0 && s[len(s)-1] == ' ' {
		s = s[:len(s)-1]
	}
	return s
}
