package route

import (
	"math"
	"strconv"
)

// ValueKind is the kind of a Value.
type ValueKind uint8

// Value kinds.
const (
	ValUnknown ValueKind = iota // a value obgate does not read (an expression, a float, a date...)
	ValNull
	ValInt    // Int
	ValUint   // Int holds the bit pattern of an unsigned value
	ValString // Str; a DECIMAL is its text
	// ValTime is a binary-protocol DATE, DATETIME or TIMESTAMP parameter:
	// Int is its wall-clock microseconds since 1970-01-01 00:00:00.
	ValTime
)

// Value is a statement value: a literal of the text or a placeholder's
// parameter. Str is borrowed from whatever the value was read from (the
// statement, an execute payload) and valid only as long as that is.
type Value struct {
	Kind ValueKind
	Int  int64
	Str  []byte
	// hex marks a hexadecimal or bit literal (0x41, X'41', b'1'): a number
	// in numeric context and bytes in string context, and obgate reads it
	// only in the context it was read for.
	hex bool
}

// Params gives a statement's placeholder values: Param(i) is the value
// of the i-th '?' of the text, counting from 0. Calculate calls it
// through the interface, so the value behind it escapes: keep it in
// long-lived state, such as the session.
type Params interface {
	Param(i int) (Value, bool)
}

// castInt converts v for an integer key column (unsigned when unsigned):
// integers that fit, strings holding an integer (blanks around it
// allowed), NULL. It reports false when OceanBase would not compare the
// column with v as that integer.
func castInt(v Value, unsigned bool) (kval, bool) {
	switch v.Kind {
	case ValNull:
		return kval{kind: kNull}, true
	case ValInt:
		if unsigned {
			if v.Int < 0 {
				return kval{}, false
			}
			return kval{kind: kUint, i: v.Int}, true
		}
		return kval{kind: kInt, i: v.Int}, true
	case ValUint:
		if unsigned {
			return kval{kind: kUint, i: v.Int}, true
		}
		if uint64(v.Int) > math.MaxInt64 {
			return kval{}, false
		}
		return kval{kind: kInt, i: v.Int}, true
	case ValString:
		if v.hex {
			return kval{}, false
		}
		return parseIntText(trimBlanks(v.Str), unsigned)
	}
	return kval{}, false
}

// parseIntText reads an optionally signed decimal integer.
func parseIntText(b []byte, unsigned bool) (kval, bool) {
	neg := false
	if len(b) > 0 && (b[0] == '-' || b[0] == '+') {
		neg = b[0] == '-'
		b = b[1:]
	}
	u, ok := parseDecimal(b, math.MaxUint64)
	switch {
	case !ok:
		return kval{}, false
	case unsigned:
		if neg && u != 0 {
			return kval{}, false
		}
		return kval{kind: kUint, i: int64(u)}, true
	case neg:
		if u > 1<<63 {
			return kval{}, false
		}
		return kval{kind: kInt, i: int64(-u)}, true
	case u > math.MaxInt64:
		return kval{}, false
	}
	return kval{kind: kInt, i: int64(u)}, true
}

// formatInt writes v (unsigned when u) in decimal into buf and returns
// the written part.
func formatInt(buf []byte, v int64, u bool) []byte {
	if u {
		return strconv.AppendUint(buf[:0], uint64(v), 10)
	}
	return strconv.AppendInt(buf[:0], v, 10)
}
