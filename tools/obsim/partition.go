package obsim

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"obgate/internal/obpart"
	"obgate/mysqlproto"
)

// Partition calculation as OceanBase 4.x does it in MySQL mode (see hash.go
// for the hash functions).

// partFunc is OceanBase's partition function type (ObPartitionFuncType,
// 4.x numbering), as reported in __all_virtual_proxy_partition_info.
type partFunc int

const (
	partHash         partFunc = 0
	partKey          partFunc = 1
	partKeyImplicit  partFunc = 2
	partRange        partFunc = 3
	partRangeColumns partFunc = 4
	partList         partFunc = 5
	partListColumns  partFunc = 6
)

func parsePartFunc(s string) (partFunc, error) {
	switch strings.Join(strings.Fields(strings.ToUpper(s)), " ") {
	case "HASH":
		return partHash, nil
	case "KEY":
		return partKey, nil
	case "RANGE":
		return partRange, nil
	case "RANGE COLUMNS", "RANGE_COLUMNS":
		return partRangeColumns, nil
	case "LIST":
		return partList, nil
	case "LIST COLUMNS", "LIST_COLUMNS":
		return partListColumns, nil
	}
	return 0, fmt.Errorf("unknown partition type %q", s)
}

func (f partFunc) String() string {
	return [...]string{"HASH", "KEY", "KEY", "RANGE", "RANGE COLUMNS", "LIST", "LIST COLUMNS"}[f]
}

func (f partFunc) hashLike() bool { return f == partHash || f == partKey || f == partKeyImplicit }

// colClass is how obsim treats a column's values.
type colClass uint8

const (
	colOther colClass = iota // not usable as a computed partition key
	colInt
	colUint
	colString // column.coll says how it compares and hashes
	colDate
	colDatetime
	colTimestamp
	colDecimal
)

// column is a table column as MariaDB reports it.
type column struct {
	name      string // lower case
	ordinal   int    // 0-based position
	class     colClass
	obType    mysqlproto.OBObjType // ObObjType number for the views
	obTypeNum int                  // the same for types outside OBObjType's list
	collation int                  // OceanBase collation id
	coll      obpart.Coll          // colString: the collation's rules
	length    int64
	precision int64
	scale     int64 // DECIMAL scale; DATETIME and TIMESTAMP fraction digits
}

// columnFromInfoSchema maps an information_schema.COLUMNS row. A DECIMAL
// is reported as OceanBase 4.2 and later hold it (ObDecimalIntType).
func columnFromInfoSchema(name string, ordinal int, dataType, columnType, collation string, charLen, numPrec, numScale, fsp int64) column {
	c := column{name: strings.ToLower(name), ordinal: ordinal, length: charLen, precision: numPrec, scale: numScale,
		collation: mysqlproto.OBCollationBinary}
	unsigned := strings.Contains(strings.ToLower(columnType), "unsigned")
	ints := map[string]int{"tinyint": 1, "smallint": 2, "mediumint": 3, "int": 4, "integer": 4, "bigint": 5}
	if n, ok := ints[strings.ToLower(dataType)]; ok {
		c.class = colInt
		if unsigned {
			c.class = colUint
			n += 5
		}
		c.obTypeNum = n
		c.obType = mysqlproto.OBObjType(n)
		return c
	}
	switch strings.ToLower(dataType) {
	case "varchar", "char", "varbinary", "binary":
		c.class = colString
		c.obTypeNum = 22
		if strings.EqualFold(dataType, "char") || strings.EqualFold(dataType, "binary") {
			c.obTypeNum = 23
		}
		c.obType = mysqlproto.OBObjType(c.obTypeNum)
		c.collation = mysqlproto.OBCollationUTF8MB4
		lc := strings.ToLower(collation)
		switch {
		case lc == "" || lc == "binary":
			c.collation = obpart.IDBinary
		case strings.HasSuffix(lc, "_bin"):
			c.collation = obpart.IDPadBin
		}
		c.coll = obpart.CollOf(int64(c.collation))
		return c
	case "date":
		c.class, c.obType = colDate, mysqlproto.OBTypeDate
	case "datetime":
		c.class, c.obType, c.scale = colDatetime, mysqlproto.OBTypeDatetime, fsp
	case "timestamp":
		c.class, c.obType, c.scale = colTimestamp, mysqlproto.OBTypeTimestamp, fsp
	case "decimal":
		c.class, c.obType = colDecimal, mysqlproto.OBTypeDecimalInt
	}
	if c.class != colOther {
		c.obTypeNum = int(c.obType)
		return c
	}
	c.obTypeNum = map[string]int{"float": 11, "double": 12, "time": 20, "year": 21, "tinytext": 27, "text": 28,
		"mediumtext": 29, "longtext": 30, "bit": 31, "enum": 32, "set": 33}[strings.ToLower(dataType)]
	return c
}

