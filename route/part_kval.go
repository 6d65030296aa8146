package route

import "obgate/mysqlproto"

// kval is a partition key value as the calculation compares and hashes
// it: a value already cast to its key column, or a partition bound.
type kval struct {
	kind kkind
	// arena: the string lies in the calculation's scratch buffer at
	// [i, i+n) instead of in s (offsets, so that the scratch buffer is not
	// pointed into and the calculation stays on the stack).
	arena bool
	n     int32
	i     int64 // kInt, kUint (bit pattern)
	s     []byte
}

type kkind uint8

const (
	kNull kkind = iota
	kInt
	kUint
	kStr
	kMax // MAXVALUE: above every value (RANGE bounds, the LIST DEFAULT marker)
)

// colClass is how a key column's values are compared and hashed.
type colClass uint8

const (
	classNone colClass = iota // a type obgate does not compute partitions for
	classInt
	classUint
	classCI  // utf8mb4_general_ci (and utf8_general_ci) string
	classBin // binary-collated string
)

// classOf returns the class of a key column of type t and collation coll.
func classOf(t mysqlproto.OBObjType, coll int64) colClass {
	switch {
	case t.IsUnsigned():
		return classUint
	case t.IsInt():
		return classInt
	case t.IsString():
		switch coll {
		case mysqlproto.OBCollationUTF8MB4, 33: // utf8mb4_general_ci, utf8_general_ci
			return classCI
		case mysqlproto.OBCollationBinary, 46, 83: // binary, utf8mb4_bin, utf8_bin
			return classBin
		}
	}
	return classNone
}

// compareInts orders two integer values of kinds kInt or kUint.
func compareInts(ak kkind, a int64, bk kkind, b int64) int {
	switch {
	case ak == bk && ak == kUint:
		return cmpU(uint64(a), uint64(b))
	case ak == bk:
		return cmpI(a, b)
	case ak == kUint: // b signed
		if b < 0 || uint64(a) > uint64(b) {
			return 1
		}
		return cmpU(uint64(a), uint64(b))
	default: // a signed, b unsigned
		if a < 0 || uint64(a) < uint64(b) {
			return -1
		}
		return cmpU(uint64(a), uint64(b))
	}
}

func cmpI(a, b int64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

func cmpU(a, b uint64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
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

// compareKV orders two values of one key column of class c, a's string
// bytes being as and b's bs (resolved by the caller). It returns 2 when
// the values cannot be compared (a string against an integer).
func compareKV(c colClass, a kval, as []byte, b kval, bs []byte) int {
	if ra, rb := a.kind.rank(), b.kind.rank(); ra != rb || ra != 1 {
		return cmpI(int64(ra), int64(rb))
	}
	aStr, bStr := a.kind == kStr, b.kind == kStr
	switch {
	case aStr != bStr:
		return 2
	case !aStr:
		return compareInts(a.kind, a.i, b.kind, b.i)
	case c == classBin:
		return compareBin(as, bs)
	}
	return compareCI(as, bs)
}
