package route

import (
	"testing"
	"time"

	"obgate/internal/obpart"
	"obgate/mysqlproto"
)

// Partitioning as a real OceanBase cluster describes it: keys in the
// order of the partitioning expression, partitions in the server's order,
// expressions of a column, temporal and DECIMAL keys.

// descKeyBA is PARTITION BY KEY(b, a) PARTITIONS 3 on a table (a INT, b
// VARCHAR): the view lists a first (part_key_idx 0), the expression b
// first.
func descKeyBA(t testing.TB, expr string) *PartDesc {
	return mustDesc(t, PartInfoSpec{Level: 1, PartType: PartFuncKey, PartNum: 3, PartExpr: expr,
		Keys: []PartKey{intKey("a", 1, 0), varcharKey("b", 1, 1, mysqlproto.OBCollationUTF8MB4)}}, hashParts(3, 0), nil)
}

func TestCalculateKeyInExpressionOrder(t *testing.T) {
	// OceanBase (vectors): KEY of ('alice', 42) is partition 0 of 3, of
	// (42, 'alice') partition 2.
	for _, expr := range []string{"b,a", "`b`, `a`", " B , A "} {
		runCalcCases(t, descKeyBA(t, expr), []calcCase{
			{sql: "insert into t (a, b) values (42, 'alice')", part: 0, how: HowKeys},
			{sql: "select * from t where b = 'alice' and a = 42", part: 0, how: HowKeys},
		})
	}
	runCalcCases(t, descKeyBA(t, "a,b"), []calcCase{
		{sql: "insert into t (a, b) values (42, 'alice')", part: 2, how: HowKeys},
	})
	// An expression naming a column the view does not list is not guessed at.
	runCalcCases(t, descKeyBA(t, "b,c"), []calcCase{
		{sql: "insert into t (a, b) values (42, 'alice')", part: -1, how: HowPartExpr},
	})
}

// TestCalculateHashServerOrder: the i-th partition row the server returns
// is HASH/KEY partition i, whatever its part_id (a rebuilt partition keeps
// its place with a new, larger id).
func TestCalculateHashServerOrder(t *testing.T) {
	parts := []PartRow{
		{PartID: 500007, TabletID: 200007, Name: "p0"},
		{PartID: 500002, TabletID: 200002, Name: "p1"},
		{PartID: 500003, TabletID: 200003, Name: "p2"},
		{PartID: 500001, TabletID: 200001, Name: "p3"},
	}
	d := mustDesc(t, PartInfoSpec{Level: 1, PartType: PartFuncHash, PartNum: 4,
		Keys: []PartKey{intKey("id", 1, 0)}}, parts, nil)
	for id := range int64(8) {
		var r PartResult
		d.Calculate([]byte("select * from t where id = "+itoa(id)), nil, TableRef{Name: []byte("t")}, nil, &r)
		if want := parts[id%4].TabletID; !r.Known || r.TabletID != want {
			t.Errorf("id %d: tablet %d (%s), want %d", id, r.TabletID, r.How, want)
		}
	}
	if id, _ := d.TabletByName([]byte("p3")); id != 200001 {
		t.Errorf("p3 is tablet %d", id)
	}
}

func itoa(v int64) string { return string(formatInt(make([]byte, 20), v, false)) }

func dateKey(name string, level, idx int) PartKey {
	return PartKey{Name: name, Level: level, Type: mysqlproto.OBTypeDate, Collation: mysqlproto.OBCollationBinary, Idx: idx}
}

func obDate(text string) mysqlproto.OBObj {
	d, ok := obpart.ParseDate([]byte(text))
	if !ok {
		panic(text)
	}
	return mysqlproto.OBObj{Meta: mysqlproto.OBObjMeta{Type: mysqlproto.OBTypeDate, CollationLevel: 5, Collation: 63, Scale: -1}, Int: int64(d)}
}