// partLevel is one level of a table's partitioning.
type partLevel struct {
	fn    partFunc
	cols  []*column // the key columns, in the order of the partitioning expression
	expr  *partExpr // HASH, RANGE, LIST: an expression of the one column; nil for the bare column
	num   int
	names []string
	// ids are the first level's part_id values, by partition index.
	ids []int64
	// RANGE: one bound tuple per partition. LIST: per partition, its value
	// tuples; def is the index of the DEFAULT partition or -1. The values
	// are those of the expression when there is one.
	bounds [][]value
	lists  [][][]value
	def    int
}

// exprColumn is what a HASH, RANGE or LIST level with an expression
// compares: the expression's integer values.
var exprColumn = &column{name: "(expression)", class: colInt, obType: mysqlproto.OBTypeInt, obTypeNum: int(mysqlproto.OBTypeInt)}

// valueCols are the columns a level's bounds and key tuples are values of.
func (l *partLevel) valueCols() []*column {
	if l.expr != nil {
		return []*column{exprColumn}
	}
	return l.cols
}

// takesExpr reports whether f partitions by one value (HASH, RANGE, LIST)
// rather than by columns.
func (f partFunc) takesExpr() bool { return f == partHash || f == partRange || f == partList }

// buildLevel validates spec against the table's columns. Bounds written as
// TIMESTAMP literals are read in tz.
func buildLevel(spec *PartSpec, cols map[string]*column, sub bool, tz *time.Location) (*partLevel, error) {
	fn, err := parsePartFunc(spec.Type)
	if err != nil {
		return nil, err
	}
	l := &partLevel{fn: fn, def: -1}
	if len(spec.Columns) == 0 {
		return nil, fmt.Errorf("%s partitioning needs columns", fn)
	}
	for _, name := range spec.Columns {
		c, ok := cols[strings.ToLower(name)]
		if !ok {
			return nil, fmt.Errorf("partition column %q is not in the table", name)
		}
		l.cols = append(l.cols, c)
	}
	for _, c := range l.cols {
		if c.class == colOther {
			return nil, fmt.Errorf("column %s: only integer, string, DATE, DATETIME, TIMESTAMP and DECIMAL partition keys are supported", c.name)
		}
	}
	if spec.Expr != "" {
		if !fn.takesExpr() || len(l.cols) != 1 {
			return nil, fmt.Errorf("an expression needs HASH, RANGE or LIST over one column")
		}
		if l.expr, err = parsePartExpr(spec.Expr, l.cols[0]); err != nil {
			return nil, err
		}
	}
	if fn.takesExpr() && l.expr == nil && (len(l.cols) != 1 || (l.cols[0].class != colInt && l.cols[0].class != colUint)) {
		return nil, fmt.Errorf("%s partitioning takes one integer column or an expression (use KEY or %s COLUMNS)", fn, fn)
	}
	vcols := l.valueCols()
	prefix := "p"
	if sub {
		prefix = "sp"
	}
	switch {
	case fn.hashLike():
		if spec.Num <= 0 {
			return nil, fmt.Errorf("%s partitioning needs num > 0", fn)
		}
		if len(spec.Partitions) > 0 {
			return nil, fmt.Errorf("%s partitioning takes num, not partitions", fn)
		}
		l.num = spec.Num
		if len(spec.Names) > 0 && len(spec.Names) != spec.Num {
			return nil, fmt.Errorf("%d names for %d partitions", len(spec.Names), spec.Num)
		}
		for i := range spec.Num {
			if len(spec.Names) > 0 {
				l.names = append(l.names, spec.Names[i])
			} else {
				l.names = append(l.names, prefix+strconv.Itoa(i))
			}
		}
	case fn == partRange || fn == partRangeColumns:
		if len(spec.Partitions) == 0 {
			return nil, fmt.Errorf("RANGE partitioning needs partitions")
		}
		for i, d := range spec.Partitions {
			if len(d.LessThan) != len(vcols) {
				return nil, fmt.Errorf("partition %q: %d bound values for %d columns", d.Name, len(d.LessThan), len(vcols))
			}
			var tuple []value
			for j, lit := range d.LessThan {
				v, ok := parseLiteral(lit)
				if !ok || v.kind == valNull || v.kind == valDefault {
					return nil, fmt.Errorf("partition %q: bad bound %q", d.Name, lit)
				}
				if v.kind != valMax {
					if v, ok = castValue(v, vcols[j], tz); !ok {
						return nil, fmt.Errorf("partition %q: bound %q does not fit column %s", d.Name, lit, vcols[j].name)
					}
				}
				tuple = append(tuple, v)
			}
			if i > 0 && compareTuple(l.bounds[i-1], tuple, vcols) >= 0 {
				return nil, fmt.Errorf("partition %q: bounds must increase", d.Name)
			}
			l.bounds = append(l.bounds, tuple)
			l.names = append(l.names, partName(d.Name, prefix, i))
		}
		l.num = len(l.bounds)
	default: // LIST
		if len(spec.Partitions) == 0 {
			return nil, fmt.Errorf("LIST partitioning needs partitions")
		}
		for i, d := range spec.Partitions {
			var tuples [][]value
			for _, lits := range d.Values {
				if len(lits) == 1 && strings.EqualFold(strings.TrimSpace(lits[0]), "DEFAULT") {
					if l.def >= 0 {
						return nil, fmt.Errorf("two DEFAULT partitions")
					}
					l.def = i
					continue
				}
				if len(lits) != len(vcols) {
					return nil, fmt.Errorf("partition %q: %d values for %d columns", d.Name, len(lits), len(vcols))
				}
				var tuple []value
				for j, lit := range lits {
					v, ok := parseLiteral(lit)
					if ok && v.kind != valNull {
						v, ok = castValue(v, vcols[j], tz)
					}
					if !ok || v.kind == valMax || v.kind == valDefault {
						return nil, fmt.Errorf("partition %q: bad value %q", d.Name, lit)
					}
					tuple = append(tuple, v)
				}
				tuples = append(tuples, tuple)
			}
			if len(tuples) == 0 && l.def != i {
				return nil, fmt.Errorf("partition %q has no values", d.Name)
			}
			l.lists = append(l.lists, tuples)
			l.names = append(l.names, partName(d.Name, prefix, i))
		}
		l.num = len(l.lists)
	}
	if len(spec.PartIDs) > 0 {
		if sub || len(spec.PartIDs) != l.num {
			return nil, fmt.Errorf("part_ids: one per first-level partition (%d), not %d", l.num, len(spec.PartIDs))
		}
		seen := map[int64]bool{}
		for _, id := range spec.PartIDs {
			if seen[id] {
				return nil, fmt.Errorf("part_ids: %d twice", id)
			}
			seen[id] = true
		}
		l.ids = append([]int64(nil), spec.PartIDs...)
	} else {
		for i := range l.num {
			l.ids = append(l.ids, int64(i))
		}
	}
	return l, nil
}

