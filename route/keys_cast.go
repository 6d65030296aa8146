package route

// cast converts a value read from the statement to key column c as
// OceanBase casts it before calculating the partition: a string holding
// an integer for an integer column, an integer's decimal text for a string
// column. It reports false when the value does not fit (then no partition
// is computed from it).
func (st *calcState) cast(l *lit, c *keyCol) (kval, bool) {
	v := &l.v
	switch c.class {
	case classInt, classUint:
		if v.Kind == ValString && l.inArena {
			return castInt(Value{Kind: ValString, Str: st.arena[l.aoff : l.aoff+l.alen], hex: v.hex}, c.class == classUint)
		}
		return castInt(*v, c.class == classUint)
	case classCI, classBin:
		switch v.Kind {
		case ValNull:
			return kval{kind: kNull}, true
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
	}
	return kval{}, false
}
