package route

import (
	"fmt"
	"sort"

	"obgate/internal/obpart"
	"obgate/mysqlproto"
)

// buildLevel fills l for partitions whose high_bound_val_bin are bounds
// (in the order the server listed them) and returns the partition order
// as indexes into bounds: ascending bounds for RANGE, the given order
// otherwise (for HASH and KEY the server's order is the partition index).
func (d *PartDesc) buildLevel(l *levelDesc, fn PartFunc, le levelExpr, bounds [][]byte) ([]int, error) {
	cols := le.cols
	*l = levelDesc{fn: fn, cols: cols, n: len(bounds), fx: le.fx, def: -1, usable: le.why == "", why: le.why}
	for _, c := range cols {
		if d.cols[c].class == classNone || c >= maxKeyCols {
			l.usable = false
			if l.why == "" {
				l.why = HowKeyType
			}
		}
	}
	if fn.takesExpr() && len(cols) != 1 && le.why == "" {
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
			t, err := d.readBound(b, fn, cols)
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
			if err := d.readList(l, i, b, fn, cols); err != nil {
				return nil, fmt.Errorf("LIST partition %d: %w", i, err)
			}
		}
	}
	return order, nil
}

// compareTuples compares two bound tuples of the columns cols.
func (d *PartDesc) compareTuples(cols []int, a, b []kval) int {
	for i, c := range cols {
		if r := compareKV(&d.cols[c], a[i], a[i].s, b[i], b[i].s); r != 0 {
			return r
		}
	}
	return 0
}

// readBound decodes a RANGE bound: a rowkey of one value per key column.
func (d *PartDesc) readBound(b []byte, fn PartFunc, cols []int) ([]kval, error) {
	b = append([]byte(nil), b...) // the values borrow from it
	objs, end, ok := mysqlproto.ReadOBRowkey(b, 0, nil, len(cols))
	if !ok || end != len(b) || len(objs) != len(cols) {
		return nil, fmt.Errorf("bad high_bound_val_bin (%d bytes)", len(b))
	}
	return d.boundValues(objs, fn, cols, true)
}

// readList decodes a LIST partition's values (rows of one value per key
// column, or one MAXVALUE row for DEFAULT) into l as partition part.
func (d *PartDesc) readList(l *levelDesc, part int, b []byte, fn PartFunc, cols []int) error {
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
		t, err := d.boundValues(objs, fn, cols, false)
		if err != nil {
			return err
		}
		l.bounds = append(l.bounds, t...)
		l.listOf = append(l.listOf, part)
	}
	return nil
}

// boundValues converts decoded bound values of the columns cols of a
// level of function fn. The bounds of RANGE and LIST (without COLUMNS)
// are values of the partitioning expression, integers; those of RANGE and
// LIST COLUMNS are of the columns' types.
func (d *PartDesc) boundValues(objs []mysqlproto.OBObj, fn PartFunc, cols []int, isRange bool) ([]kval, error) {
	out := make([]kval, len(objs))
	for i, o := range objs {
		col := &d.cols[cols[i]]
		class := col.class
		if fn.takesExpr() {
			class = classInt
		}
		t := o.Meta.Type
		anyType := class == classNone // values of a level obgate does not compute: kept, never compared
		switch {
		case t == mysqlproto.OBTypeExtend && o.Int == mysqlproto.OBExtMaxValue && isRange:
			out[i] = kval{kind: kMax}
		case t == mysqlproto.OBTypeNull && !isRange:
			out[i] = kval{kind: kNull}
		case t.IsUnsigned() && (class == classInt || class == classUint || anyType):
			out[i] = kval{kind: kUint, i: o.Int}
		case t.IsInt() && (class == classInt || class == classUint || anyType):
			out[i] = kval{kind: kInt, i: o.Int}
		case t.IsString() && (class == classStr || anyType):
			out[i] = kval{kind: kStr, s: o.Bytes}
		case t == mysqlproto.OBTypeDate && (class == classDate || anyType):
			out[i] = kval{kind: kDate, i: o.Int}
		case (t == mysqlproto.OBTypeDatetime && (class == classDatetime || anyType)) ||
			(t == mysqlproto.OBTypeTimestamp && (class == classTimestamp || anyType)):
			out[i] = kval{kind: kTime, i: o.Int}
		case t == mysqlproto.OBTypeDecimalInt && (class == classDecimal || anyType):
			dec, ok := obpart.DecimalFromBytes(o.Bytes)
			if !ok || (class == classDecimal && int(o.Meta.Scale) != col.scale) {
				return nil, fmt.Errorf("DECIMAL bound of scale %d for key %s of scale %d", o.Meta.Scale, col.name, col.scale)
			}
			out[i] = kval{kind: kDec, s: dec[:]}
		default:
			return nil, fmt.Errorf("bound value of type %d for key %s", t, col.name)
		}
	}
	return out, nil
}