func partName(name, prefix string, i int) string {
	if name != "" {
		return name
	}
	return prefix + strconv.Itoa(i)
}

// castValue converts a literal to a column's class as OceanBase casts key
// values before partitioning, a TIMESTAMP literal read in tz. It reports
// false when the value does not fit.
func castValue(v value, c *column, tz *time.Location) (value, bool) {
	if v.kind == valNull || v.kind == valMax {
		return v, true
	}
	switch c.class {
	case colInt:
		switch v.kind {
		case valInt:
			return v, true
		case valUint:
			if v.u <= math.MaxInt64 {
				return value{kind: valInt, i: int64(v.u)}, true
			}
		case valString:
			if n, err := strconv.ParseInt(strings.TrimSpace(v.s), 10, 64); err == nil {
				return value{kind: valInt, i: n}, true
			}
		}
	case colUint:
		switch v.kind {
		case valInt:
			if v.i >= 0 {
				return value{kind: valUint, u: uint64(v.i)}, true
			}
		case valUint:
			return v, true
		case valString:
			if n, err := strconv.ParseUint(strings.TrimSpace(v.s), 10, 64); err == nil {
				return value{kind: valUint, u: n}, true
			}
		}
	case colString:
		switch v.kind {
		case valInt:
			return value{kind: valString, s: strconv.FormatInt(v.i, 10)}, true
		case valUint:
			return value{kind: valString, s: strconv.FormatUint(v.u, 10)}, true
		case valString:
			return v, true
		}
	case colDate:
		if v.kind == valString {
			if d, ok := obpart.ParseDate([]byte(v.s)); ok {
				return value{kind: valDate, i: int64(d)}, true
			}
		}
	case colDatetime, colTimestamp:
		if v.kind != valString {
			return value{}, false
		}
		us, ok := obpart.ParseDatetime([]byte(v.s), int(c.scale))
		if !ok {
			return value{}, false
		}
		if c.class == colTimestamp {
			if tz == nil {
				return value{}, false
			}
			wall := time.UnixMicro(us).UTC()
			us = time.Date(wall.Year(), wall.Month(), wall.Day(), wall.Hour(), wall.Minute(), wall.Second(), wall.Nanosecond(), tz).UnixMicro()
		}
		return value{kind: valTime, i: us}, true
	case colDecimal:
		var d obpart.Decimal
		ok := false
		switch v.kind {
		case valString:
			d, ok = obpart.ParseDecimal([]byte(v.s), int(c.precision), int(c.scale))
		case valInt:
			d, ok = obpart.DecimalFromInt(v.i, false, int(c.precision), int(c.scale))
		case valUint:
			d, ok = obpart.DecimalFromInt(int64(v.u), true, int(c.precision), int(c.scale))
		}
		if ok {
			return value{kind: valDec, s: string(d[:]), u: uint64(c.scale)}, true
		}
	}
	return value{}, false
}

