package mysqlproto

import "encoding/binary"

// Length-encoded integer prefixes.
const (
	lenEncNull  = 0xfb // NULL in a text row; never an integer prefix
	lenEnc2Byte = 0xfc
	lenEnc3Byte = 0xfd
	lenEnc8Byte = 0xfe
)

// ReadLenEncInt decodes a length-encoded integer at b[pos:]. It returns the
// value, the position after it, and false if b is truncated or the prefix is
// 0xfb (NULL) or 0xff (not an integer).
func ReadLenEncInt(b []byte, pos int) (uint64, int, bool) {
	if pos < 0 || pos >= len(b) {
		return 0, pos, false
	}
	switch c := b[pos]; {
	case c < lenEncNull:
		return uint64(c), pos + 1, true
	case c == lenEnc2Byte:
		if len(b)-pos < 3 {
			return 0, pos, false
		}
		return uint64(binary.LittleEndian.Uint16(b[pos+1:])), pos + 3, true
	case c == lenEnc3Byte:
		if len(b)-pos < 4 {
			return 0, pos, false
		}
		return uint64(b[pos+1]) | uint64(b[pos+2])<<8 | uint64(b[pos+3])<<16, pos + 4, true
	case c == lenEnc8Byte:
		if len(b)-pos < 9 {
			return 0, pos, false
		}
		return binary.LittleEndian.Uint64(b[pos+1:]), pos + 9, true
	default:
		return 0, pos, false
	}
}

// ReadLenEncString decodes a length-encoded string at b[pos:]. The returned
// slice is borrowed from b.
func ReadLenEncString(b []byte, pos int) ([]byte, int, bool) {
	n, p, ok := ReadLenEncInt(b, pos)
	if !ok || n > uint64(len(b)-p) {
		return nil, pos, false
	}
	return b[p : p+int(n)], p + int(n), true
}

// SkipLenEncString skips a length-encoded string at b[pos:].
func SkipLenEncString(b []byte, pos int) (int, bool) {
	_, p, ok := ReadLenEncString(b, pos)
	return p, ok
}

// ReadNullString reads a NUL-terminated string at b[pos:]. The returned slice
// is borrowed from b and excludes the terminator.
func ReadNullString(b []byte, pos int) ([]byte, int, bool) {
	if pos < 0 || pos > len(b) {
		return nil, pos, false
	}
	for i := pos; i < len(b); i++ {
		if b[i] == 0 {
			return b[pos:i], i + 1, true
		}
	}
	return nil, pos, false
}

// ReadFixed reads n bytes at b[pos:]; the slice is borrowed from b.
func ReadFixed(b []byte, pos, n int) ([]byte, int, bool) {
	if pos < 0 || n < 0 || n > len(b)-pos {
		return nil, pos, false
	}
	return b[pos : pos+n], pos + n, true
}

// ReadUint16 reads a little-endian uint16 at b[pos:].
func ReadUint16(b []byte, pos int) (uint16, int, bool) {
	if pos < 0 || len(b)-pos < 2 {
		return 0, pos, false
	}
	return binary.LittleEndian.Uint16(b[pos:]), pos + 2, true
}

// ReadUint32 reads a little-endian uint32 at b[pos:].
func ReadUint32(b []byte, pos int) (uint32, int, bool) {
	if pos < 0 || len(b)-pos < 4 {
		return 0, pos, false
	}
	return binary.LittleEndian.Uint32(b[pos:]), pos + 4, true
}

// LenEncIntSize is the number of bytes AppendLenEncInt writes for v.
func LenEncIntSize(v uint64) int {
	switch {
	case v < lenEncNull:
		return 1
	case v < 1<<16:
		return 3
	case v < 1<<24:
		return 4
	default:
		return 9
	}
}

// AppendLenEncInt appends v as a length-encoded integer.
func AppendLenEncInt(dst []byte, v uint64) []byte {
	switch {
	case v < lenEncNull:
		return append(dst, byte(v))
	case v < 1<<16:
		return append(dst, lenEnc2Byte, byte(v), byte(v>>8))
	case v < 1<<24:
		return append(dst, lenEnc3Byte, byte(v), byte(v>>8), byte(v>>16))
	default:
		dst = append(dst, lenEnc8Byte)
		return binary.LittleEndian.AppendUint64(dst, v)
	}
}

// AppendLenEncString appends s with a length-encoded length prefix.
func AppendLenEncString(dst []byte, s string) []byte {
	dst = AppendLenEncInt(dst, uint64(len(s)))
	return append(dst, s...)
}

// AppendLenEncBytes appends b with a length-encoded length prefix.
func AppendLenEncBytes(dst []byte, b []byte) []byte {
	dst = AppendLenEncInt(dst, uint64(len(b)))
	return append(dst, b...)
}

// AppendNullString appends s followed by a NUL byte.
func AppendNullString(dst []byte, s string) []byte {
	dst = append(dst, s...)
	return append(dst, 0)
}
