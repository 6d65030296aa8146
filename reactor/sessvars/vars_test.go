package sessvars

import (
	"testing"

	"obgate/internal/sqltext/sqltexttest"
	"obgate/mysqlproto"
)

func stateOf(pairs ...string) []byte {
	var data []byte
	for i := 0; i+1 < len(pairs); i += 2 {
		data = mysqlproto.AppendLenEncString(data, pairs[i])
		data = mysqlproto.AppendLenEncString(data, pairs[i+1])
	}
	raw := []byte{mysqlproto.SessionTrackSystemVariables}
	raw = mysqlproto.AppendLenEncInt(raw, uint64(len(data)))
	return append(raw, data...)
}

func TestSessionVarsSync(t *testing.T) {
	var v Vars
	var a, b Synced
	if !v.InSync(&a) {
		t.Fatal("empty state must be in sync")
	}
	var fb []string
	v.Learn(append(stateOf("time_zone", "+08:00", "autocommit", "OFF", "ob_proxy_partition_hit", "1",
		"__NULL", "__NULL", "u", "'abc'"), mysqlproto.AppendSchemaState(nil, "db1")...), 0,
		func(n, val []byte) { fb = append(fb, string(n)+"="+string(val)) })
	if len(fb) != 1 || fb[0] != "ob_proxy_partition_hit=1" {
		t.Fatalf("feedback %v", fb)
	}
	if v.db != "db1" || len(v.sys) != 1 || len(v.user) != 1 || !v.hotSet[HotAutocommit] {
		t.Fatalf("state %+v", v)
	}
	v.MarkSynced(&a) // a ran the statement
	if !v.InSync(&a) || v.InSync(&b) {
		t.Fatal("a must be in sync, b not")
	}
	got := string(v.ResetSQL(&b))
	want := "SET @@session.autocommit = 'OFF', @@session.time_zone = '+08:00', @`u` = 'abc'"
	if got != want {
		t.Fatalf("reset SQL\n got %s\nwant %s", got, want)
	}
	v.MarkSynced(&b)
	// A hot variable going back and forth needs no sync where it matches.
	v.Learn(stateOf("autocommit", "ON"), 0, nil)
	v.MarkSynced(&a)
	if v.InSync(&b) {
		t.Fatal("b has autocommit=OFF")
	}
	if got := string(v.ResetSQL(&b)); got != "SET @@session.autocommit = 'ON'" {
		t.Fatalf("hot reset %q", got)
	}
	v.Learn(stateOf("autocommit", "OFF"), 0, nil)
	v.MarkSynced(&a)
	if !v.InSync(&b) {
		t.Fatal("b already has autocommit=OFF: no sync needed")
	}
	// Numbers stay bare, quotes are escaped.
	v.Learn(stateOf("ob_query_timeout", "10000000", "sql_mode", "it's"), 0, nil)
	if got := string(v.ResetSQL(&b)); got != "SET @@session.ob_query_timeout = 10000000, @@session.sql_mode = 'it''s'" {
		t.Fatalf("literals %q", got)
	}
}

// TestSessionVarsResetNames checks how resetSQL writes names: user
// variables backquoted (so @`a b` and @`a“b` replay as the variables they
// are), system variables only when they are plain identifiers, and a
// name that cannot be written at all (empty, or with NUL) left out, so
// that the SET stays one well-formed statement.
func TestSessionVarsResetNames(t *testing.T) {
	var v Vars
	v.Learn(stateOf("sql_mode", "ANSI", "bad name", "1", "x = 1, @@session.y", "2", "a\x00b", "3",
		"__NULL", "__NULL", "a b", "1", "a`b", "2", "x\\", "'v'", "", "4", "n\x00ul", "5"), 0, nil)
	var ss Synced
	got := string(v.ResetSQL(&ss))
	want := "SET @@session.sql_mode = 'ANSI', @`a b` = 1, @`a``b` = 2, @`x\\` = 'v'"
	if got != want {
		t.Fatalf("reset SQL\n got %s\nwant %s", got, want)
	}
}

func BenchmarkSessionVarsInSync(b *testing.B) {
	var v Vars
	v.Learn(stateOf("time_zone", "+08:00", "autocommit", "OFF", "sql_mode", "STRICT_TRANS_TABLES",
		"__NULL", "__NULL", "u", "1"), 0, nil)
	v.SetDB("db1")
	var ss Synced
	v.MarkSynced(&ss)
	b.ReportAllocs()
	for b.Loop() {
		if !v.InSync(&ss) {
			b.Fatal("not in sync")
		}
	}
}