// TestCalculateExpressionPartitions: RANGE(YEAR(d)), HASH(TO_DAYS(d)),
// RANGE(UNIX_TIMESTAMP(ts)) are computed on literal keys; other
// expressions leave the level unknown, with the reason.
func TestCalculateExpressionPartitions(t *testing.T) {
	years := mustDesc(t, PartInfoSpec{Level: 1, PartType: PartFuncRange, PartNum: 3, PartExpr: "year(`d`)",
		Keys: []PartKey{dateKey("d", 1, 1)}}, []PartRow{
		{PartID: 1, TabletID: 11, Name: "p2023", HighBound: rangeBin(obInt(2024))},
		{PartID: 2, TabletID: 12, Name: "p2024", HighBound: rangeBin(obInt(2025))},
		{PartID: 3, TabletID: 13, Name: "pmax", HighBound: rangeBin(obMax)},
	}, nil)
	runCalcCases(t, years, []calcCase{
		{sql: "select * from t where d = '2023-12-31'", part: 0, how: HowKeys},
		{sql: "select * from t where d = '2024-01-01'", part: 1, how: HowKeys},
		{sql: "insert into t (id, d) values (1, '2024-12-31')", part: 1, how: HowKeys},
		{sql: "select * from t where d = '2031-06-01'", part: 2, how: HowKeys},
		{sql: "select * from t where d between '2024-01-01' and '2024-12-31'", part: 1, how: HowKeys},
		{sql: "select * from t where d > '2023-12-31' and d < '2025-01-01'", part: 1, how: HowKeys},
		{sql: "select * from t where d >= '2023-12-31' and d < '2024-02-01'", part: -1, how: HowSeveral},
		{sql: "select * from t where d = 20240101", part: -1, how: HowBadValue},
		{sql: "select * from t where d is null", part: 0, how: HowKeys}, // NULL is below every bound
	})

	toDays := mustDesc(t, PartInfoSpec{Level: 1, PartType: PartFuncHash, PartNum: 7, PartExpr: "TO_DAYS(d)",
		Keys: []PartKey{dateKey("d", 1, 0)}}, hashParts(7, 0), nil)
	d, _ := obpart.ParseDate([]byte("2024-02-29"))
	runCalcCases(t, toDays, []calcCase{
		{sql: "select * from t where d = '2024-02-29'", part: int((int64(d) + 719528) % 7), how: HowKeys},
	})

	ts := mustDesc(t, PartInfoSpec{Level: 1, PartType: PartFuncRange, PartNum: 2, PartExpr: "UNIX_TIMESTAMP(ts)",
		Keys: []PartKey{{Name: "ts", Level: 1, Type: mysqlproto.OBTypeTimestamp, Collation: 63}}}, []PartRow{
		{PartID: 1, TabletID: 21, Name: "p0", HighBound: rangeBin(obInt(1704067200))}, // 2024-01-01 00:00:00 UTC
		{PartID: 2, TabletID: 22, Name: "p1", HighBound: rangeBin(obMax)},
	}, nil)
	shanghai := time.FixedZone("+08:00", 8*3600)
	for _, tc := range []struct {
		tz   *time.Location
		sql  string
		part int
		how  string
	}{
		{time.UTC, "select * from t where ts = '2023-12-31 23:59:59'", 0, HowKeys},
		{time.UTC, "select * from t where ts = '2024-01-01 00:00:00'", 1, HowKeys},
		{shanghai, "select * from t where ts = '2024-01-01 07:59:59'", 0, HowKeys},
		{shanghai, "select * from t where ts = '2024-01-01 08:00:00'", 1, HowKeys},
		{nil, "select * from t where ts = '2024-01-01 08:00:00'", -1, HowNoTimeZone},
	} {
		r := PartResult{TZ: tc.tz}
		ts.Calculate([]byte(tc.sql), nil, TableRef{Name: []byte("t")}, nil, &r)
		if r.Part != tc.part || r.How != tc.how {
			t.Errorf("%s in %v: part %d (%s), want %d (%s)", tc.sql, tc.tz, r.Part, r.How, tc.part, tc.how)
		}
	}

	for _, expr := range []string{"id DIV 10", "id + 1", "abs(id)", "f(c)", "YEAR(id)"} {
		d := mustDesc(t, PartInfoSpec{Level: 1, PartType: PartFuncHash, PartNum: 4, PartExpr: expr,
			Keys: []PartKey{intKey("id", 1, 0)}}, hashParts(4, 0), nil)
		runCalcCases(t, d, []calcCase{
			{sql: "select * from t where id = 15", part: -1, how: HowPartExpr},
			{sql: "select * from t partition (p2)", part: 2, how: HowPartition},
		})
	}
	// LIST(f(c)) with its bounds, and a KEY level never takes a function.
	list := mustDesc(t, PartInfoSpec{Level: 1, PartType: PartFuncList, PartNum: 2, PartExpr: "c % 3",
		Keys: []PartKey{intKey("c", 1, 0)}}, []PartRow{
		{PartID: 1, TabletID: 31, Name: "p0", HighBound: listBin(one(obInt(0)))},
		{PartID: 2, TabletID: 32, Name: "p1", HighBound: listBin(one(obInt(1)), one(obInt(2)))},
	}, nil)
	runCalcCases(t, list, []calcCase{{sql: "select * from t where c = 4", part: -1, how: HowPartExpr}})
	key := mustDesc(t, PartInfoSpec{Level: 1, PartType: PartFuncKey, PartNum: 4, PartExpr: "year(d)",
		Keys: []PartKey{dateKey("d", 1, 0)}}, hashParts(4, 0), nil)
	runCalcCases(t, key, []calcCase{{sql: "select * from t where d = '2024-01-01'", part: -1, how: HowPartExpr}})
}

