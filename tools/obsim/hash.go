package obsim

import "obgate/internal/obpart"

// OceanBase 4.x partition hashing (MySQL mode), with the server's value
// rules from internal/obpart, which vectors computed by OceanBase's own
// code check:
//
//   - HASH: |int(expr)| % partitions, NULL as 0 and INT64_MIN as INT64_MAX;
//   - KEY: a 64-bit hash chained over the key values in the order of the
//     partitioning expression, h = 0 then h = hash(value, seed h);
//     partition = |int64(h)| % partitions.

// keyHash is the KEY hash of one key value of column c (cast to it) with
// seed.
func keyHash(v value, c *column, seed uint64) uint64 {
	switch v.kind {
	case valNull:
		return obpart.HashNull(seed)
	case valInt, valDate, valTime:
		return obpart.HashInt(v.i, seed)
	case valUint:
		return obpart.HashInt(int64(v.u), seed)
	case valDec:
		d := decimalOf(v)
		return obpart.HashDecimal(&d, seed)
	}
	return c.coll.Hash([]byte(v.s), seed)
}

// decimalOf returns the decimal a valDec value holds.
func decimalOf(v value) obpart.Decimal {
	var d obpart.Decimal
	copy(d[:], v.s)
	return d
}