// compareValue orders two values of a column (both already cast). NULL
// sorts first and MAXVALUE last.
func compareValue(a, b value, c *column) int {
	rank := func(v value) int {
		switch v.kind {
		case valNull:
			return 0
		case valMax:
			return 2
		}
		return 1
	}
	if ra, rb := rank(a), rank(b); ra != rb || ra != 1 {
		return ra - rb
	}
	cmp := func(x, y int64) int {
		switch {
		case x < y:
			return -1
		case x > y:
			return 1
		}
		return 0
	}
	switch a.kind {
	case valInt, valDate, valTime:
		return cmp(a.i, b.i)
	case valUint:
		switch {
		case a.u < b.u:
			return -1
		case a.u > b.u:
			return 1
		}
		return 0
	case valDec:
		da, db := decimalOf(a), decimalOf(b)
		return da.Compare(&db)
	}
	return c.coll.Compare([]byte(a.s), []byte(b.s))
}

func compareTuple(a, b []value, cols []*column) int {
	for i := range a {
		if c := compareValue(a[i], b[i], cols[i]); c != 0 {
			return c
		}
	}
	return 0
}

// locate returns the partition index of a key tuple (values already cast
// to the columns, and evaluated by the expression when there is one), or
// false when no partition holds it.
func (l *partLevel) locate(key []value) (int, bool) {
	vcols := l.valueCols()
	switch l.fn {
	case partHash:
		v := key[0]
		var n int64
		switch v.kind {
		case valInt:
			n = v.i
		case valUint:
			n = int64(v.u)
		}
		return obpart.HashPart(n, l.num), true
	case partKey, partKeyImplicit:
		var h uint64
		for i, v := range key {
			h = keyHash(v, l.cols[i], h)
		}
		return obpart.KeyPart(h, l.num), true
	case partRange, partRangeColumns:
		for i, b := range l.bounds {
			if compareTuple(key, b, vcols) < 0 {
				return i, true
			}
		}
		return 0, false
	}
	for i, tuples := range l.lists {
		for _, t := range tuples {
			if compareTuple(key, t, vcols) == 0 {
				return i, true
			}
		}
	}
	if l.def >= 0 {
		return l.def, true
	}
	return 0, false
}