// TestCalculateTemporalAndDecimalColumns: RANGE COLUMNS over DATE,
// DATETIME and DECIMAL bounds as the server serializes them.
func TestCalculateTemporalAndDecimalColumns(t *testing.T) {
	days := mustDesc(t, PartInfoSpec{Level: 1, PartType: PartFuncRangeColumns, PartNum: 2,
		Keys: []PartKey{dateKey("d", 1, 0)}}, []PartRow{
		{PartID: 1, TabletID: 41, Name: "p0", HighBound: rangeBin(obDate("2024-03-01"))},
		{PartID: 2, TabletID: 42, Name: "p1", HighBound: rangeBin(obMax)},
	}, nil)
	runCalcCases(t, days, []calcCase{
		{sql: "select * from t where d = '2024-02-29'", part: 0, how: HowKeys},
		{sql: "select * from t where d = '2024-03-01'", part: 1, how: HowKeys},
		{sql: "select * from t where d >= '2024-01-01' and d < '2024-03-01'", part: 0, how: HowKeys},
		{sql: "select * from t where d = '2023-02-29'", part: -1, how: HowBadValue},
	})

	us, _ := obpart.ParseDatetime([]byte("2024-03-01 12:00:00"), 0)
	dtBound := mysqlproto.OBObj{Meta: mysqlproto.OBObjMeta{Type: mysqlproto.OBTypeDatetime, CollationLevel: 5, Collation: 63, Scale: 0}, Int: us}
	stamps := mustDesc(t, PartInfoSpec{Level: 1, PartType: PartFuncRangeColumns, PartNum: 2,
		Keys: []PartKey{{Name: "at", Level: 1, Type: mysqlproto.OBTypeDatetime, Collation: 63}}}, []PartRow{
		{PartID: 1, TabletID: 51, Name: "p0", HighBound: rangeBin(dtBound)},
		{PartID: 2, TabletID: 52, Name: "p1", HighBound: rangeBin(obMax)},
	}, nil)
	runCalcCases(t, stamps, []calcCase{
		{sql: "select * from t where at = '2024-03-01 11:59:59'", part: 0, how: HowKeys},
		{sql: "select * from t where at = '2024-03-01 12:00:00'", part: 1, how: HowKeys},
		{sql: "select * from t where at = '2024-03-01'", part: 0, how: HowKeys},
		{sql: "select * from t where at = '2024-03-01 11:59:59.5'", part: -1, how: HowBadValue}, // DATETIME(0) would round it
	})

	dec, _ := obpart.ParseDecimal([]byte("100.50"), 10, 2)
	decBound := mysqlproto.OBObj{Meta: mysqlproto.OBObjMeta{Type: mysqlproto.OBTypeDecimalInt, CollationLevel: 5, Collation: 63, Scale: 2},
		Bytes: dec[:8]}
	prices := mustDesc(t, PartInfoSpec{Level: 1, PartType: PartFuncRangeColumns, PartNum: 2,
		Keys: []PartKey{{Name: "price", Level: 1, Type: mysqlproto.OBTypeDecimalInt, Collation: 63, Precision: 10, Scale: 2}}}, []PartRow{
		{PartID: 1, TabletID: 61, Name: "p0", HighBound: rangeBin(decBound)},
		{PartID: 2, TabletID: 62, Name: "p1", HighBound: rangeBin(obMax)},
	}, nil)
	runCalcCases(t, prices, []calcCase{
		{sql: "select * from t where price = 100.49", part: 0, how: HowKeys},
		{sql: "select * from t where price = '100.5'", part: 1, how: HowKeys},
		{sql: "select * from t where price = 100", part: 0, how: HowKeys},
		{sql: "select * from t where price = -3.25", part: 0, how: HowKeys},
		{sql: "select * from t where price = ?", part: 1, how: HowKeys, lits: []string{"'250.00'"}},
		{sql: "select * from t where price = 1.005", part: -1, how: HowBadValue},
	})
}

