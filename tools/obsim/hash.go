package obsim

import (
	"encoding/binary"
	"unicode"
	"unicode/utf8"

	"golang.org/x/text/unicode/norm"
)

// OceanBase 4.x partition hashing, written from its definition:
//
//   - HASH (MySQL mode): |int(expr)| % partitions, NULL as 0 and INT64_MIN
//     as INT64_MAX;
//   - KEY: a 64-bit hash chained over the key values, h = 0 then
//     h = hash(value, seed h) for each value (NULL hashed as the integer 0);
//     partition = |int64(h)| % partitions.
//
// hash(value, seed) is MurmurHash64A:
//   - integers of any width and signedness: over the 8 little-endian bytes of
//     the value widened to 64 bits;
//   - strings in utf8mb4_general_ci: trailing spaces removed, each character
//     replaced by its 16-bit sort weight, the weights laid out as 2
//     little-endian bytes each, hashed in chunks of 128 bytes, each chunk's
//     hash seeding the next; an empty string leaves the seed unchanged.

const (
	murmurM = 0xc6a4a7935bd1e995
	murmurR = 47
)

// murmur64A is MurmurHash64A (Austin Appleby, public domain) over p with
// seed, reading 8-byte words little-endian.
func murmur64A(p []byte, seed uint64) uint64 {
	h := seed ^ uint64(len(p))*murmurM
	for len(p) >= 8 {
		k := binary.LittleEndian.Uint64(p)
		k *= murmurM
		k ^= k >> murmurR
		k *= murmurM
		h ^= k
		h *= murmurM
		p = p[8:]
	}
	if len(p) > 0 {
		for i := len(p) - 1; i >= 0; i-- {
			h ^= uint64(p[i]) << (8 * i)
		}
		h *= murmurM
	}
	h ^= h >> murmurR
	h *= murmurM
	h ^= h >> murmurR
	return h
}

// hashInt is the KEY hash of an integer value.
func hashInt(v int64, seed uint64) uint64 {
	var b [8]byte
	binary.LittleEndian.PutUint64(b[:], uint64(v))
	return murmur64A(b[:], seed)
}

// hashChunk is the size of the weight buffer hashed at a time.
const hashChunk = 128

// hashString is the KEY hash of a utf8mb4_general_ci string.
func hashString(s string, seed uint64) uint64 {
	for len(s) > 0 && s[len(s)-1] == ' ' {
		s = s[:len(s)-1]
	}
	var buf [hashChunk]byte
	n := 0
	h := seed
	for len(s) > 0 {
		r, size := utf8.DecodeRuneInString(s)
		if r == utf8.RuneError && size <= 1 {
			break // OceanBase stops at the first invalid sequence
		}
		s = s[size:]
		if n == hashChunk {
			h = murmur64A(buf[:n], h)
			n = 0
		}
		w := generalCIWeight(r)
		buf[n], buf[n+1] = byte(w), byte(w>>8)
		n += 2
	}
	if n > 0 {
		h = murmur64A(buf[:n], h)
	}
	return h
}

// partOfHash maps a 64-bit hash to a partition index as KEY partitioning
// does: |int64(h)| % n.
func partOfHash(h uint64, n int) int {
	v := int64(h)
	if v < 0 {
		v = -v // INT64_MIN stays negative; as unsigned it is 2^63
	}
	return int(uint64(v) % uint64(n))
}

// latin1Weights are the utf8mb4_general_ci weights of U+00C0..U+00FF:
// letters fold to their unaccented capital; Æ, Ð, ×, Ø, Þ, ÷ keep their own
// weight; ß sorts as S and ÿ as Y.
var latin1Weights = [64]uint16{
	'A', 'A', 'A', 'A', 'A', 'A', 0xC6, 'C', 'E', 'E', 'E', 'E', 'I', 'I', 'I', 'I',
	0xD0, 'N', 'O', 'O', 'O', 'O', 'O', 0xD7, 0xD8, 'U', 'U', 'U', 'U', 'Y', 0xDE, 'S',
	'A', 'A', 'A', 'A', 'A', 'A', 0xC6, 'C', 'E', 'E', 'E', 'E', 'I', 'I', 'I', 'I',
	0xD0, 'N', 'O', 'O', 'O', 'O', 'O', 0xF7, 0xD8, 'U', 'U', 'U', 'U', 'Y', 0xDE, 'Y',
}

// generalCIWeight returns the utf8mb4_general_ci sort weight of r. It is
// exact for U+0000..U+00FF (ASCII folds to upper case, Latin-1 as above)
// and maps characters outside the Basic Multilingual Plane to U+FFFD as
// the collation does. Elsewhere it approximates the collation's table by
// the upper case of the character's first canonical component (which
// drops accents); a few hundred rarely used characters differ.
func generalCIWeight(r rune) uint16 {
	switch {
	case r < 0x80:
		if r >= 'a' && r <= 'z' {
			r -= 'a' - 'A'
		}
		return uint16(r)
	case r < 0xC0:
		if r == 0xB5 { // micro sign sorts as Greek capital mu
			return 0x39C
		}
		return uint16(r)
	case r < 0x100:
		return latin1Weights[r-0xC0]
	case r > 0xFFFF:
		return 0xFFFD
	}
	var tmp [utf8.UTFMax]byte
	n := utf8.EncodeRune(tmp[:], r)
	d := norm.NFD.Bytes(tmp[:n])
	if base, _ := utf8.DecodeRune(d); base != utf8.RuneError {
		r = base
	}
	if up := unicode.ToUpper(r); up <= 0xFFFF {
		r = up
	}
	return uint16(r)
}

// generalCIKey returns the comparison key of s in utf8mb4_general_ci: the
// weights of its characters with trailing spaces ignored. Two strings are
// equal in the collation when their keys are equal.
func generalCIKey(s string) string {
	for len(s) > 0 && s[len(s)-1] == ' ' {
		s = s[:len(s)-1]
	}
	out := make([]byte, 0, 2*len(s))
	for _, r := range s {
		w := generalCIWeight(r)
		out = append(out, byte(w>>8), byte(w))
	}
	return string(out)
}
