package route

import (
	"fmt"

	"obgate/internal/obpart"
	"obgate/mysqlproto"
)

// PartFunc is a partitioning function, numbered as OceanBase 4.x numbers
// part_type and sub_part_type in __all_virtual_proxy_partition_info.
type PartFunc int

// Partitioning functions.
const (
	PartFuncHash         PartFunc = 0
	PartFuncKey          PartFunc = 1
	PartFuncKeyImplicit  PartFunc = 2
	PartFuncRange        PartFunc = 3
	PartFuncRangeColumns PartFunc = 4
	PartFuncList         PartFunc = 5
	PartFuncListColumns  PartFunc = 6
)

var partFuncNames = [...]string{"HASH", "KEY", "KEY_IMPLICIT", "RANGE", "RANGE_COLUMNS", "LIST", "LIST_COLUMNS"}

func (f PartFunc) String() string {
	if f >= 0 && int(f) < len(partFuncNames) {
		return partFuncNames[f]
	}
	return fmt.Sprintf("PartFunc(%d)", int(f))
}

func (f PartFunc) valid() bool    { return f >= PartFuncHash && f <= PartFuncListColumns }
func (f PartFunc) hashLike() bool { return f <= PartFuncKeyImplicit }
func (f PartFunc) isRange() bool  { return f == PartFuncRange || f == PartFuncRangeColumns }
func (f PartFunc) isList() bool   { return f == PartFuncList || f == PartFuncListColumns }

// takesExpr reports whether f partitions by an expression of one value
// (HASH, RANGE, LIST) rather than by columns.
func (f PartFunc) takesExpr() bool {
	return f == PartFuncHash || f == PartFuncRange || f == PartFuncList
}

// PartKey is one partition key column (a row of
// __all_virtual_proxy_partition_info).
type PartKey struct {
	Name      string               // part_key_name
	Level     int                  // part_key_level: 1 or 2
	Type      mysqlproto.OBObjType // part_key_type
	Collation int64                // part_key_collation_type
	// Precision and Scale are part_key_precision and part_key_scale: a
	// DECIMAL's accuracy, a DATETIME's or TIMESTAMP's fraction digits.
	Precision, Scale int
	// Idx is part_key_idx, the column's 0-based position in the table; it
	// is used only for an INSERT without a column list. (It is not the
	// position in the partitioning expression: PartInfoSpec's expressions
	// give that.)
	Idx int
}

// PartRow is a first-level partition (a row of
// __all_virtual_proxy_partition). The rows of a table are given in the
// order the server returned them: for HASH and KEY the i-th row is
// partition index i, as ODP takes it (obproxy_part_mgr.cpp), whatever its
// part_id (a partition a DDL rebuilt keeps its position but gets a new,
// larger object id).
type PartRow struct {
	PartID, TabletID int64 // TabletID is 0 in a table with sub-partitions
	Name             string
	HighBound        []byte // high_bound_val_bin; nil for HASH and KEY
	SubPartNum       int64
}

// SubPartRow is a sub-partition (a row of
// __all_virtual_proxy_sub_partition).
type SubPartRow struct {
	PartID, SubPartID, TabletID int64
	Name                        string
	HighBound                   []byte
}

// PartInfoSpec is what __all_virtual_proxy_partition_info says of a
// table's partitioning. Keys come in the view's order (part_key_idx);
// within each level, the keys are put in the order of the partitioning
// expression (PartExpr, SubPartExpr), which is the order KEY hashes them
// in and RANGE/LIST COLUMNS compares them in. An empty expression keeps
// the keys' order.
type PartInfoSpec struct {
	Level                 int // 1 or 2
	PartType, SubPartType PartFunc
	PartNum, SubPartNum   int64
	PartExpr, SubPartExpr string // part_expr, sub_part_expr
	Keys                  []PartKey
}

// PartDesc is how a partitioned table's rows map to its tablets. It is
// immutable once NewPartDesc returns it and safe for concurrent use; it
// owns copies of everything it was built from.
type PartDesc struct {
	level   int
	cols    []keyCol           // distinct key columns, in order of first appearance
	first   levelDesc          // the first level
	subs    []levelDesc        // level 2: the sub-partitions of each first-level partition
	tablets []int64            // every leaf tablet id, first-level order then sub order
	leaf    map[string]nameRef // folded leaf partition name → where
	part    map[string]int     // level 2: folded first-level name → partition index
}

// keyCol is one distinct key column.
type keyCol struct {
	name        string
	bname       []byte // name, for comparisons that must not allocate
	typ         mysqlproto.OBObjType
	class       colClass
	coll        obpart.Coll // classStr: how its strings compare and hash
	prec, scale int         // PartKey.Precision, Scale
	idx         int         // PartKey.Idx
}

// nameRef is where a named leaf partition lies.
type nameRef struct{ part, sub int }

