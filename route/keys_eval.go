package route

import (
	"strconv"
	"strings"
)

// evalNow evaluates the conditions read so far as one set of key values
// and folds the outcome into the tally.
func (st *calcState) evalNow() {
	st.tally.add(st.evalConds())
	if st.explain {
		st.explainConds()
	}
}

// evalConds evaluates st.cond at both levels.
func (st *calcState) evalConds() eval {
	d := st.d
	e := eval{part: idxUnknown, sub: idxUnknown}
	if st.fixed >= 0 {
		e.part = st.fixed
	} else {
		e.part, e.oor, e.how = st.evalLevel(&d.first)
	}
	if d.level == 1 || e.part < 0 {
		return e
	}
	if e.oor { // ODP: out of range is partition 0, sub-partition 0
		e.sub = 0
		return e
	}
	var oor bool
	e.sub, oor, e.how = st.evalLevel(&d.subs[e.part])
	e.oor = e.oor || oor
	return e
}

// evalLevel finds the partition of level l the conditions select: an
// index, idxSeveral, or idxUnknown with the reason.
func (st *calcState) evalLevel(l *levelDesc) (int, bool, string) {
	if l.n == 1 {
		return 0, false, ""
	}
	if !l.usable {
		return idxUnknown, false, l.why
	}
	combos := 1
	for _, ci := range l.cols {
		c := &st.cond.col[ci]
		switch {
		case !c.eq:
			if l.fn.isRange() {
				return st.evalRange(l)
			}
			if c.why != "" {
				return idxUnknown, false, c.why
			}
			return idxUnknown, false, HowNoKey
		case c.eqN == 0:
			return idxUnknown, false, HowEmpty
		}
		if combos *= int(c.eqN); combos > maxCombos {
			return idxUnknown, false, HowTooMany
		}
	}
	return st.evalCombos(l)
}

// evalCombos locates every combination of the equality values of l's
// columns.
func (st *calcState) evalCombos(l *levelDesc) (int, bool, string) {
	var pick [maxKeyCols]int
	var key [maxKeyCols]kval
	nc := len(l.cols)
	res, oor := idxUnknown, false
	for {
		for i, ci := range l.cols {
			key[i] = st.pool[int(st.cond.col[ci].eqOff)+pick[i]]
		}
		p, ls := st.d.locate(l, key[:nc], st.arena[:])
		switch ls {
		case locBad:
			return idxUnknown, false, HowKeyType
		case locOutOfRange:
			p, oor = 0, true
		}
		switch {
		case res == idxUnknown:
			res = p
		case res != p:
			return idxSeveral, false, ""
		}
		i := 0
		for ; i < nc; i++ {
			if pick[i]++; pick[i] < int(st.cond.col[l.cols[i]].eqN) {
				break
			}
			pick[i] = 0
		}
		if i == nc {
			return res, oor, ""
		}
	}
}