// maxKeyCombinations bounds the key tuples tried for one statement; beyond
// it the statement counts as touching every partition.
const maxKeyCombinations = 256

// candidates returns the partition indexes a set of rows can fall in; all
// is true when the level's columns are not all known (every partition).
// TIMESTAMP values are read in tz, the session's time zone.
func (l *partLevel) candidates(rows []map[string]value, tz *time.Location) (set map[int]bool, all bool) {
	set = map[int]bool{}
	for _, row := range rows {
		key := make([]value, len(l.cols))
		for i, c := range l.cols {
			v, ok := row[c.name]
			if !ok {
				return nil, true
			}
			if key[i], ok = castValue(v, c, tz); !ok {
				return nil, true
			}
		}
		if l.expr != nil {
			key = []value{l.expr.eval(key[0])}
		}
		idx, ok := l.locate(key)
		if !ok {
			return nil, true
		}
		set[idx] = true
	}
	return set, false
}

// keyRows turns a statement's facts into alternative key rows for the
// partition columns of t, or false when they do not determine them.
func (t *tableModel) keyRows(st *stmtInfo) ([]map[string]value, bool) {
	want := t.partColumns()
	switch {
	case len(st.insertRows) > 0:
		cols := st.insertCols
		if cols == nil {
			cols = t.colOrder
		}
		var rows []map[string]value
		for _, r := range st.insertRows {
			row := map[string]value{}
			for i, v := range r {
				if i < len(cols) && v != nil {
					row[cols[i]] = *v
				}
			}
			rows = append(rows, row)
		}
		return rows, true
	case st.where != nil:
		rows := []map[string]value{{}}
		for _, col := range want {
			vals, ok := st.where[col]
			if !ok || len(vals) == 0 {
				continue // that level will count as unknown
			}
			if len(rows)*len(vals) > maxKeyCombinations {
				return nil, false
			}
			var next []map[string]value
			for _, r := range rows {
				for _, v := range vals {
					nr := make(map[string]value, len(r)+1)
					for k, x := range r {
						nr[k] = x
					}
					nr[col] = v
					next = append(next, nr)
				}
			}
			rows = next
		}
		return rows, true
	}
	return nil, false
}

// tabletsFor returns the tablets a statement on t can touch. all is true
// when that is every tablet (no computable partition).
func (t *tableModel) tabletsFor(st *stmtInfo) (tablets []*tablet, all bool) {
	if t.part == nil {
		return t.tablets, false
	}
	rows, ok := t.keyRows(st)
	if !ok || len(rows) == 0 {
		return t.tablets, true
	}
	first, allFirst := t.part.candidates(rows, st.tz)
	var second map[int]bool
	allSecond := true
	if t.sub != nil {
		second, allSecond = t.sub.candidates(rows, st.tz)
	}
	if allFirst && (t.sub == nil || allSecond) {
		return t.tablets, true
	}
	for _, tb := range t.tablets {
		if !allFirst && !first[tb.part] {
			continue
		}
		if t.sub != nil && !allSecond && !second[tb.sub] {
			continue
		}
		tablets = append(tablets, tb)
	}
	return tablets, false
}

// partColumns lists the partition key columns of both levels.
func (t *tableModel) partColumns() []string {
	var out []string
	seen := map[string]bool{}
	for _, l := range []*partLevel{t.part, t.sub} {
		if l == nil {
			continue
		}
		for _, c := range l.cols {
			if !seen[c.name] {
				seen[c.name] = true
				out = append(out, c.name)
			}
		}
	}
	return out
}