// levelDesc is one partitioning level of one table or first-level
// partition.
type levelDesc struct {
	fn   PartFunc
	cols []int  // key columns, indexes into PartDesc.cols, in key order
	n    int    // partitions
	fx   partFx // HASH, RANGE, LIST: the function of the key column partitioned by
	// RANGE: n bound tuples of len(cols) values, ascending. LIST: the
	// listed tuples, each in partition listOf[i].
	bounds []kval
	listOf []int
	def    int     // LIST: the DEFAULT partition, -1 when there is none
	ids    []int64 // leaf level: each partition's tablet id
	usable bool    // obgate can compute this level
	why    string  // when not usable: why not (a How* constant)
}

// maxKeyCols is the most distinct key columns a statement's values are
// looked for; a table with more is never computed.
const maxKeyCols = 8

// NewPartDesc builds the description of a partitioned table from the rows
// ODP reads. The rows may come in any order; the slices are not kept.
func NewPartDesc(spec PartInfoSpec, parts []PartRow, subs []SubPartRow) (*PartDesc, error) {
	if spec.Level != 1 && spec.Level != 2 {
		return nil, fmt.Errorf("route: partition level %d", spec.Level)
	}
	if !spec.PartType.valid() || (spec.Level == 2 && !spec.SubPartType.valid()) {
		return nil, fmt.Errorf("route: unsupported partition type %v/%v", spec.PartType, spec.SubPartType)
	}
	if len(parts) == 0 {
		return nil, fmt.Errorf("route: no partitions")
	}
	if spec.PartNum > 0 && spec.PartNum != int64(len(parts)) {
		return nil, fmt.Errorf("route: part_num %d but %d partitions", spec.PartNum, len(parts))
	}
	d := &PartDesc{level: spec.Level, leaf: map[string]nameRef{}}
	var cols1, cols2 []int
	for _, k := range spec.Keys {
		if k.Level != 1 && (k.Level != 2 || spec.Level != 2) {
			return nil, fmt.Errorf("route: key %q of level %d", k.Name, k.Level)
		}
		ci := d.addCol(k)
		if k.Level == 1 {
			cols1 = append(cols1, ci)
		} else {
			cols2 = append(cols2, ci)
		}
	}
	if len(cols1) == 0 || (spec.Level == 2 && len(cols2) == 0) {
		return nil, fmt.Errorf("route: a partitioning level without key columns")
	}
	expr1 := d.readExpr(cols1, spec.PartExpr, spec.PartType)
	expr2 := d.readExpr(cols2, spec.SubPartExpr, spec.SubPartType)

	// First-level partitions, in partition order.
	rows := append([]PartRow(nil), parts...)
	if err := noDuplicateIDs(len(rows), func(i int) int64 { return rows[i].PartID }); err != nil {
		return nil, err
	}
	bounds := make([][]byte, len(rows))
	for i, r := range rows {
		bounds[i] = r.HighBound
	}
	order, err := d.buildLevel(&d.first, spec.PartType, expr1, bounds)
	if err != nil {
		return nil, err
	}
	sorted := make([]PartRow, len(rows))
	for i, j := range order {
		sorted[i] = rows[j]
	}
	rows = sorted

	if spec.Level == 1 {
		d.first.ids = make([]int64, len(rows))
		for i, r := range rows {
			d.first.ids[i] = r.TabletID
			d.tablets = append(d.tablets, r.TabletID)
			d.leaf[foldName(r.Name)] = nameRef{i, -1}
		}
		return d, nil
	}

	// Sub-partitions, grouped by first-level partition.
	d.part = map[string]int{}
	index := make(map[int64]int, len(rows))
	for i, r := range rows {
		index[r.PartID] = i
		d.part[foldName(r.Name)] = i
	}
	groups := make([][]SubPartRow, len(rows))
	for _, s := range subs {
		i, ok := index[s.PartID]
		if !ok {
			return nil, fmt.Errorf("route: sub-partition %d of unknown partition %d", s.SubPartID, s.PartID)
		}
		groups[i] = append(groups[i], s)
	}
	d.subs = make([]levelDesc, len(rows))
	for i, g := range groups {
		if len(g) == 0 {
			return nil, fmt.Errorf("route: partition %d has no sub-partitions", rows[i].PartID)
		}
		if rows[i].SubPartNum > 0 && rows[i].SubPartNum != int64(len(g)) {
			return nil, fmt.Errorf("route: partition %d: sub_part_num %d but %d sub-partitions", rows[i].PartID, rows[i].SubPartNum, len(g))
		}
		if err := noDuplicateIDs(len(g), func(j int) int64 { return g[j].SubPartID }); err != nil {
			return nil, fmt.Errorf("route: partition %d: %w", rows[i].PartID, err)
		}
		sb := make([][]byte, len(g))
		for j, s := range g {
			sb[j] = s.HighBound
		}
		sorder, err := d.buildLevel(&d.subs[i], spec.SubPartType, expr2, sb)
		if err != nil {
			return nil, fmt.Errorf("route: partition %d: %w", rows[i].PartID, err)
		}
		d.subs[i].ids = make([]int64, len(g))
		for j, k := range sorder {
			s := g[k]
			d.subs[i].ids[j] = s.TabletID
			d.tablets = append(d.tablets, s.TabletID)
			d.leaf[foldName(s.Name)] = nameRef{i, j}
		}
	}
	return d, nil
}

