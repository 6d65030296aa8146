package route

import (
	"testing"
	"time"
	"unsafe"
)

// calcSeeds are statements for the fuzz targets' corpus.
var calcSeeds = []string{
	benchPointSelect,
	benchUpdate,
	"select * from t where id = 5",
	"select * from t a join u b on a.id = b.id and a.k = 'x' where a.id in (1, 2, ?) or (a.id = -3 and b.x = 'y')",
	"select * from t where id between ? and 10 and name = 'it''s' or id is null",
	"select * from metrics where day >= 20240101 and day < 20250101 and host = _utf8mb4'h' collate utf8mb4_bin",
	"insert into t (id, name) values (1, 'a'), (?, X'6162'), (0x10, now())",
	"insert into metrics set day = 20230101, host = 'x' on duplicate key update v = v + 1",
	"replace low_priority into db.t partition (p0) values (1, 2, 3)",
	"update t set c = ?, d = (select 1 from u where id = 2) where id = ? order by id limit 1",
	"delete t from t left join u using (id) where t.id = 5 and u.id is null",
	"delete from t using t, u where t.id = u.id and t.id = 3",
	"select * from t partition (p1) where case when id = 1 then 2 else 3 end = 2 and id = 4",
	"select * from (t join u on t.id = 1) where t.id = 1 xor u.id = 2",
	"select * from t where not (id = 1) and (id, k) in ((1, 2)) and id <=> 1",
	"select * from t where id = 1 union all select * from t where id = 2; select 1",
	"select * from t where /*! id = 1 and */ `id` = 1e5 || id = .5 && id = 1.",
	"select * from t force index (i) use key for join (j) where t.id = '5' -- c",
	"select * from t where a = 10 and b > 'm' and b <= 'zz'",
	"select * from t where region in ('hz', 'SH ', N'bj')",
	"insert into t values (",
	"select * from t where id in (",
	"select * from t where (((((id = 1)))))",
	"select * from t where id = 'unclosed",
	"select * from t where d between '2024-01-01' and '2024-12-31' and ts > '2024-02-29 10:00:00.5' and p = -12.50",
	"insert into t (a, b, d, p) values (42, 'alice', '1969-12-31', 99999999.99), (null, X'ff20', '2024-2-9', '0.01')",
}

// fuzzDescs are the descriptions the fuzz target calculates on.
func fuzzDescs(t testing.TB) []struct {
	d     *PartDesc
	table string
} {
	return []struct {
		d     *PartDesc
		table string
	}{
		{descHash(t), "t"}, {descKeyName(t), "t"}, {descRange(t), "t"}, {descList(t), "t"},
		{descMetrics(t), "metrics"}, {descRangeCols(t), "t"}, {descHashHash(t), "t"},
		{descListCols(t), "t"}, {descNonTemplate(t), "t"}, {descKeyBA(t, "b,a"), "t"},
		{descKeyTyped(t, dateKey("d", 1, 0)), "t"},
		{descKeyTyped(t, PartKey{Name: "p", Level: 1, Type: 50, Precision: 10, Scale: 2}), "t"},
		{descKeyTyped(t, PartKey{Name: "ts", Level: 1, Type: 18, Scale: 0}), "t"},
	}
}

// FuzzPartCalculate checks that Calculate never panics on any text, that
// it answers the same twice, and that what it answers hangs together: a
// known tablet is one of the table's, with the partition indexes that
// lead to it, and How is one of the explanations.
func FuzzPartCalculate(f *testing.F) {
	for _, s := range calcSeeds {
		f.Add([]byte(s))
	}
	descs := fuzzDescs(f)
	hows := map[string]bool{}
	for _, h := range []string{HowKeys, HowPartition, HowOutOfRange, HowNoKey, HowNoKeyInsert, HowSeveral,
		HowUnsupported, HowNoParam, HowBadValue, HowTooMany, HowEmpty, HowNoTable, HowTwice, HowStatement,
		HowMulti, HowIncomplete, HowKeyType, HowBadName, HowPartExpr, HowNoTimeZone} {
		hows[h] = true
	}
	var lp LiteralParams
	lp.Reset([][]byte{[]byte("1"), []byte("'abc'"), []byte("NULL"), []byte("20240101"), []byte("X'00'")})
	f.Fuzz(func(t *testing.T, sql []byte) {
		facts := Lex(sql)
		for _, fd := range descs {
			for _, params := range []Params{nil, &lp} {
				r, r2 := PartResult{TZ: time.UTC}, PartResult{TZ: time.UTC}
				r.Explain = true
				ref := TableRef{Name: []byte(fd.table)}
				fd.d.Calculate(sql, nil, ref, params, &r)
				fd.d.Calculate(sql, &facts, ref, params, &r2)
				if !hows[r.How] {
					t.Fatalf("%q: How %q", sql, r.How)
				}
				if !facts.MultiStatement && !facts.Incomplete &&
					(r.Known != r2.Known || r.TabletID != r2.TabletID || r.Part != r2.Part || r.Sub != r2.Sub) {
					t.Fatalf("%q: %+v with facts, %+v without", sql, r2, r)
				}
				if r.Known != knownHow(r.How) {
					t.Fatalf("%q: known %v with How %q", sql, r.Known, r.How)
				}
				if r.Known {
					id, ok := fd.d.Tablet(r.Part, r.Sub)
					if !ok || id != r.TabletID {
						t.Fatalf("%q: tablet %d at %d/%d, desc says %d %v", sql, r.TabletID, r.Part, r.Sub, id, ok)
					}
				}
			}
		}
	})
}

// FuzzExecParams checks that decoding any payload never panics and that
// every value read is borrowed from the payload.
func FuzzExecParams(f *testing.F) {
	f.Add(execPayload([]execParam{{typ: myLongLong, value: leInt(7, 8)}, {typ: myVarString, value: lenencStr("abc")}}, true), uint8(2), []byte(nil))
	f.Add(execPayload([]execParam{{typ: myTiny, null: true}, {typ: myNewDecimal, value: lenencStr("1.5")}}, false), uint8(2), []byte{1, 0, 0xf6, 0})
	f.Add([]byte{1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1, 0xfe, 0, 0xfc, 0xff, 0xff}, uint8(1), []byte(nil))
	f.Add(execPayload([]execParam{{typ: myDateTime, value: []byte{7, 0xe8, 7, 2, 29, 1, 2, 3}}, {typ: myDate, value: []byte{4, 0xe7, 7, 2, 29}}}, true), uint8(2), []byte(nil))
	f.Fuzz(func(t *testing.T, payload []byte, n uint8, kept []byte) {
		var p ExecParams
		p.Reset(payload, int(n), kept)
		for i := -1; i <= int(n); i++ {
			v, ok := p.Param(i)
			if !ok {
				continue
			}
			if v.Kind == ValUnknown || v.Kind > ValTime {
				t.Fatalf("param %d: kind %d reported", i, v.Kind)
			}
			if len(v.Str) > 0 {
				base := uintptr(unsafe.Pointer(unsafe.SliceData(payload)))
				s := uintptr(unsafe.Pointer(unsafe.SliceData(v.Str)))
				if s < base || s+uintptr(len(v.Str)) > base+uintptr(len(payload)) {
					t.Fatalf("param %d: %q not in the payload", i, v.Str)
				}
			}
		}
	})
}
