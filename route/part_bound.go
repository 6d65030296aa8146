package route

import (
	"fmt"
	"sort"

	"obgate/mysqlproto"
)

// buildLevel fills l for partitions whose high_bound_val_bin are bounds
// (in partition-id order) and returns the partition order as indexes into
// bounds: ascending bounds for RANGE, the given order otherwise.
func (d *PartDesc) buildLevel(l *levelDesc, fn PartFunc, cols []int, bounds [][]byte) ([]int, error) {
	*l = levelDesc{fn: fn, cols: cols, n: len(bounds), def: -1, usable: true}
	for _, c := range cols {
		if d.cols[c].class == classNone || c >= maxKeyCols {
			l.usable = false
		}
	}
	if (fn == PartFuncHash || fn == PartFuncRange || fn == PartFuncList) && len(cols) != 1 {
		return nil, fmt.Errorf("%v partitioning with %d key columns", fn, len(cols))
	}
	order := make([]int, len(bounds))
	for i := range order {
		order[i] = i
	}
	switch {
	case fn.isRange():
		tuples := make([][]kval, len(bounds))
		for i, b := range bounds {
			t, err := d.readBound(b, cols, true)
			if err != nil {
				return nil, fmt.Errorf("RANGE partition %d: %w", i, err)
			}
			tuples[i] = t
		}
		var bad error
		sort.SliceStable(order, func(a, b int) bool {
			c := d.compareTuples(cols, tuples[order[a]], tuples[order[b]])
			if c == 2 {
				bad = fmt.Errorf("RANGE bounds of different types")
			}
			return c < 0
		})
		if bad != nil {
			return nil, bad
		}
		for i, j := range order {
			if i > 0 && d.compareTuples(cols, tuples[order[i-1]], tuples[j]) == 0 {
				return nil, fmt.Errorf("two RANGE partitions with one bound")
			}
			l.bounds = append(l.bounds, tuples[j]...)
		}
	case fn.isList():
		for i, b := range bounds {
			if err := d.readList(l, i, b, cols); err != nil {
				return nil, fmt.Errorf("LIST partition %d: %w", i, err)
			}
		}
	}
	return order, nil
}

// compareTuples compares two bound tuples of the columns cols.
func (d *PartDesc) compareTuples(cols []int, a, b []kval) int {
	for i, c := range cols {
		if r := compareKV(d.cols[c].class, a[i], a[i].s, b[i], b[i].s); r != 0 {
			return r
		}
	}
	return 0
}

// readBound decodes a RANGE bound: a rowkey of one value per key column.
func (d *PartDesc) readBound(b []byte, cols []int, isRange bool) ([]kval, error) {
	b = append([]byte(nil), b...) // the values borrow from it
	objs, end, ok := mysqlproto.ReadOBRowkey(b, 0, nil, len(cols))
	if !ok || end != len(b) || len(objs) != len(cols) {
		return nil, fmt.Errorf("bad high_bound_val_bin (%d bytes)", len(b))
	}
	return d.boundValues(objs, cols, isRange)
}

// readList decodes a LIST partition's values (rows of one value per key
// column, or one MAXVALUE row for DEFAULT) into l as partition part.
func (d *PartDesc) readList(l *levelDesc, part int, b []byte, cols []int) error {
	b = append([]byte(nil), b...)
	if len(b) == 0 {
		return fmt.Errorf("no values")
	}
	for pos := 0; pos < len(b); {
		objs, next, ok := mysqlproto.ReadOBRow(b, pos, nil, len(cols))
		if !ok {
			return fmt.Errorf("bad high_bound_val_bin at byte %d", pos)
		}
		pos = next
		if len(objs) == 1 && objs[0].Meta.Type == mysqlproto.OBTypeExtend && objs[0].Int == mysqlproto.OBExtMaxValue {
			if l.def >= 0 && l.def != part {
				return fmt.Errorf("two DEFAULT partitions")
			}
			l.def = part
			continue
		}
		if len(objs) != len(cols) {
			return fmt.Errorf("%d values for %d key columns", len(objs), len(cols))
		}
		t, err := d.boundValues(objs, cols, false)
		if err != nil {
			return err
		}
		l.bounds = append(l.bounds, t...)
		l.listOf = append(l.listOf, part)
	}
	return nil
}

// boundValues converts decoded bound values of the columns cols.
func (d *PartDesc) boundValues(objs []mysqlproto.OBObj, cols []int, isRange bool) ([]kval, error) {
	out := make([]kval, len(objs))
	for i, o := range objs {
		class := d.cols[cols[i]].class
		t := o.Meta.Type
		switch {
		case t == mysqlproto.OBTypeExtend && o.Int == mysqlproto.OBExtMaxValue && isRange:
			out[i] = kval{kind: kMax}
		case t == mysqlproto.OBTypeNull && !isRange:
			out[i] = kval{kind: kNull}
		case t.IsUnsigned() && (class == classInt || class == classUint || class == classNone):
			out[i] = kval{kind: kUint, i: o.Int}
		case t.IsInt() && (class == classInt || class == classUint || class == classNone):
			out[i] = kval{kind: kInt, i: o.Int}
		case t.IsString() && (class == classCI || class == classBin || class == classNone):
			out[i] = kval{kind: kStr, s: o.Bytes}
		default:
			return nil, fmt.Errorf("bound value of type %d for key %s", t, d.cols[cols[i]].name)
		}
	}
	return out, nil
}