func TestSessionVarsInSyncAllocs(t *testing.T) {
	var v Vars
	v.Learn(stateOf("autocommit", "OFF", "time_zone", "+00:00"), 0, nil)
	var ss Synced
	v.MarkSynced(&ss)
	if n := testing.AllocsPerRun(1000, func() { _ = v.InSync(&ss) }); n != 0 {
		t.Fatalf("inSync allocates %v times", n)
	}
}

// TestPortableLiteral checks that user-variable literals are rewritten
// into forms that read the same under any sql_mode.
func TestPortableLiteral(t *testing.T) {
	cases := []struct {
		lit         string
		noBackslash bool
		want        string
	}{
		{"12", false, "12"},
		{"NULL", false, "NULL"},
		{"X'00ff'", false, "X'00ff'"},
		{"'abc'", false, "'abc'"},
		{"'it''s'", false, "'it''s'"},
		{`'it\'s'`, false, "'it''s'"},
		{`'a\b\\c'`, true, "CONVERT(X'615c625c5c63' USING utf8mb4)"},
		{`'a\nb'`, false, "'a\nb'"}, // a newline needs no backslash in the replay
		{`'x\\y'`, false, "CONVERT(X'785c79' USING utf8mb4)"},
	}
	for _, c := range cases {
		if got := portableLiteral(c.lit, c.noBackslash); got != c.want {
			t.Errorf("portableLiteral(%s, %v) = %s, want %s", c.lit, c.noBackslash, got, c.want)
		}
	}
}

// FuzzSessionVarsLearn feeds arbitrary session-state reports to learn and
// the literals it keeps to resetSQL: no panic, every replayed user
// literal stays a well-formed literal, and the SET statement is a list of
// variable = value assignments under both readings of a backslash.
func FuzzSessionVarsLearn(f *testing.F) {
	f.Add(stateOf("time_zone", "+08:00", "__NULL", "__NULL", "u", "'a''b'"), false)
	f.Add(stateOf("__NULL", "__NULL", "v", `'x\\y'`), true)
	f.Add(mysqlproto.AppendSchemaState(nil, "db"), false)
	f.Add([]byte{0, 5, 1, 'a', 9}, false)
	f.Fuzz(func(t *testing.T, raw []byte, noBackslash bool) {
		var v Vars
		var st mysqlproto.ServerStatus
		if noBackslash {
			st = mysqlproto.StatusNoBackslashEscapes
		}
		v.Learn(raw, st, func(_, _ []byte) {})
		var ss Synced
		checkSetShape(t, v.ResetSQL(&ss))
		for _, e := range v.user {
			if lit := userLiteral(e.Value); lit == "" {
				t.Fatalf("empty literal for %q", e.Value)
			}
		}
		_ = portableLiteral(string(raw), noBackslash)
	})
}

// checkSetShape fails t unless sql is empty or SET followed by one or
// more "variable = value" separated by commas, each value a string, a
// (signed) number or NULL, read with and without backslash escapes.
func checkSetShape(t *testing.T, sql []byte) {
	t.Helper()
	if sql == nil {
		return
	}
	for _, esc := range []bool{true, false} {
		toks := sqltexttest.Tokens(string(sql), esc)
		bad := func(at int) {
			t.Helper()
			t.Fatalf("backslash escapes %v: %q is not a SET of assignments (token %d): %s", esc, sql, at, sqltexttest.Shape(toks))
		}
		if len(toks) == 0 || toks[0].Kind != sqltexttest.Word || toks[0].Text != "SET" {
			bad(0)
		}
		i := 1
		for {
			if i+2 >= len(toks) || toks[i].Kind != sqltexttest.Var || toks[i+1].Kind != sqltexttest.Op || toks[i+1].Text != "=" {
				bad(i)
			}
			i += 2
			if toks[i].Kind == sqltexttest.Op && (toks[i].Text == "-" || toks[i].Text == "+") && i+1 < len(toks) {
				i++
			}
			switch tk := toks[i]; {
			case tk.Kind == sqltexttest.String, tk.Kind == sqltexttest.Number, tk.Kind == sqltexttest.Word && tk.Text == "NULL":
			default:
				bad(i)
			}
			i++
			if i == len(toks) {
				break
			}
			if toks[i].Kind != sqltexttest.Op || toks[i].Text != "," {
				bad(i)
			}
			i++
		}
	}
}
