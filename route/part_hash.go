package route

import (
	"encoding/binary"
	"math"
)

// The partition hash functions of OceanBase 4.x in MySQL mode
// (odp-behaviour.md §5.4):
//
//   - HASH: |int(expr)| % n, NULL as 0 and INT64_MIN as INT64_MAX;
//   - KEY: h starts at 0 and becomes murmur64A(value, h) for each key
//     value in turn (NULL hashed as the integer 0); the partition is
//     |int64(h)| % n.
//
// A value's bytes for the hash: an integer of any width and signedness is
// its 64-bit two's-complement pattern as 8 little-endian bytes; a
// utf8mb4_general_ci string is the 16-bit sort weight of each character
// (trailing spaces removed) as 2 little-endian bytes, hashed in chunks of
// 128 bytes, each chunk's hash the seed of the next, an empty string
// leaving the seed as it is; a binary-collated string is its bytes
// without trailing spaces, hashed at once.

const (
	murmurMul   = 0xc6a4a7935bd1e995
	murmurShift = 47
	weightChunk = 128 // bytes of sort weights hashed at a time
)

// murmur64A is MurmurHash64A over p with seed, reading 8-byte words
// little-endian.
func murmur64A(p []byte, seed uint64) uint64 {
	h := seed ^ uint64(len(p))*murmurMul
	for ; len(p) >= 8; p = p[8:] {
		k := binary.LittleEndian.Uint64(p) * murmurMul
		k ^= k >> murmurShift
		h = (h ^ k*murmurMul) * murmurMul
	}
	if len(p) > 0 {
		var tail uint64
		for i := len(p) - 1; i >= 0; i-- {
			tail = tail<<8 | uint64(p[i])
		}
		h = (h ^ tail) * murmurMul
	}
	h ^= h >> murmurShift
	h *= murmurMul
	return h ^ h>>murmurShift
}

// keyHashInt is the KEY hash of an integer (unsigned ones as their bit
// pattern) with seed.
func keyHashInt(v int64, seed uint64) uint64 {
	var b [8]byte
	binary.LittleEndian.PutUint64(b[:], uint64(v))
	return murmur64A(b[:], seed)
}

// keyHashCI is the KEY hash of a utf8mb4_general_ci string with seed. The
// string ends at its first invalid UTF-8 sequence, as OceanBase's
// conversion stops there.
func keyHashCI(s []byte, seed uint64) uint64 {
	s = trimTrailingSpaces(s)
	var buf [weightChunk]byte
	n, h := 0, seed
	for len(s) > 0 {
		w, size := ciWeightAt(s)
		if size == 0 {
			break
		}
		s = s[size:]
		if n == len(buf) {
			h = murmur64A(buf[:], h)
			n = 0
		}
		buf[n], buf[n+1] = byte(w), byte(w>>8)
		n += 2
	}
	if n > 0 {
		h = murmur64A(buf[:n], h)
	}
	return h
}

// keyHashBin is the KEY hash of a binary-collated string with seed.
func keyHashBin(s []byte, seed uint64) uint64 { return murmur64A(trimTrailingSpaces(s), seed) }

// keyPartOf maps a KEY hash to one of n partitions: |int64(h)| % n, where
// the absolute value of INT64_MIN is 2^63.
func keyPartOf(h uint64, n int) int {
	v := int64(h)
	if v < 0 {
		v = -v
	}
	return int(uint64(v) % uint64(n))
}

// hashPartOf maps a HASH expression value to one of n partitions.
func hashPartOf(v int64, n int) int {
	switch {
	case v == math.MinInt64:
		v = math.MaxInt64
	case v < 0:
		v = -v
	}
	return int(v % int64(n))
}

// trimTrailingSpaces returns s without its trailing ' ' bytes.
func trimTrailingSpaces(s []byte) []byte {
	for len(s) > 0 && s[len(s)-1] == ' ' {
		s = s[:len(s)-1]
	}
	return s
}
