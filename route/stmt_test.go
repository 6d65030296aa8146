package route

import "testing"

func TestClassify(t *testing.T) {
	cases := []struct {
		sql    string
		kind   StmtKind
		second string
	}{
		{"select 1", StmtSelect, ""},
		{"  /* hint */ SELECT proxy_version()", StmtSelect, "PROXY_VERSION"},
		{"/*+READ_CONSISTENCY(WEAK)*/ select * from t", StmtSelect, ""},
		{"-- c\n# d\n insert into t values (1)", StmtInsert, ""},
		{"((select 1))", StmtSelect, ""},
		{"kill query 12", StmtKill, "QUERY"},
		{"KILL 12", StmtKill, ""},
		{"show proxyconfig like 'x'", StmtShow, "PROXYCONFIG"},
		{"Start Transaction", StmtBegin, "TRANSACTION"},
		{"begin", StmtBegin, ""},
		{"ping proxy", StmtPing, "PROXY"},
		{"UPDATE t SET a=1", StmtUpdate, ""},
		{"", StmtOther, ""},
		{"/* unterminated", StmtOther, ""},
		{"--", StmtOther, ""},
		{"--\nselect 1", StmtSelect, ""},
		{"--\tshow proxyconfig", StmtOther, ""},
		{"--x select 1", StmtOther, ""},
		{"/*!40101 SET x = 1 */", StmtOther, ""},
		{"ShOw PrOxYcOnFiG", StmtShow, "PROXYCONFIG"},
		{"xyzzy", StmtOther, ""},
		{"averyveryveryverylongkeywordthatisnotthere", StmtOther, ""},
	}
	for _, c := range cases {
		got := Classify([]byte(c.sql))
		if got.Kind != c.kind || got.Second != c.second {
			t.Errorf("Classify(%q) = %v/%q, want %v/%q", c.sql, got.Kind, got.Second, c.kind, c.second)
		}
	}
}

func TestClassifyAllocs(t *testing.T) {
	sql := []byte("/* x */ SELECT c FROM sbtest1 WHERE id=1")
	if n := testing.AllocsPerRun(100, func() { _ = Classify(sql) }); n != 0 {
		t.Fatalf("Classify allocates %v times", n)
	}
}

func FuzzClassify(f *testing.F) {
	for _, s := range []string{"select 1", "/* */kill query 1", "-- x\nshow proxyconfig", "((", "/*", "#"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		info := Classify(b)
		if info.Kind >= stmtKinds {
			t.Fatalf("kind %d", info.Kind)
		}
	})
}
