package route

import (
	"fmt"
	"testing"

	"obgate/mysqlproto"
)

// Helpers building partition descriptions as ODP reads them.

func intKey(name string, level, idx int) PartKey {
	return PartKey{Name: name, Level: level, Type: mysqlproto.OBTypeInt, Collation: mysqlproto.OBCollationBinary, Idx: idx}
}

func varcharKey(name string, level, idx int, coll int64) PartKey {
	return PartKey{Name: name, Level: level, Type: mysqlproto.OBTypeVarchar, Collation: coll, Idx: idx}
}

func obInt(v int64) mysqlproto.OBObj { return mysqlproto.OBIntValue(v) }

func obStr(s string) mysqlproto.OBObj { return mysqlproto.OBVarcharValue(s) }

var obMax = mysqlproto.OBMaxValue

// rangeBin is a RANGE partition's high_bound_val_bin.
func rangeBin(vals ...mysqlproto.OBObj) []byte { return mysqlproto.AppendOBRowkey(nil, vals...) }

// listBin is a LIST partition's high_bound_val_bin: one row per tuple.
func listBin(tuples ...[]mysqlproto.OBObj) []byte {
	var out []byte
	for _, t := range tuples {
		out = mysqlproto.AppendOBRow(out, t...)
	}
	return out
}

func one(v mysqlproto.OBObj) []mysqlproto.OBObj { return []mysqlproto.OBObj{v} }

// hashParts are n HASH/KEY partitions p0..p(n-1) with tablets base+i.
func hashParts(n int, base int64) []PartRow {
	rows := make([]PartRow, n)
	for i := range rows {
		rows[i] = PartRow{PartID: int64(i), TabletID: base + int64(i), Name: fmt.Sprintf("p%d", i)}
	}
	return rows
}

func mustDesc(t testing.TB, spec PartInfoSpec, parts []PartRow, subs []SubPartRow) *PartDesc {
	t.Helper()
	d, err := NewPartDesc(spec, parts, subs)
	if err != nil {
		t.Fatalf("NewPartDesc: %v", err)
	}
	return d
}

// Descriptions shared by the tests, the fuzz target and the benchmarks.

// descHash is HASH(id) PARTITIONS 4, tablets 1000..1003.
func descHash(t testing.TB) *PartDesc {
	return mustDesc(t, PartInfoSpec{Level: 1, PartType: PartFuncHash, PartNum: 4,
		Keys: []PartKey{intKey("id", 1, 0)}}, hashParts(4, 1000), nil)
}

// descKey is KEY(id) PARTITIONS 7, tablets 2000..2006.
func descKey(t testing.TB) *PartDesc {
	return mustDesc(t, PartInfoSpec{Level: 1, PartType: PartFuncKey, PartNum: 7,
		Keys: []PartKey{intKey("id", 1, 0)}}, hashParts(7, 2000), nil)
}

// descKeyName is KEY(name) PARTITIONS 5 on a utf8mb4_general_ci VARCHAR.
func descKeyName(t testing.TB) *PartDesc {
	return mustDesc(t, PartInfoSpec{Level: 1, PartType: PartFuncKey, PartNum: 5,
		Keys: []PartKey{varcharKey("name", 1, 1, mysqlproto.OBCollationUTF8MB4)}}, hashParts(5, 3000), nil)
}

// descRange is RANGE(id): p0 < 100, p1 < 200, p2 < 300 (rows given out
// of order), tablets 4000+part.
func descRange(t testing.TB) *PartDesc {
	return mustDesc(t, PartInfoSpec{Level: 1, PartType: PartFuncRange, PartNum: 3,
		Keys: []PartKey{intKey("id", 1, 0)}}, []PartRow{
		{PartID: 2, TabletID: 4002, Name: "p2", HighBound: rangeBin(obInt(300))},
		{PartID: 0, TabletID: 4000, Name: "p0", HighBound: rangeBin(obInt(100))},
		{PartID: 1, TabletID: 4001, Name: "p1", HighBound: rangeBin(obInt(200))},
	}, nil)
}

// descList is LIST(region_id): p0 (1, 2), p1 (3, NULL), pd DEFAULT.
func descList(t testing.TB) *PartDesc {
	return mustDesc(t, PartInfoSpec{Level: 1, PartType: PartFuncList, PartNum: 3,
		Keys: []PartKey{intKey("region_id", 1, 2)}}, []PartRow{
		{PartID: 0, TabletID: 5000, Name: "p0", HighBound: listBin(one(obInt(1)), one(obInt(2)))},
		{PartID: 1, TabletID: 5001, Name: "p1", HighBound: listBin(one(obInt(3)), one(mysqlproto.OBObj{}))},
		{PartID: 2, TabletID: 5002, Name: "pd", HighBound: listBin(one(obMax))},
	}, nil)
}

// descMetrics is obsim's metrics table: RANGE COLUMNS(day) (p0 <
// 20240101, p1 < MAXVALUE) SUBPARTITION BY KEY(host) SUBPARTITIONS 2,
// tablets 6000 + 10*part + sub named p0sp0...
func descMetrics(t testing.TB) *PartDesc {
	var subs []SubPartRow
	for p := range 2 {
		for s := range 2 {
			subs = append(subs, SubPartRow{PartID: int64(p), SubPartID: int64(s),
				TabletID: 6000 + int64(10*p+s), Name: fmt.Sprintf("p%dsp%d", p, s)})
		}
	}
	d := mustDesc(t, PartInfoSpec{Level: 2, PartType: PartFuncRangeColumns, SubPartType: PartFuncKey,
		PartNum: 2, SubPartNum: 2,
		Keys: []PartKey{{Name: "day", Level: 1, Type: mysqlproto.OBTypeInt32, Collation: 63, Idx: 0},
			varcharKey("host", 2, 1, mysqlproto.OBCollationUTF8MB4)}},
		[]PartRow{
			{PartID: 1, Name: "p1", HighBound: rangeBin(obMax), SubPartNum: 2},
			{PartID: 0, Name: "p0", HighBound: rangeBin(mysqlproto.OBObj{Meta: mysqlproto.OBObjMeta{Type: mysqlproto.OBTypeInt32}, Int: 20240101}), SubPartNum: 2},
		}, subs)
	return d
}

