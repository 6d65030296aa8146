package route

import (
	"cmp"
	"time"

	"obgate/internal/obpart"
	"obgate/mysqlproto"
)

// kval is a partition key value as the calculation compares and hashes
// it: a value already cast to its key column, or a partition bound.
type kval struct {
	kind kkind
	// arena: the bytes (a string, a decimal) lie in the calculation's
	// scratch buffer at [i, i+n) instead of in s (offsets, so that the
	// scratch buffer is not pointed into and the calculation stays on the
	// stack).
	arena bool
	n     int32
	i     int64 // kInt, kUint (bit pattern); kDate: day number; kTime: microseconds
	s     []byte
}

type kkind uint8

const (
	kNull kkind = iota
	kInt
	kUint
	kStr
	kDate // a DATE: i is its day number from 1970-01-01
	kTime // a DATETIME (wall clock) or TIMESTAMP (UTC): i is microseconds since 1970-01-01 00:00:00
	kDec  // a DECIMAL at its column's scale: the bytes are an obpart.Decimal
	kMax  // MAXVALUE: above every value (RANGE bounds, the LIST DEFAULT marker)
)

// colClass is how a key column's values are compared and hashed.
type colClass uint8

const (
	classNone colClass = iota // a type obgate does not compute partitions for
	classInt
	classUint
	classStr // a string; keyCol.coll says how it compares and hashes
	classDate
	classDatetime
	classTimestamp
	classDecimal // ObDecimalIntType; keyCol.prec and scale give its accuracy
)

// classOf returns the class and collation of a key column of type t and
// collation coll. A string of a collation obgate does not know, DECIMAL
// held as ObNumberType (OceanBase before 4.2), floats, TIME, YEAR and the
// text types are not computed.
func classOf(t mysqlproto.OBObjType, coll int64) (colClass, obpart.Coll) {
	switch {
	case t.IsUnsigned():
		return classUint, obpart.CollNone
	case t.IsInt():
		return classInt, obpart.CollNone
	case t.IsString():
		if c := obpart.CollOf(coll); c != obpart.CollNone {
			return classStr, c
		}
	case t == mysqlproto.OBTypeDate:
		return classDate, obpart.CollNone
	case t == mysqlproto.OBTypeDatetime:
		return classDatetime, obpart.CollNone
	case t == mysqlproto.OBTypeTimestamp:
		return classTimestamp, obpart.CollNone
	case t == mysqlproto.OBTypeDecimalInt:
		return classDecimal, obpart.CollNone
	}
	return classNone, obpart.CollNone
}

// compareInts orders two integer values of kinds kInt or kUint.
func compareInts(ak kkind, a int64, bk kkind, b int64) int {
	switch {
	case ak == bk && ak == kUint:
		return cmp.Compare(uint64(a), uint64(b))
	case ak == bk:
		return cmp.Compare(a, b)
	case ak == kUint: // b signed
		if b < 0 || uint64(a) > uint64(b) {
			return 1
		}
		return cmp.Compare(uint64(a), uint64(b))
	default: // a signed, b unsigned
		if a < 0 || uint64(a) < uint64(b) {
			return -1
		}
		return cmp.Compare(uint64(a), uint64(b))
	}
}

// rank orders the kinds that do not compare by content: NULL first,
// MAXVALUE last, values in between.
func (k kkind) rank() int {
	switch k {
	case kNull:
		return 0
	case kMax:
		return 2
	}
	return 1
}

// isInt reports whether k is one of the integer kinds.
func (k kkind) isInt() bool { return k == kInt || k == kUint }

// compareKV orders two values of key column c, a's bytes being as and b's
// bs (resolved by the caller). It returns 2 when the values cannot be
// compared (a string against an integer).
func compareKV(c *keyCol, a kval, as []byte, b kval, bs []byte) int {
	if ra, rb := a.kind.rank(), b.kind.rank(); ra != rb || ra != 1 {
		return cmp.Compare(ra, rb)
	}
	switch {
	case a.kind.isInt() && b.kind.isInt():
		return compareInts(a.kind, a.i, b.kind, b.i)
	case a.kind != b.kind:
		return 2
	case a.kind == kDate || a.kind == kTime:
		return cmp.Compare(a.i, b.i)
	case a.kind == kDec:
		da, oka := obpart.DecimalFromBytes(as)
		db, okb := obpart.DecimalFromBytes(bs)
		if !oka || !okb {
			return 2
		}
		return da.Compare(&db)
	}
	return c.coll.Compare(as, bs)
}

// formatKV writes a DATE, DATETIME/TIMESTAMP (UTC) or DECIMAL key value as
// text; b holds its bytes (a decimal's, of scale scale).
func formatKV(v *kval, b []byte, scale int) string {
	switch v.kind {
	case kDate:
		return time.UnixMicro(v.i * usecPerDay).UTC().Format("2006-01-02")
	case kTime:
		return time.UnixMicro(v.i).UTC().Format("2006-01-02 15:04:05.999999")
	case kDec:
		d, ok := obpart.DecimalFromBytes(b)
		if !ok {
			return "?"
		}
		return d.Text(scale)
	}
	return ""
}
