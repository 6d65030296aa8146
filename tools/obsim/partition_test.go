package obsim

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"obgate/internal/obpart"
	"obgate/internal/obpart/golden"
)

// obsim's placement against vectors computed by OceanBase's own code
// (internal/obpart/golden): each vector's values, cast to columns of
// their types as obsim casts statement values, must fall in the partition
// OceanBase puts them in.

func loadGolden(t *testing.T) *golden.Vectors {
	t.Helper()
	v, err := golden.Load()
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// goldenColumn is a column of a vector value's type and the value as a
// statement literal gives it.
func goldenColumn(t *testing.T, v golden.Value) (column, value) {
	c := column{class: colInt, obType: 5, obTypeNum: 5, collation: 63}
	switch v.Kind {
	case golden.Null:
		return c, value{kind: valNull}
	case golden.Int:
		return c, value{kind: valInt, i: v.Int}
	case golden.Uint:
		c.class = colUint
		return c, value{kind: valUint, u: uint64(v.Int)}
	case golden.CI, golden.PadBin, golden.Binary:
		c.class = colString
		c.collation = map[golden.Kind]int{golden.CI: 45, golden.PadBin: 46, golden.Binary: 63}[v.Kind]
		c.coll = obpart.CollOf(int64(c.collation))
		return c, value{kind: valString, s: string(v.Bytes)}
	case golden.Date:
		c.class = colDate
		return c, value{kind: valString, s: v.Text}
	case golden.Datetime:
		c.class, c.scale = colDatetime, 6
		return c, value{kind: valString, s: v.Text}
	case golden.TS:
		c.class, c.scale = colTimestamp, 6
		return c, value{kind: valString, s: time.UnixMicro(v.Int).UTC().Format("2006-01-02 15:04:05.000000")}
	case golden.Decimal:
		c.class, c.precision, c.scale = colDecimal, int64(v.Precision), int64(v.Scale)
		return c, value{kind: valString, s: v.Text}
	}
	t.Fatalf("value %s", v.Spelled)
	return c, value{}
}

func TestKeyPlacementMatchesOceanBase(t *testing.T) {
	n := 0
	for _, vec := range loadGolden(t).Keys {
		l := &partLevel{fn: partKey, num: vec.Parts}
		row := map[string]value{}
		for i, gv := range vec.Values {
			c, v := goldenColumn(t, gv)
			c.name = fmt.Sprintf("c%d", i)
			l.cols = append(l.cols, &c)
			row[c.name] = v
		}
		set, all := l.candidates([]map[string]value{row}, time.UTC)
		if all || len(set) != 1 || !set[vec.Part] {
			var spelled []string
			for _, v := range vec.Values {
				spelled = append(spelled, v.Spelled)
			}
			t.Errorf("KEY %v of %d: partitions %v (all %v), OceanBase %d", spelled, vec.Parts, set, all, vec.Part)
		}
		n++
	}
	if n < 500 {
		t.Fatalf("only %d vectors", n)
	}
}

func TestHashPlacementMatchesOceanBase(t *testing.T) {
	for _, vec := range loadGolden(t).Hashes {
		c := intCol
		c.name = "id"
		l := &partLevel{fn: partHash, num: vec.Parts, cols: []*column{&c}}
		v := value{kind: valInt, i: vec.Value}
		if vec.Null {
			v = value{kind: valNull}
		}
		if set, all := l.candidates([]map[string]value{{"id": v}}, nil); all || !set[vec.Part] || len(set) != 1 {
			t.Errorf("HASH(%d) of %d: %v, OceanBase %d", vec.Value, vec.Parts, set, vec.Part)
		}
	}
}

func TestComparisonsMatchOceanBase(t *testing.T) {
	for _, vec := range loadGolden(t).Cmps {
		c := column{class: colString, collation: int(vec.Collation), coll: obpart.CollOf(vec.Collation)}
		a, b := value{kind: valString, s: string(vec.A)}, value{kind: valString, s: string(vec.B)}
		if got := compareValue(a, b, &c); got != vec.Sign {
			t.Errorf("collation %d: compare(%q, %q) = %d, OceanBase %d", vec.Collation, vec.A, vec.B, got, vec.Sign)
		}
	}
}

// testTable builds a table model without MariaDB.
func testTable(t *testing.T, cols map[string]column, part, sub *PartSpec) *tableModel {
	t.Helper()
	tm := &tableModel{cols: map[string]*column{}, tenant: &tenantModel{name: "t"}, db: "d", name: "x"}
	i := 0
	for _, name := range []string{"id", "name", "day", "host", "region"} {
		if c, ok := cols[name]; ok {
			c.name, c.ordinal = name, i
			tm.cols[name] = &c
			tm.colOrder = append(tm.colOrder, name)
			i++
		}
	}
	var err error
	if part != nil {
		if tm.part, err = buildLevel(part, tm.cols, false, time.UTC); err != nil {
			t.Fatal(err)
		}
	}
	if sub != nil {
		if tm.sub, err = buildLevel(sub, tm.cols, true, time.UTC); err != nil {
			t.Fatal(err)
		}
	}
	switch {
	case tm.part == nil:
		tm.tablets = []*tablet{{name: "x"}}
	case tm.sub == nil:
		for i := range tm.part.num {
			tm.tablets = append(tm.tablets, &tablet{part: i, name: tm.part.names[i]})
		}
	default:
		for i := range tm.part.num {
			for j := range tm.sub.num {
				tm.tablets = append(tm.tablets, &tablet{part: i, sub: j, name: tm.part.names[i] + tm.sub.names[j]})
			}
		}
	}
	return tm
}

var (
	intCol = column{class: colInt, obType: 5, obTypeNum: 5, collation: 63}
	strCol = column{class: colString, obType: 22, obTypeNum: 22, collation: 45, coll: obpart.CollGeneralCI}
)

func partsOf(t *testing.T, tm *tableModel, sql string) string {
	t.Helper()
	tablets, all := tm.tabletsFor(analyze(sql))
	if all {
		return "ALL"
	}
	var names []string
	for _, tb := range tablets {
		names = append(names, tb.name)
	}
	return strings.Join(names, ",")
}

func TestPartitionCalculation(t *testing.T) {
	hash := testTable(t, map[string]column{"id": intCol, "name": strCol}, &PartSpec{Type: "HASH", Columns: []string{"id"}, Num: 4}, nil)
	key := testTable(t, map[string]column{"id": intCol, "name": strCol}, &PartSpec{Type: "KEY", Columns: []string{"name"}, Num: 5}, nil)
	keyInt := testTable(t, map[string]column{"id": intCol}, &PartSpec{Type: "KEY", Columns: []string{"id"}, Num: 7}, nil)
	rng := testTable(t, map[string]column{"id": intCol}, &PartSpec{Type: "RANGE", Columns: []string{"id"}, Partitions: []PartDef{
		{Name: "p100", LessThan: []string{"100"}}, {Name: "p200", LessThan: []string{"200"}}, {Name: "pmax", LessThan: []string{"MAXVALUE"}}}}, nil)
	list := testTable(t, map[string]column{"id": intCol, "region": strCol}, &PartSpec{Type: "LIST COLUMNS", Columns: []string{"region"}, Partitions: []PartDef{
		{Name: "east", Values: []Tuple{{"'hz'"}, {"'sh'"}}}, {Name: "north", Values: []Tuple{{"'bj'"}}}, {Name: "other", Values: []Tuple{{"DEFAULT"}}}}}, nil)
	two := testTable(t, map[string]column{"day": intCol, "host": strCol},
		&PartSpec{Type: "RANGE COLUMNS", Columns: []string{"day"}, Partitions: []PartDef{{Name: "p0", LessThan: []string{"20240101"}}, {Name: "p1", LessThan: []string{"MAXVALUE"}}}},
		&PartSpec{Type: "KEY", Columns: []string{"host"}, Num: 2})
	for _, tc := range []struct {
		tm   *tableModel
		sql  string
		want string
	}{
		{hash, "SELECT * FROM x WHERE id = 6", "p2"},
		{hash, "SELECT * FROM x WHERE id = -7", "p3"},
		{hash, "SELECT * FROM x WHERE id = '9'", "p1"},
		{hash, "SELECT * FROM x WHERE id IN (1, 5, 2)", "p1,p2"},
		{hash, "SELECT * FROM x WHERE name = 'a' AND id = 3 AND name <> 'b'", "p3"},
		{hash, "SELECT * FROM x WHERE id = 3 OR id = 4", "ALL"},
		{hash, "SELECT * FROM x WHERE (id = 3)", "p3"},
		{hash, "SELECT * FROM x WHERE id > 3", "ALL"},
		{hash, "SELECT * FROM x t WHERE t.id = 4", "p0"},
		{hash, "SELECT * FROM x t WHERE other.id = 4", "ALL"},
		{hash, "SELECT * FROM x", "ALL"},
		{hash, "SELECT * FROM x WHERE id = NULL", "p0"},
		{hash, "INSERT INTO x (name, id) VALUES ('a', 5), ('b', 9)", "p1"},
		{hash, "INSERT INTO x VALUES (2, 'a')", "p2"},
		{hash, "INSERT INTO x SET id = 7, name = 'q'", "p3"},
		{hash, "REPLACE INTO d.x (id) VALUES (4)", "p0"},
		{hash, "UPDATE x SET name = 'z' WHERE id = 1", "p1"},
		{hash, "DELETE FROM x WHERE id = 10 LIMIT 1", "p2"},
		{hash, "SELECT * FROM x WHERE id BETWEEN 1 AND 3 AND id = 2", "p2"},
		{key, "SELECT * FROM x WHERE name = 'abc'", "p3"},
		{key, "SELECT * FROM x WHERE name = 'ABC  '", "p3"},
		{key, "SELECT * FROM x WHERE name = 'hello world'", "p1"},
		{keyInt, "SELECT * FROM x WHERE id = 42", "p3"},
		{keyInt, "SELECT * FROM x WHERE id = 12345", "p5"},
		{rng, "SELECT * FROM x WHERE id = 99", "p100"},
		{rng, "SELECT * FROM x WHERE id = 100", "p200"},
		{rng, "SELECT * FROM x WHERE id = 5000", "pmax"},
		{rng, "SELECT * FROM x WHERE id = -5", "p100"},
		{list, "SELECT * FROM x WHERE region = 'SH'", "east"},
		{list, "SELECT * FROM x WHERE region = 'bj'", "north"},
		{list, "SELECT * FROM x WHERE region = 'gz'", "other"},
		{two, "SELECT * FROM x WHERE day = 20231231 AND host = 'abc'", "p0sp1"},
		{two, "SELECT * FROM x WHERE day = 20240101", "p1sp0,p1sp1"},
		{two, "SELECT * FROM x WHERE host = 'a'", "p0sp0,p1sp0"},
	} {
		if got := partsOf(t, tc.tm, tc.sql); got != tc.want {
			t.Errorf("%s: got %s, want %s", tc.sql, got, tc.want)
		}
	}
}

func TestPartitionSpecErrors(t *testing.T) {
	cols := map[string]*column{"id": {name: "id", class: colInt}, "s": {name: "s", class: colString}, "d": {name: "d", class: colOther}}
	for _, spec := range []PartSpec{
		{Type: "HASH", Columns: []string{"s"}, Num: 2},
		{Type: "HASH", Columns: []string{"id"}},
		{Type: "KEY", Columns: []string{"nope"}, Num: 2},
		{Type: "KEY", Columns: []string{"d"}, Num: 2},
		{Type: "RANGE", Columns: []string{"id"}, Partitions: []PartDef{{LessThan: []string{"5"}}, {LessThan: []string{"3"}}}},
		{Type: "LIST", Columns: []string{"id"}, Partitions: []PartDef{{Values: []Tuple{{"DEFAULT"}}}, {Values: []Tuple{{"DEFAULT"}}}}},
		{Type: "SPLIT", Columns: []string{"id"}},
	} {
		if _, err := buildLevel(&spec, cols, false, time.UTC); err == nil {
			t.Errorf("%+v accepted", spec)
		}
	}
}

func TestAnalyzeStatements(t *testing.T) {
	for _, tc := range []struct {
		sql  string
		want string
	}{
		{"select 1", "select table= weak=false"},
		{"SELECT /*+ READ_CONSISTENCY(WEAK) */ * FROM `db`.`t` AS a WHERE a.k = 1", "select db.t weak=true where=k:[1]"},
		{"select * from t where k in ('a','b') and j = -3", "select t weak=false where=j:[-3] k:['a' 'b']"},
		{"select * from (select * from t) s", "select table= weak=false"},
		{"select * from dual", "select table= weak=false"},
		{"insert into t(a,b) values (1,'x'),(2,?)", "insert t weak=false insert=[a b] rows=2"},
		{"/* c */ update t set a=1 where b=2", "update t weak=false where=b:[2]"},
		{"delete from db.t where id = 0x10", "delete db.t weak=false where=id:[16]"},
		{"select a from t where a=1 for update", "select t weak=false where=a:[1] forupdate"},
		{"use mydb", "use table= weak=false"},
	} {
		st := analyze(tc.sql)
		got := describeStmt(st)
		if got != tc.want {
			t.Errorf("%s:\n got %s\nwant %s", tc.sql, got, tc.want)
		}
	}
}

func describeStmt(st *stmtInfo) string {
	kinds := map[stmtKind]string{stmtOther: "other", stmtSelect: "select", stmtInsert: "insert", stmtReplace: "replace",
		stmtUpdate: "update", stmtDelete: "delete", stmtSet: "set", stmtUse: "use"}
	var b strings.Builder
	b.WriteString(kinds[st.kind] + " ")
	if st.table == "" {
		b.WriteString("table=")
	} else if st.db != "" {
		b.WriteString(st.db + "." + st.table)
	} else {
		b.WriteString(st.table)
	}
	fmt.Fprintf(&b, " weak=%v", st.weak)
	if st.where != nil {
		b.WriteString(" where=")
		var keys []string
		for k := range st.where {
			keys = append(keys, k)
		}
		sortStrings(keys)
		for i, k := range keys {
			if i > 0 {
				b.WriteString(" ")
			}
			var vals []string
			for _, v := range st.where[k] {
				vals = append(vals, v.String())
			}
			fmt.Fprintf(&b, "%s:[%s]", k, strings.Join(vals, " "))
		}
	}
	if st.insertRows != nil {
		fmt.Fprintf(&b, " insert=%v rows=%d", st.insertCols, len(st.insertRows))
	}
	if st.forUpdate {
		b.WriteString(" forupdate")
	}
	return b.String()
}

func sortStrings(s []string) {
	for i := 1; i < len(s); i++ {
		for j := i; j > 0 && s[j] < s[j-1]; j-- {
			s[j], s[j-1] = s[j-1], s[j]
		}
	}
}

func TestLexer(t *testing.T) {
	lx := lex("SELECT /*+ hint */ `a``b`, 'it''s', \"q\\\"\", @@session.ob_query_timeout, @u, x'41', 1.5e3, -- c\n 7 # d")
	var kinds []string
	for _, tk := range lx.toks {
		kinds = append(kinds, fmt.Sprintf("%d:%s", tk.kind, tk.val))
	}
	want := "0:SELECT 0:a`b 5:, 1:it's 5:, 1:q\" 5:, 3:ob_query_timeout 5:, 4:u 5:, 1:A 5:, 2:1.5e3 5:, 2:7"
	if got := strings.Join(kinds, " "); got != want {
		t.Errorf("tokens\n got %s\nwant %s", got, want)
	}
	if len(lx.hints) != 1 || lx.hints[0] != " hint " {
		t.Errorf("hints %q", lx.hints)
	}
	if lx.toks[7].aux != "session" {
		t.Errorf("scope %q", lx.toks[7].aux)
	}
}

func TestSessionVariableRewrites(t *testing.T) {
	s := &session{c: &Cluster{topo: &Topology{Version: "4.2.1.0"}}, vars: map[string]string{"ob_query_timeout": "5"}, lastHit: true}
	for _, tc := range []struct{ in, want string }{
		{"SELECT @@ob_query_timeout", "SELECT 5 AS `@@ob_query_timeout`"},
		{"select @@session.ob_trx_timeout, @@autocommit", "select 86400000000 AS `@@session.ob_trx_timeout`, @@autocommit"},
		{"SELECT ob_version() AS v", "SELECT '4.2.1.0' AS v"},
		{"SELECT ob_version()", "SELECT '4.2.1.0' AS `ob_version()`"},
		{"select @@ob_query_timeout + 1 from dual", "select 5 + 1 from dual"},
		{"select @@ob_read_consistency", "select 'STRONG' AS `@@ob_read_consistency`"},
		{"select @@transaction_isolation", "select @@tx_isolation AS `@@transaction_isolation`"},
		{"select 1", "select 1"},
	} {
		got, _ := s.rewriteRefs(tc.in, lex(tc.in).toks)
		if got != tc.want {
			t.Errorf("rewrite %q\n got %q\nwant %q", tc.in, got, tc.want)
		}
	}
	for _, tc := range []struct {
		in, relay string
		changes   string
		err       uint16
	}{
		{"SET @@ob_query_timeout = 10000000, @@autocommit = 1;", "SET @@session.autocommit = 1", "ob_query_timeout=10000000", 0},
		{"SET @@autocommit = 0, @@session.sql_mode = ''", "SET @@session.autocommit = 0, @@session.sql_mode = ''", "", 0},
		{"SET @@tx_isolation = 'READ-COMMITTED'", "SET @@tx_isolation = 'READ-COMMITTED'", "", 0},
		{"SET transaction_isolation = 'READ-COMMITTED'", "SET tx_isolation = 'READ-COMMITTED'", "", 0},
		{"SET SESSION transaction_read_only = 0", "SET SESSION tx_read_only = 0", "", 0},
		{"set ob_read_consistency = WEAK", "", "ob_read_consistency=WEAK", 0},
		{"SET SESSION ob_trx_timeout = '100', sql_mode = ''", "SET SESSION sql_mode = ''", "ob_trx_timeout=100", 0},
		{"SET @@session.transaction_isolation = 'READ-COMMITTED'", "SET @@session.tx_isolation = 'READ-COMMITTED'", "", 0},
		{"SET @a = 1, @@ob_query_timeout = DEFAULT", "SET @a = 1", "ob_query_timeout=10000000", 0},
		{"SET NAMES utf8mb4", "SET NAMES utf8mb4", "", 0},
		{"SET @@ob_proxy_partition_hit = 0", "", "", 1238},
		{"SET @@ob_query_timeout = 'abc'", "", "", 1231},
	} {
		relay, changes, serr := s.handleSet(tc.in, lex(tc.in).toks)
		var parts []string
		for _, ch := range changes {
			parts = append(parts, ch.name+"="+ch.value)
		}
		code := uint16(0)
		if serr != nil {
			code = serr.Code
		}
		if relay != tc.relay || strings.Join(parts, ",") != tc.changes || code != tc.err {
			t.Errorf("handleSet(%q) = %q %v %d", tc.in, relay, parts, code)
		}
	}
}

func TestParseIdentity(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want identity
	}{
		{"root", identity{user: "root", tenant: "sys"}},
		{"root@test", identity{user: "root", tenant: "test"}},
		{"app@t1#c1", identity{user: "app", tenant: "t1", cluster: "c1"}},
		{"app@t1#c1:42", identity{user: "app", tenant: "t1", cluster: "c1", clusterID: 42, hasClusterID: true}},
		{"u#c", identity{user: "u", tenant: "sys", cluster: "c"}},
	} {
		if got := parseIdentity(tc.in); got != tc.want {
			t.Errorf("parseIdentity(%q) = %+v", tc.in, got)
		}
	}
}