// descHashHash is HASH(a) PARTITIONS 3 SUBPARTITION BY HASH(b)
// SUBPARTITIONS 2, tablets 7000 + 10*part + sub.
func descHashHash(t testing.TB) *PartDesc {
	var subs []SubPartRow
	for p := range 3 {
		for s := range 2 {
			subs = append(subs, SubPartRow{PartID: int64(p), SubPartID: int64(s),
				TabletID: 7000 + int64(10*p+s), Name: fmt.Sprintf("p%dsp%d", p, s)})
		}
	}
	parts := hashParts(3, 0)
	for i := range parts {
		parts[i].TabletID = 0
	}
	return mustDesc(t, PartInfoSpec{Level: 2, PartType: PartFuncHash, SubPartType: PartFuncHash,
		PartNum: 3, SubPartNum: 2, Keys: []PartKey{intKey("a", 1, 0), intKey("b", 2, 1)}}, parts, subs)
}

// descRangeCols is RANGE COLUMNS(a, b) with b a general_ci VARCHAR:
// p0 < (10, 'm'), p1 < (10, MAXVALUE), p2 < (20, 'a'), p3 < (MAXVALUE,
// MAXVALUE); tablets 8000+part.
func descRangeCols(t testing.TB) *PartDesc {
	return mustDesc(t, PartInfoSpec{Level: 1, PartType: PartFuncRangeColumns, PartNum: 4,
		Keys: []PartKey{intKey("a", 1, 0), varcharKey("b", 1, 1, mysqlproto.OBCollationUTF8MB4)}}, []PartRow{
		{PartID: 0, TabletID: 8000, Name: "p0", HighBound: rangeBin(obInt(10), obStr("m"))},
		{PartID: 1, TabletID: 8001, Name: "p1", HighBound: rangeBin(obInt(10), obMax)},
		{PartID: 2, TabletID: 8002, Name: "p2", HighBound: rangeBin(obInt(20), obStr("a"))},
		{PartID: 3, TabletID: 8003, Name: "p3", HighBound: rangeBin(obMax, obMax)},
	}, nil)
}

// descListCols is LIST COLUMNS(region), general_ci: east ('hz', 'sh'),
// north ('bj'), other DEFAULT; tablets 9000+part.
func descListCols(t testing.TB) *PartDesc {
	return mustDesc(t, PartInfoSpec{Level: 1, PartType: PartFuncListColumns, PartNum: 3,
		Keys: []PartKey{varcharKey("region", 1, 1, mysqlproto.OBCollationUTF8MB4)}}, []PartRow{
		{PartID: 0, TabletID: 9000, Name: "east", HighBound: listBin(one(obStr("hz")), one(obStr("sh")))},
		{PartID: 1, TabletID: 9001, Name: "north", HighBound: listBin(one(obStr("bj")))},
		{PartID: 2, TabletID: 9002, Name: "other", HighBound: listBin(one(obMax))},
	}, nil)
}

// descListNoDefault is LIST(k): p0 (1), p1 (2); tablets 9100+part.
func descListNoDefault(t testing.TB) *PartDesc {
	return mustDesc(t, PartInfoSpec{Level: 1, PartType: PartFuncList, PartNum: 2,
		Keys: []PartKey{intKey("k", 1, 0)}}, []PartRow{
		{PartID: 0, TabletID: 9100, Name: "p0", HighBound: listBin(one(obInt(1)))},
		{PartID: 1, TabletID: 9101, Name: "p1", HighBound: listBin(one(obInt(2)))},
	}, nil)
}

// descNonTemplate is RANGE(a) p0 < 10, p1 < MAXVALUE with per-partition
// sub-partitions: p0 HASH(b) 2 (tablets 9200, 9201), p1 HASH(b) 3
// (9210..9212); the sub-partitions of the two partitions come mixed, those
// of each partition in order.
func descNonTemplate(t testing.TB) *PartDesc {
	subs := []SubPartRow{
		{PartID: 1, SubPartID: 0, TabletID: 9210, Name: "p1s0"},
		{PartID: 0, SubPartID: 0, TabletID: 9200, Name: "p0s0"},
		{PartID: 1, SubPartID: 1, TabletID: 9211, Name: "p1s1"},
		{PartID: 0, SubPartID: 1, TabletID: 9201, Name: "p0s1"},
		{PartID: 1, SubPartID: 2, TabletID: 9212, Name: "p1s2"},
	}
	return mustDesc(t, PartInfoSpec{Level: 2, PartType: PartFuncRange, SubPartType: PartFuncHash, PartNum: 2,
		Keys: []PartKey{intKey("a", 1, 0), intKey("b", 2, 1)}}, []PartRow{
		{PartID: 0, Name: "p0", HighBound: rangeBin(obInt(10)), SubPartNum: 2},
		{PartID: 1, Name: "p1", HighBound: rangeBin(obMax), SubPartNum: 3},
	}, subs)
}
