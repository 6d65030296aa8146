package route

import (
	"testing"
	"time"

	"obgate/mysqlproto"
)

// descKeyTyped is KEY(k) PARTITIONS 5 on one column k.
func descKeyTyped(t testing.TB, k PartKey) *PartDesc {
	return mustDesc(t, PartInfoSpec{Level: 1, PartType: PartFuncKey, PartNum: 5, Keys: []PartKey{k}}, hashParts(5, 0), nil)
}

// TestCalculateAllocs checks that Calculate (and Lex with it) does not
// allocate, for text and prepared point statements.
func TestCalculateAllocs(t *testing.T) {
	key, metrics, rng, name := descKey(t), descMetrics(t), descRange(t), descKeyName(t)
	var ep ExecParams
	ep.Reset(execPayload([]execParam{{typ: myLongLong, value: leInt(4921, 8)}}, true), 1, nil)
	epStr := &ExecParams{}
	epStr.Reset(execPayload([]execParam{{typ: myLong, value: leInt(20250101, 4)},
		{typ: myVarString, value: lenencStr("web-01")}}, true), 2, nil)
	var lp LiteralParams
	lp.Reset([][]byte{[]byte("'it''s'"), []byte("12")})
	shanghai, err := time.LoadLocation("Asia/Shanghai")
	if err != nil {
		shanghai = time.FixedZone("+08:00", 8*3600)
	}
	for _, tc := range []struct {
		name   string
		d      *PartDesc
		table  string
		sql    string
		params Params
	}{
		{"point select", key, "sbtest1", benchPointSelect, nil},
		{"prepared point select", key, "sbtest1", "SELECT c FROM sbtest1 WHERE id=?", &ep},
		{"update", key, "sbtest1", benchUpdate, nil},
		{"insert rows", key, "t", "insert into t (id, c) values (7, 'a'), (7, 'b')", nil},
		{"in list", key, "t", "select * from t where id in (0, 1) or id = 1", nil},
		{"two levels", metrics, "metrics", "select * from metrics m where m.day = 20250101 and m.host = 'it\\'s'", nil},
		{"two levels prepared", metrics, "metrics", "select * from metrics where day = ? and host = ?", epStr},
		{"int to string", metrics, "metrics", "select * from metrics where day = '20230101' and host = 12345", nil},
		{"range", rng, "t", "select * from t a join u on a.id = u.id where a.id between 100 and 199", nil},
		{"literal params", name, "t", "select * from t where name = ? and x = ?", &lp},
		{"partition name", metrics, "metrics", "select * from metrics partition (p1sp0)", nil},
		{"key in expression order", descKeyBA(t, "`b`,`a`"), "t", "select * from t where b = '한국어' and a = 42", nil},
		{"decimal", descKeyTyped(t, PartKey{Name: "p", Level: 1, Type: mysqlproto.OBTypeDecimalInt, Precision: 12, Scale: 2}), "t", "select * from t where p = 12.5", nil},
		{"date", descKeyTyped(t, dateKey("d", 1, 0)), "t", "select * from t where d = '2024-02-29'", nil},
		{"timestamp", descKeyTyped(t, PartKey{Name: "ts", Level: 1, Type: mysqlproto.OBTypeTimestamp, Scale: 6}), "t", "select * from t where ts = '2024-02-29 10:00:00.25'", nil},
	} {
		sql := []byte(tc.sql)
		ref := TableRef{Name: []byte(tc.table)}
		r := PartResult{TZ: shanghai}
		f := Lex(sql)
		tc.d.Calculate(sql, &f, ref, tc.params, &r)
		if !r.Known {
			t.Errorf("%s: not known: %s", tc.name, r.How)
		}
		if n := testing.AllocsPerRun(200, func() {
			f := Lex(sql)
			tc.d.Calculate(sql, &f, ref, tc.params, &r)
		}); n != 0 {
			t.Errorf("%s: %.1f allocations per run", tc.name, n)
		}
	}
	// Resetting an ExecParams does not allocate either.
	payload := execPayload([]execParam{{typ: myLongLong, value: leInt(1, 8)}, {typ: myString, value: lenencStr("x")}}, true)
	if n := testing.AllocsPerRun(200, func() { ep.Reset(payload, 2, nil) }); n != 0 {
		t.Errorf("ExecParams.Reset: %.1f allocations per run", n)
	}
}
