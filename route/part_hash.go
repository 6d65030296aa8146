package route

import "obgate/internal/obpart"

// The partition functions of OceanBase 4.x in MySQL mode (odp-behaviour.md
// §5.4), with the server's value rules from internal/obpart:
//
//   - HASH: |int(expr)| % n, NULL as 0 and INT64_MIN as INT64_MAX;
//   - KEY: h starts at 0 and becomes the value's hash with seed h for each
//     key value in turn (in the order of the partitioning expression); the
//     partition is |int64(h)| % n.

// keyHash is the KEY hash of one key value of column c with seed; arena
// holds the bytes of values that lie in it. It reports false for a value
// KEY partitioning cannot take (MAXVALUE).
func keyHash(c *keyCol, v *kval, arena []byte, seed uint64) (uint64, bool) {
	switch v.kind {
	case kNull:
		return obpart.HashNull(seed), true
	case kInt, kUint, kDate, kTime:
		return obpart.HashInt(v.i, seed), true
	case kStr:
		return c.coll.Hash(v.bytesOf(arena), seed), true
	case kDec:
		d, ok := obpart.DecimalFromBytes(v.bytesOf(arena))
		if !ok {
			return 0, false
		}
		return obpart.HashDecimal(&d, seed), true
	}
	return 0, false
}