// TestReplicaTypes: READONLY is 16; LOGONLY (5) and ENCRYPTION_LOGONLY
// (261) replicas hold no data and are not routed to.
func TestReplicaTypes(t *testing.T) {
	res := &mysqlproto.Result{Columns: []mysqlproto.Column{{Name: "tablet_id"}, {Name: "svr_ip"}, {Name: "sql_port"}, {Name: "role"}, {Name: "replica_type"}}}
	for _, r := range [][]string{
		{"7", "10.0.0.1", "2881", "1", "0"},
		{"7", "10.0.0.2", "2881", "2", "16"},
		{"7", "10.0.0.3", "2881", "2", "5"},
		{"7", "10.0.0.4", "2881", "2", "261"},
		{"7", "10.0.0.5", "2881", "2", "0"},
	} {
		row := make([][]byte, len(r))
		for i, v := range r {
			row[i] = []byte(v)
		}
		res.Rows = append(res.Rows, row)
	}
	loc := tabletLocations(res)[7]
	if loc == nil || len(loc.Replicas) != 3 {
		t.Fatalf("replicas %+v", loc)
	}
	got := map[string]Replica{}
	for _, r := range loc.Replicas {
		got[r.Addr] = r
	}
	if !got["10.0.0.1:2881"].Leader || !got["10.0.0.2:2881"].ReadOnly || got["10.0.0.5:2881"].ReadOnly {
		t.Errorf("replicas %+v", loc.Replicas)
	}
}

// TestCalculateBinaryTemporalParams: JDBC and other drivers send DATE and
// DATETIME parameters in the binary protocol's form; they locate as the
// same literals do.
func TestCalculateBinaryTemporalParams(t *testing.T) {
	days := mustDesc(t, PartInfoSpec{Level: 1, PartType: PartFuncRangeColumns, PartNum: 2,
		Keys: []PartKey{dateKey("d", 1, 0)}}, []PartRow{
		{PartID: 1, TabletID: 41, Name: "p0", HighBound: rangeBin(obDate("2024-03-01"))},
		{PartID: 2, TabletID: 42, Name: "p1", HighBound: rangeBin(obMax)},
	}, nil)
	for _, tc := range []struct {
		param execParam
		part  int
		how   string
	}{
		{execParam{typ: myDate, value: []byte{4, 0xe8, 7, 2, 29}}, 0, HowKeys},
		{execParam{typ: myDateTime, value: []byte{4, 0xe8, 7, 3, 1}}, 1, HowKeys},
		{execParam{typ: myDateTime, value: []byte{7, 0xe8, 7, 2, 29, 0, 0, 0}}, 0, HowKeys},
		{execParam{typ: myDateTime, value: []byte{7, 0xe8, 7, 2, 29, 12, 0, 0}}, -1, HowBadValue}, // not a date
	} {
		var p ExecParams
		p.Reset(execPayload([]execParam{tc.param}, true), 1, nil)
		var r PartResult
		days.Calculate([]byte("select * from t where d = ?"), nil, TableRef{Name: []byte("t")}, &p, &r)
		if r.Part != tc.part || r.How != tc.how {
			t.Errorf("%x: part %d (%s), want %d (%s)", tc.param.value, r.Part, r.How, tc.part, tc.how)
		}
	}
}
