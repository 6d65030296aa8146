package reactor

import "testing"

func TestParseKill(t *testing.T) {
	cases := []struct {
		sql  string
		want killStmt
		ok   bool
	}{
		{"KILL 5", killStmt{id: 5}, true},
		{"kill connection 7;", killStmt{id: 7}, true},
		{"/* x */ KILL QUERY 9", killStmt{query: true, id: 9}, true},
		{"KILL QUERY", killStmt{}, false},
		{"KILL PROXYSESSION 3", killStmt{}, false},
		{"KILL 4294967296", killStmt{}, false},
		{"KILL 5 6", killStmt{}, false},
	}
	for _, c := range cases {
		got, ok := parseKill([]byte(c.sql))
		if ok != c.ok || (ok && got != c.want) {
			t.Errorf("parseKill(%q) = %+v, %v; want %+v, %v", c.sql, got, ok, c.want, c.ok)
		}
	}
}

func FuzzParseKill(f *testing.F) {
	for _, s := range []string{"KILL 1", "kill query 2;", "KILL CONNECTION 3 ;;", "KILL", "kill query x"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) { _, _ = parseKill(b) })
}