// boundBin serializes partition i's bound for high_bound_val_bin: a rowkey
// for RANGE, one row per value (or a DEFAULT marker row) for LIST, nothing
// for HASH/KEY.
func (l *partLevel) boundBin(i int) []byte {
	vcols := l.valueCols()
	switch l.fn {
	case partRange, partRangeColumns:
		objs := make([]mysqlproto.OBObj, len(vcols))
		for j, v := range l.bounds[i] {
			objs[j] = obObjOf(v, vcols[j], l.fn == partRange)
		}
		return mysqlproto.AppendOBRowkey(nil, objs...)
	case partList, partListColumns:
		var out []byte
		for _, tuple := range l.lists[i] {
			objs := make([]mysqlproto.OBObj, len(vcols))
			for j, v := range tuple {
				objs[j] = obObjOf(v, vcols[j], l.fn == partList)
			}
			out = mysqlproto.AppendOBRow(out, objs...)
		}
		if l.def == i {
			out = mysqlproto.AppendOBRow(out, mysqlproto.OBMaxValue)
		}
		return out
	}
	return nil
}

// boundText is the high_bound_val text of partition i, as SQL literals.
func (l *partLevel) boundText(i int) string {
	tuple := func(vs []value) string {
		parts := make([]string, len(vs))
		for j, v := range vs {
			parts[j] = v.String()
		}
		return strings.Join(parts, ",")
	}
	switch l.fn {
	case partRange, partRangeColumns:
		return tuple(l.bounds[i])
	case partList, partListColumns:
		var parts []string
		for _, t := range l.lists[i] {
			if len(t) > 1 {
				parts = append(parts, "("+tuple(t)+")")
			} else {
				parts = append(parts, tuple(t))
			}
		}
		if l.def == i {
			parts = append(parts, "DEFAULT")
		}
		return strings.Join(parts, ",")
	}
	return ""
}

// obObjOf converts a bound value to its OceanBase object: a BIGINT for
// RANGE/LIST expressions (intExpr), the column's type otherwise (a
// DECIMAL as the bytes of its precision's width, as the server keeps it).
func obObjOf(v value, c *column, intExpr bool) mysqlproto.OBObj {
	numeric := mysqlproto.OBObjMeta{Type: c.obType, CollationLevel: mysqlproto.OBCollationLevelNumeric,
		Collation: mysqlproto.OBCollationBinary, Scale: -1}
	switch v.kind {
	case valMax:
		return mysqlproto.OBMaxValue
	case valNull:
		return mysqlproto.OBObj{}
	case valString:
		meta := mysqlproto.OBVarcharMeta
		meta.Type = c.obType
		meta.Collation = uint8(c.collation)
		return mysqlproto.OBObj{Meta: meta, Bytes: []byte(v.s)}
	case valDate:
		return mysqlproto.OBObj{Meta: numeric, Int: v.i}
	case valTime:
		numeric.Scale = int8(c.scale)
		return mysqlproto.OBObj{Meta: numeric, Int: v.i}
	case valDec:
		numeric.Scale = int8(c.scale)
		return mysqlproto.OBObj{Meta: numeric, Bytes: []byte(v.s[:decimalWidth(int(c.precision))])}
	}
	n := v.i
	if v.kind == valUint {
		n = int64(v.u)
	}
	o := mysqlproto.OBIntValue(n)
	if !intExpr {
		o.Meta.Type = c.obType
	}
	return o
}

// decimalWidth is the bytes a DECIMAL of precision p takes in OceanBase
// (get_decimalint_type: 4, 8, 16, 32 or 64).
func decimalWidth(p int) int {
	switch {
	case p <= 9:
		return 4
	case p <= 18:
		return 8
	case p <= 38:
		return 16
	}
	return 32
}

// rangeTypeText is part_range_type: the ObObjType numbers of the bound
// values of the first partition, comma-separated.
func (l *partLevel) rangeTypeText() string {
	if l.fn != partRange && l.fn != partRangeColumns {
		return ""
	}
	var parts []string
	vcols := l.valueCols()
	for j, v := range l.bounds[0] {
		parts = append(parts, strconv.Itoa(int(obObjOf(v, vcols[j], l.fn == partRange).Meta.Type)))
	}
	return strings.Join(parts, ",")
}

// exprText is part_expr / sub_part_expr: the expression, or the column
// list in the order of the partitioning.
func (l *partLevel) exprText() string {
	if l == nil {
		return ""
	}
	if l.expr != nil {
		return l.expr.text
	}
	names := make([]string, len(l.cols))
	for i, c := range l.cols {
		names[i] = "`" + c.name + "`"
	}
	return strings.Join(names, ",")
}