// addCol returns the index of k's column among d.cols, adding it.
func (d *PartDesc) addCol(k PartKey) int {
	for i, c := range d.cols {
		if foldName(c.name) == foldName(k.Name) {
			return i
		}
	}
	class, coll := classOf(k.Type, k.Collation)
	d.cols = append(d.cols, keyCol{name: k.Name, bname: []byte(k.Name), typ: k.Type, class: class, coll: coll,
		prec: k.Precision, scale: k.Scale, idx: k.Idx})
	return len(d.cols) - 1
}

// noDuplicateIDs fails when two of n partition ids are equal.
func noDuplicateIDs(n int, id func(int) int64) error {
	seen := make(map[int64]bool, n)
	for i := range n {
		if seen[id(i)] {
			return fmt.Errorf("route: partition id %d twice", id(i))
		}
		seen[id(i)] = true
	}
	return nil
}

// levelExpr is a level's key columns in the order of its partitioning
// expression and the function applied to them; why says why obgate does
// not compute the level ("" when it does).
type levelExpr struct {
	cols []int
	fx   partFx
	why  string
}

// readExpr orders the key columns cols of one level by the partitioning
// expression expr of function fn.
func (d *PartDesc) readExpr(cols []int, expr string, fn PartFunc) levelExpr {
	le := levelExpr{cols: cols}
	if expr == "" {
		return le
	}
	elems := splitPartExpr(expr)
	if len(elems) != len(cols) {
		le.why = HowPartExpr
		return le
	}
	ordered := make([]int, 0, len(cols))
	for _, e := range elems {
		at := -1
		for _, c := range cols {
			if e.col != "" && foldName(d.cols[c].name) == foldName(e.col) {
				at = c
			}
		}
		if at < 0 || (e.fx != fxNone && (len(elems) != 1 || !e.fx.suits(d.cols[at].class) || !fn.takesExpr())) {
			le.why = HowPartExpr
			return le
		}
		ordered = append(ordered, at)
		le.fx = e.fx
	}
	le.cols = ordered
	return le
}

// Level is 1 or 2: the number of partitioning levels.
func (d *PartDesc) Level() int { return d.level }

// NumTablets is the number of leaf partitions.
func (d *PartDesc) NumTablets() int { return len(d.tablets) }

// Tablets returns every leaf tablet id, first-level partitions in order
// and the sub-partitions of each in order. The slice is the caller's.
func (d *PartDesc) Tablets() []int64 { return append([]int64(nil), d.tablets...) }

// KeyNames returns the distinct key column names, both levels, in the
// order they were first given. The slice is the caller's.
func (d *PartDesc) KeyNames() []string {
	out := make([]string, len(d.cols))
	for i, c := range d.cols {
		out[i] = c.name
	}
	return out
}

// NumParts is the number of first-level partitions.
func (d *PartDesc) NumParts() int { return d.first.n }

// NumSubParts is the number of sub-partitions of first-level partition
// part (0 for a one-level table or a part out of range).
func (d *PartDesc) NumSubParts(part int) int {
	if part < 0 || part >= len(d.subs) {
		return 0
	}
	return d.subs[part].n
}

// Tablet returns the tablet of partition part (and sub-partition sub of
// it in a two-level table; sub is ignored otherwise).
func (d *PartDesc) Tablet(part, sub int) (int64, bool) {
	if part < 0 || part >= d.first.n {
		return 0, false
	}
	if d.level == 1 {
		return d.first.ids[part], true
	}
	if sub < 0 || sub >= d.subs[part].n {
		return 0, false
	}
	return d.subs[part].ids[sub], true
}

// TabletByName returns the tablet of the leaf partition named name
// (ASCII case ignored), as PARTITION (name) selects it. A first-level
// partition of a two-level table is not one tablet: it reports false.
func (d *PartDesc) TabletByName(name []byte) (int64, bool) {
	ref, ok := d.lookupLeaf(name)
	if !ok {
		return 0, false
	}
	return d.Tablet(ref.part, ref.sub)
}

// maxNameLen is the longest partition name looked up (MySQL's limit).
const maxNameLen = 64

// lookupLeaf finds a leaf partition by name without allocating.
func (d *PartDesc) lookupLeaf(name []byte) (nameRef, bool) {
	var buf [maxNameLen]byte
	if len(name) > len(buf) {
		return nameRef{}, false
	}
	ref, ok := d.leaf[string(foldInto(buf[:0], name))]
	return ref, ok
}

// lookupPart finds a first-level partition of a two-level table by name.
func (d *PartDesc) lookupPart(name []byte) (int, bool) {
	var buf [maxNameLen]byte
	if len(name) > len(buf) || d.part == nil {
		return 0, false
	}
	i, ok := d.part[string(foldInto(buf[:0], name))]
	return i, ok
}

// foldName is name with ASCII letters in lower case.
func foldName(name string) string { return string(foldInto(nil, []byte(name))) }

// foldInto appends b with ASCII letters in lower case to dst.
func foldInto(dst, b []byte) []byte {
	for _, c := range b {
		if c >= 'A' && c <= 'Z' {
			c += 'a' - 'A'
		}
		dst = append(dst, c)
	}
	return dst
}
