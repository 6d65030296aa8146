package route

import (
	"time"

	"obgate/internal/obpart"
)

// cast converts a value read from the statement to key column c as
// OceanBase casts it before calculating the partition: a string holding
// an integer for an integer column, an integer's decimal text for a string
// column, a date or datetime literal for a temporal column (a TIMESTAMP
// read in the session's time zone), a decimal text or an integer for a
// DECIMAL column. It reports false when the value does not fit or obgate
// cannot tell how the server would cast it (then no partition is computed
// from it).
func (st *calcState) cast(l *lit, c *keyCol) (kval, bool) {
	v := &l.v
	if v.Kind == ValNull {
		return kval{kind: kNull}, true
	}
	switch c.class {
	case classInt, classUint:
		if v.Kind == ValString && l.inArena {
			return castInt(Value{Kind: ValString, Str: st.litBytes(l), hex: v.hex}, c.class == classUint)
		}
		return castInt(*v, c.class == classUint)
	case classStr:
		switch v.Kind {
		case ValString:
			if l.inArena {
				return kval{kind: kStr, arena: true, i: int64(l.aoff), n: int32(l.alen)}, true
			}
			return kval{kind: kStr, s: v.Str}, true
		case ValInt, ValUint:
			if v.hex {
				return kval{}, false
			}
			var buf [20]byte
			text := formatInt(buf[:], v.Int, v.Kind == ValUint)
			off := st.arenaPut(text)
			if off < 0 {
				return kval{}, false
			}
			return kval{kind: kStr, arena: true, i: int64(off), n: int32(len(text))}, true
		}
	case classDate:
		switch {
		case v.Kind == ValTime && v.Int%usecPerDay == 0:
			return kval{kind: kDate, i: floorDiv(v.Int, usecPerDay)}, true
		case v.Kind == ValString && !v.hex:
			if d, ok := obpart.ParseDate(st.litBytes(l)); ok {
				return kval{kind: kDate, i: int64(d)}, true
			}
		}
	case classDatetime, classTimestamp:
		var us int64
		switch {
		case v.Kind == ValTime && fitsScale(v.Int, c.scale):
			us = v.Int
		case v.Kind == ValString && !v.hex:
			var ok bool
			if us, ok = obpart.ParseDatetime(st.litBytes(l), c.scale); !ok {
				return kval{}, false
			}
		default:
			return kval{}, false
		}
		ok := true
		if c.class == classTimestamp {
			if us, ok = st.toUTC(us); !ok {
				return kval{}, false
			}
		}
		return kval{kind: kTime, i: us}, true
	case classDecimal:
		var d obpart.Decimal
		ok := false
		switch {
		case v.hex:
		case v.Kind == ValString:
			d, ok = obpart.ParseDecimal(st.litBytes(l), c.prec, c.scale)
		case v.Kind == ValInt || v.Kind == ValUint:
			d, ok = obpart.DecimalFromInt(v.Int, v.Kind == ValUint, c.prec, c.scale)
		}
		if !ok {
			return kval{}, false
		}
		off := st.arenaPut(d[:])
		if off < 0 {
			return kval{}, false
		}
		return kval{kind: kDec, arena: true, i: int64(off), n: int32(len(d))}, true
	}
	return kval{}, false
}

// fitsScale reports whether microseconds us need no more than scale
// fraction digits (a DATETIME(scale) would round the rest).
func fitsScale(us int64, scale int) bool {
	if scale >= 6 {
		return true
	}
	unit := int64(1000000)
	for range max(scale, 0) {
		unit /= 10
	}
	return us%unit == 0
}

// litBytes returns the bytes of a string literal.
func (st *calcState) litBytes(l *lit) []byte {
	if l.inArena {
		return st.arena[l.aoff : l.aoff+l.alen]
	}
	return l.v.Str
}

// toUTC converts a wall-clock time in microseconds since 1970-01-01
// 00:00:00 to UTC in the session's time zone, as the server stores a
// TIMESTAMP. Without a known time zone it reports false.
func (st *calcState) toUTC(us int64) (int64, bool) {
	if st.tz == nil {
		return 0, false
	}
	wall := time.UnixMicro(us).UTC()
	y, mo, d := wall.Date()
	h, mi, s := wall.Clock()
	return time.Date(y, mo, d, h, mi, s, wall.Nanosecond(), st.tz).UnixMicro(), true
}

// castFailure is why a value could not be cast to key column ci.
func (st *calcState) castFailure(ci int) string {
	if st.d.cols[ci].class == classTimestamp && st.tz == nil {
		return HowNoTimeZone
	}
	return HowBadValue
}
