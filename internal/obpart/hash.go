package obpart

import (
	"encoding/binary"
	"math"
)

const (
	murmurMul   = 0xc6a4a7935bd1e995
	murmurShift = 47
)

// Murmur64A is MurmurHash64A (Austin Appleby, public domain) over p with
// seed, 8-byte words read little-endian, as OceanBase's murmurhash64A
// computes it on x86-64.
func Murmur64A(p []byte, seed uint64) uint64 {
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

// HashInt is the KEY hash of an integer of any width and signedness
// (unsigned ones as their bit pattern), and of a DATE (its day number),
// DATETIME or TIMESTAMP (its microseconds): the 8 little-endian bytes of
// the value as an int64.
func HashInt(v int64, seed uint64) uint64 {
	var b [8]byte
	binary.LittleEndian.PutUint64(b[:], uint64(v))
	return Murmur64A(b[:], seed)
}

// HashNull is the KEY hash of NULL on the server: the 4 bytes of the int
// ObNullType (0). ODP hashes NULL as the 8-byte integer 0 instead
// (obproxy src/share/part/ob_part_desc_key.cpp calc_value_for_mysql); the
// server decides where the row is, so this follows the server (oceanbase
// src/share/datum/ob_datum_funcs_impl.h, DefHashFunc::null_hash).
func HashNull(seed uint64) uint64 {
	var b [4]byte
	return Murmur64A(b[:], seed)
}

// KeyPart maps a KEY hash to one of n partitions: |int64(h)| % n, the
// absolute value of INT64_MIN taken as 2^63.
func KeyPart(h uint64, n int) int {
	v := int64(h)
	if v < 0 {
		v = -v
	}
	return int(uint64(v) % uint64(n))
}

// HashPart maps the value of a HASH partitioning expression to one of n
// partitions: |v| % n, INT64_MIN as INT64_MAX (NULL is 0 and goes to
// partition 0).
func HashPart(v int64, n int) int {
	switch {
	case v == math.MinInt64:
		v = math.MaxInt64
	case v < 0:
		v = -v
	}
	return int(v % int64(n))
}
