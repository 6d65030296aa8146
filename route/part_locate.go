package route

import "obgate/internal/obpart"

// Locating key values in one partitioning level. Key tuples hold one value
// per column of the level, already cast to the column; string values may
// lie in the calculation's scratch buffer, passed as arena.

// locateStatus is how a key tuple fell.
type locateStatus uint8

const (
	locFound      locateStatus = iota
	locOutOfRange              // no partition holds it (RANGE above the last bound, LIST without DEFAULT)
	locBad                     // the values do not suit the level (never for values cast to its columns)
)

// bytesOf returns the bytes of a string value.
func (v *kval) bytesOf(arena []byte) []byte {
	if v.arena {
		return arena[v.i : v.i+int64(v.n)]
	}
	return v.s
}

// locate returns the partition of the key tuple key (one value per column
// of l).
func (d *PartDesc) locate(l *levelDesc, key []kval, arena []byte) (int, locateStatus) {
	switch {
	case l.fn == PartFuncHash:
		v := l.fx.apply(key[0])
		switch v.kind {
		case kNull:
			return 0, locFound
		case kInt, kUint:
			return obpart.HashPart(v.i, l.n), locFound
		}
		return 0, locBad
	case l.fn.hashLike():
		var h uint64
		for i, c := range l.cols {
			var ok bool
			if h, ok = keyHash(&d.cols[c], &key[i], arena, h); !ok {
				return 0, locBad
			}
		}
		return obpart.KeyPart(h, l.n), locFound
	case l.fn.isRange():
		return d.rangeOf(l, key, 0, arena)
	}
	return d.listOf(l, key, arena)
}

// rangeOf returns the RANGE partition holding key followed by tail: key
// may be a prefix of the level's columns (len(key) < len(l.cols)) and
// tail says where the point lies among the tuples starting with key (or,
// for a full tuple, around it): -1 just below all of them, +1 just above,
// 0 exactly at key (a full tuple). It is the first partition whose bound
// is above the point.
func (d *PartDesc) rangeOf(l *levelDesc, key []kval, tail int, arena []byte) (int, locateStatus) {
	nc := len(l.cols)
	lo, hi := 0, l.n
	for lo < hi {
		m := int(uint(lo+hi) >> 1)
		c := d.comparePoint(l, key, tail, l.bounds[m*nc:(m+1)*nc], arena)
		if c == 2 {
			return 0, locBad
		}
		if c < 0 {
			hi = m
		} else {
			lo = m + 1
		}
	}
	if lo == l.n {
		return 0, locOutOfRange
	}
	return lo, locFound
}

// comparePoint compares the point key⊕tail with the bound tuple b. Just
// above the tuples starting with a prefix is still below a bound that
// continues with MAXVALUE.
func (d *PartDesc) comparePoint(l *levelDesc, key []kval, tail int, b []kval, arena []byte) int {
	for i := range key {
		k := l.fx.apply(key[i])
		if c := compareKV(&d.cols[l.cols[i]], k, k.bytesOf(arena), b[i], b[i].s); c != 0 {
			return c
		}
	}
	if tail > 0 && len(key) < len(b) && b[len(key)].kind == kMax {
		return -1
	}
	return tail
}

// listOf returns the LIST partition listing key, or the DEFAULT one.
func (d *PartDesc) listOf(l *levelDesc, key []kval, arena []byte) (int, locateStatus) {
	nc := len(l.cols)
	for t, p := range l.listOf {
		b := l.bounds[t*nc : (t+1)*nc]
		if d.comparePoint(l, key, 0, b, arena) == 0 {
			return p, locFound
		}
	}
	if l.def >= 0 {
		return l.def, locFound
	}
	return 0, locOutOfRange
}