// evalRange finds the RANGE partitions between the lowest and the highest
// key the conditions allow: equalities on a prefix of the columns, then a
// range on the next one.
func (st *calcState) evalRange(l *levelDesc) (int, bool, string) {
	var key [maxKeyCols]kval
	arena := st.arena[:]
	nc, p := len(l.cols), 0
	for ; p < nc; p++ {
		c := &st.cond.col[l.cols[p]]
		if !c.eq || c.eqN != 1 {
			break
		}
		key[p] = st.pool[c.eqOff]
	}
	c := &st.cond.col[l.cols[p]]
	if p == 0 && !c.hasLo && !c.hasHi {
		if c.why != "" {
			return idxUnknown, false, c.why
		}
		return idxUnknown, false, HowNoKey
	}
	if c.hasLo && c.hasHi {
		r := compareKV(&st.d.cols[l.cols[p]], c.lo, st.bytesOf(&c.lo), c.hi, st.bytesOf(&c.hi))
		if r > 0 || (r == 0 && !(c.loInc && c.hiInc)) {
			return idxUnknown, false, HowEmpty
		}
	}
	// A full tuple's inclusive bound is the point itself; a prefix's
	// covers every tuple starting with it. A level that partitions by a
	// function of its column takes both bounds as inclusive: the functions
	// never decrease, but keys just above a bound may give the bound's own
	// value (YEAR of any day of a year), so the function's values lie
	// between those of the bounds, both included.
	full := p+1 == nc
	loInc, hiInc := c.loInc || l.fx != fxNone, c.hiInc || l.fx != fxNone
	lo, hi := 0, l.n-1
	var ls locateStatus
	switch {
	case c.hasLo:
		key[p] = c.lo
		tail := 1
		if loInc {
			tail = -1
			if full {
				tail = 0
			}
		}
		lo, ls = st.d.rangeOf(l, key[:p+1], tail, arena)
	case p > 0:
		lo, ls = st.d.rangeOf(l, key[:p], -1, arena)
	}
	switch ls {
	case locBad:
		return idxUnknown, false, HowKeyType
	case locOutOfRange: // every allowed key lies above the last bound
		return 0, true, ""
	}
	ls = locFound
	switch {
	case c.hasHi:
		key[p] = c.hi
		tail := -1
		if hiInc {
			tail = 1
			if full {
				tail = 0
			}
		}
		hi, ls = st.d.rangeOf(l, key[:p+1], tail, arena)
	case p > 0:
		hi, ls = st.d.rangeOf(l, key[:p], 1, arena)
	}
	switch ls {
	case locBad:
		return idxUnknown, false, HowKeyType
	case locOutOfRange:
		hi = l.n - 1
	}
	switch {
	case lo == hi:
		return lo, false, ""
	case lo > hi:
		return idxUnknown, false, HowEmpty
	}
	return idxSeveral, false, ""
}

// explainConds appends the key values of st.cond to st.keys as text.
func (st *calcState) explainConds() {
	const maxExplain = 32
	for ci := range st.d.nkeys() {
		if len(st.keys) >= maxExplain {
			return
		}
		c := &st.cond.col[ci]
		col := &st.d.cols[ci]
		var b strings.Builder
		b.WriteString(col.name)
		switch {
		case c.eq && c.eqN == 1:
			b.WriteByte('=')
			st.writeKV(&b, col, &st.pool[c.eqOff])
		case c.eq:
			b.WriteString(" IN (")
			for i := int(c.eqOff); i < int(c.eqOff)+int(c.eqN); i++ {
				if i > int(c.eqOff) {
					b.WriteByte(',')
				}
				st.writeKV(&b, col, &st.pool[i])
			}
			b.WriteByte(')')
		case c.hasLo || c.hasHi:
			b.WriteString(" IN ")
			switch {
			case !c.hasLo:
				b.WriteString("(-inf")
			case c.loInc:
				b.WriteByte('[')
				st.writeKV(&b, col, &c.lo)
			default:
				b.WriteByte('(')
				st.writeKV(&b, col, &c.lo)
			}
			b.WriteByte(',')
			switch {
			case !c.hasHi:
				b.WriteString("+inf)")
			case c.hiInc:
				st.writeKV(&b, col, &c.hi)
				b.WriteByte(']')
			default:
				st.writeKV(&b, col, &c.hi)
				b.WriteByte(')')
			}
		default:
			continue
		}
		st.keys = append(st.keys, b.String())
	}
}

// writeKV writes a key value as a SQL literal.
func (st *calcState) writeKV(b *strings.Builder, col *keyCol, v *kval) {
	switch v.kind {
	case kNull:
		b.WriteString("NULL")
	case kInt:
		b.WriteString(strconv.FormatInt(v.i, 10))
	case kUint:
		b.WriteString(strconv.FormatUint(uint64(v.i), 10))
	case kStr:
		b.WriteByte('\'')
		b.WriteString(strings.ReplaceAll(string(st.bytesOf(v)), "'", "''"))
		b.WriteByte('\'')
	case kDate, kTime, kDec:
		b.WriteByte('\'')
		b.WriteString(formatKV(v, st.bytesOf(v), col.scale))
		b.WriteByte('\'')
	default:
		b.WriteString("MAXVALUE")
	}
}
