package obsim

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"strings"
	"testing"

	"obgate/mysqlproto"
)

func TestFindUserVarAssignments(t *testing.T) {
	for _, tc := range []struct {
		sql         string
		sure, maybe string
	}{
		{"SELECT 1", "", ""},
		{"SELECT * FROM t WHERE a = @x", "", ""},
		{"SELECT '@x', `@y` -- @z\n/* @w */ FROM t", "", ""},
		{"SELECT @@session.time_zone, @@x", "", ""},
		{"SET @a = 1, @b = 'x', @c = NULL, @d = 1.5", "a,b,c,d", ""},
		{"SET @a := 1", "a", ""},
		{"set @A = @b + 1", "a", ""},
		{"SET @@session.time_zone = '+01:00', @f = 'y'", "f", ""},
		{"SET SESSION sql_mode = '', @g = (SELECT @h := 2)", "g,h", ""},
		{"SET @`odd name` = 1, @'q' = 2", "odd name,q", ""},
		{"SELECT 5 INTO @e", "e", ""},
		{"SELECT a, b INTO @x, @y FROM t LIMIT 1", "x,y", ""},
		{"SELECT a FROM t INTO @x FOR UPDATE", "x", ""},
		{"SELECT @n := @n + 1 FROM t", "n", ""},
		{"UPDATE t SET c = (@old := c) WHERE id = 1", "old", ""},
		{"SELECT @a = 1", "", ""},
		{"UPDATE t SET c = @v", "", ""},
		{"INSERT INTO t SET c = @v", "", ""},
		{"CREATE USER 'u'@'localhost'", "", ""},
		{"SET PASSWORD FOR 'u'@'h' = PASSWORD('x')", "", ""},
		{"CALL p(@in, @out)", "", "in,out"},
		{"CALL p(@a := 1, @b)", "a", "b"},
		{"LOAD DATA INFILE 'f' INTO TABLE t (@c1, c2) SET c1 = @c1 * 2", "", "c1"},
		{"SET @m1 = 1; SELECT 2; SET @m2 = 3", "m1,m2", ""},
		{"SET STATEMENT max_statement_time = 1 FOR SELECT 1 INTO @s", "s", ""},
		{"EXECUTE stmt USING @a, @b", "", ""},
		{"PREPARE stmt FROM @sql", "", ""},
	} {
		r := findUserVarAssignments(lex(tc.sql).toks)
		if got := strings.Join(r.sure, ","); got != tc.sure {
			t.Errorf("%s: sure %q, want %q", tc.sql, got, tc.sure)
		}
		if got := strings.Join(r.maybe, ","); got != tc.maybe {
			t.Errorf("%s: maybe %q, want %q", tc.sql, got, tc.maybe)
		}
	}
}

func TestUserVarLiteral(t *testing.T) {
	col := func(typ byte, cs uint16) *mysqlproto.Column { return &mysqlproto.Column{Type: typ, Charset: cs} }
	bin, utf8 := mysqlproto.CharsetBinary, mysqlproto.CharsetUTF8MB4
	for _, tc := range []struct {
		col         *mysqlproto.Column
		v           []byte
		noBackslash bool
		want        string
	}{
		{col(mysqlproto.TypeBlob, bin), nil, false, "NULL"},
		{col(mysqlproto.TypeLongLong, bin), []byte("-12"), false, "-12"},
		{col(mysqlproto.TypeLongLong, bin), []byte("18446744073709551615"), false, "18446744073709551615"},
		{col(mysqlproto.TypeNewDecimal, bin), []byte("1.50"), false, "1.50"},
		{col(mysqlproto.TypeDouble, bin), []byte("1.5"), false, "1.5e0"},
		{col(mysqlproto.TypeDouble, bin), []byte("-1e300"), false, "-1e300"},
		{col(mysqlproto.TypeDouble, bin), []byte("2.5e-7"), false, "2.5e-7"},
		{col(mysqlproto.TypeBlob, bin), []byte{0, 0xff}, false, "X'00ff'"},
		{col(mysqlproto.TypeBlob, bin), []byte{}, false, "X''"},
		{col(mysqlproto.TypeBlob, utf8), []byte("abc"), false, "'abc'"},
		{col(mysqlproto.TypeBlob, utf8), []byte{}, false, "''"},
		{col(mysqlproto.TypeBlob, utf8), []byte("it's"), false, "'it''s'"},
		{col(mysqlproto.TypeBlob, utf8), []byte("a\\b\x00c"), false, `'a\\b\0c'`},
		{col(mysqlproto.TypeBlob, utf8), []byte("a\\b'"), true, `'a\b'''`},
		{col(mysqlproto.TypeBlob, utf8), []byte("12"), false, "'12'"},
		{col(mysqlproto.TypeLongLong, bin), []byte("x"), false, "X'78'"}, // not a number: no bare text
	} {
		if got := userVarLiteral(tc.col, tc.v, tc.noBackslash); got != tc.want {
			t.Errorf("%#x %q: %s, want %s", tc.col.Type, tc.v, got, tc.want)
		}
	}
	for s, want := range map[string]bool{"1": true, "-1.5": true, "+2e10": true, "1.": true, ".5": true,
		"": false, "-": false, "1e": false, "e5": false, "0x10": false, "1 ": false, "NaN": false} {
		if isNumberText([]byte(s)) != want {
			t.Errorf("isNumberText(%q) = %v", s, !want)
		}
	}
}

// uvReport is a session-state report read the way ODP reads it: every
// SESSION_TRACK_SYSTEM_VARIABLES pair before the "__NULL" separator is a
// system variable, every pair after it a user variable.
type uvReport struct {
	sys, user []string // "name=value"
	sep       bool
	entries   int // SESSION_TRACK_SYSTEM_VARIABLES entries
	sepEntry  int // the entry holding the separator
	schema    string
}

func parseUVReport(t *testing.T, state []byte) uvReport {
	t.Helper()
	var r uvReport
	it := mysqlproto.SessionStates(state)
	for {
		typ, data, ok := it.Next()
		if !ok {
			break
		}
		switch typ {
		case mysqlproto.SessionTrackSchema:
			db, _, _ := mysqlproto.ReadLenEncString(data, 0)
			r.schema = string(db)
		case mysqlproto.SessionTrackSystemVariables:
			r.entries++
			for pos := 0; pos < len(data); {
				n, v, next, ok := mysqlproto.ParseSystemVariable(data, pos)
				if !ok {
					t.Fatalf("bad system variable entry %x", data)
				}
				pos = next
				switch {
				case string(n) == "__NULL" && string(v) == "__NULL":
					if r.sep {
						t.Fatalf("two separators in %x", state)
					}
					r.sep, r.sepEntry = true, r.entries
				case r.sep:
					r.user = append(r.user, string(n)+"="+string(v))
				default:
					r.sys = append(r.sys, string(n)+"="+string(v))
				}
			}
		}
	}
	if it.Malformed() {
		t.Fatalf("malformed session state %x", state)
	}
	return r
}

func (r uvReport) hasSys(name string) bool {
	for _, kv := range r.sys {
		if strings.HasPrefix(kv, name+"=") {
			return true
		}
	}
	return false
}

// dialAsODP logs a mysqlproto.Client in with ODP's client type: an
// OBServer reports changed session state, user variables included, only to
// ODP and OceanBase drivers.
func dialAsODP(t *testing.T, n *Node) *mysqlproto.Client {
	t.Helper()
	cl, err := mysqlproto.Dial(t.Context(), n.Addr(), mysqlproto.ClientOptions{User: "root@test", Database: "test",
		Attrs: []mysqlproto.ConnAttr{{Key: mysqlproto.AttrMySQLClientType, Value: mysqlproto.ClientTypeOBProxy}}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cl.Close() })
	return cl
}

func TestUserVariablesReported(t *testing.T) {
	c := testCluster(t)
	n := c.Node("zone1-1")
	cl := dialAsODP(t, n)
	exec := func(q string) uvReport {
		t.Helper()
		r, err := cl.Exec(q)
		if err != nil {
			t.Fatalf("%s: %v", q, err)
		}
		if len(r.Columns) != 0 {
			t.Fatalf("%s: result set, want OK", q)
		}
		return parseUVReport(t, r.SessionState)
	}
	wantUsers := func(q string, r uvReport, users ...string) {
		t.Helper()
		if !r.sep || strings.Join(r.user, " ") != strings.Join(users, " ") {
			t.Errorf("%s: separator %v, user variables %q, want %q", q, r.sep, r.user, users)
		}
		if r.sep && (r.entries != 1 || r.sepEntry != 1) {
			t.Errorf("%s: %d system-variable entries, want one holding everything", q, r.entries)
		}
	}

	q := "SET @a = 1, @b = 'x', @c = NULL, @d = 1.5"
	wantUsers(q, exec(q), "a=1", "b='x'", "c=NULL", "d=1.5")
	q = "SELECT 5 INTO @e"
	wantUsers(q, exec(q), "e=5")

	q = "SET @@session.time_zone = '+01:00', @f = 'y'"
	r := exec(q)
	wantUsers(q, r, "f='y'")
	if !r.hasSys("time_zone") {
		t.Errorf("%s: system variables %q lack time_zone", q, r.sys)
	}

	// No user variable assigned: no separator.
	for _, q := range []string{"SET @@session.time_zone = '+02:00'", "DO 1", "DO @a + 1",
		"UPDATE orders SET amount = amount WHERE id = 3"} {
		r, err := cl.Exec(q)
		if err != nil {
			t.Fatalf("%s: %v", q, err)
		}
		if rep := parseUVReport(t, r.SessionState); rep.sep || len(rep.user) > 0 {
			t.Errorf("%s: unexpected user variables %+v", q, rep)
		}
	}

	// OceanBase variables, the partition hit and MariaDB's variables all
	// come before the separator, in the same entry.
	q = "SET ob_query_timeout = 5000000, @g1 = 'it''s'"
	r = exec(q)
	wantUsers(q, r, "g1='it''s'")
	if !r.hasSys("ob_query_timeout") {
		t.Errorf("%s: system variables %q", q, r.sys)
	}
	q = "UPDATE orders SET amount = (@old := amount) WHERE id = 3"
	r = exec(q)
	if len(r.user) != 1 || !strings.HasPrefix(r.user[0], "old=") || !r.hasSys(mysqlproto.OBPartitionHitVar) {
		t.Errorf("%s: %+v", q, r)
	}
	// Assignments are reported even when the value does not change.
	q = "SET @a = 1"
	wantUsers(q, exec(q), "a=1")

	// Types: each reported literal, replayed, gives the same value of
	// the same type.
	for _, tc := range []struct{ set, name, want string }{
		{"SET @i = -42", "i", "-42"},
		{"SET @u = 18446744073709551615", "u", "18446744073709551615"},
		{"SET @dec = CAST(2.5 AS DECIMAL(10,3))", "dec", "2.500"},
		{"SET @dbl = 1.5e0", "dbl", "1.5e0"},
		{"SET @s = 'it''s'", "s", "'it''s'"},
		{`SET @bs = 'a\\b\'c'`, "bs", `'a\\b''c'`},
		{"SET @bin = X'00ff'", "bin", "X'00ff'"},
		{"SET @empty = ''", "empty", "''"},
		{"SET @nul = NULL", "nul", "NULL"},
		{"SET @numstr = '12'", "numstr", "'12'"},
		{"SET @dt = CAST('2024-01-02 03:04:05' AS DATETIME)", "dt", "'2024-01-02 03:04:05'"},
	} {
		r := exec(tc.set)
		wantUsers(tc.set, r, tc.name+"="+tc.want)
		// A fresh variable: assigning NULL keeps a variable's old type.
		if _, err := cl.Exec(fmt.Sprintf("SET @replayed_%s = %s", tc.name, tc.want)); err != nil {
			t.Errorf("%s: replaying %s: %v", tc.set, tc.want, err)
			continue
		}
		res, err := cl.Query(fmt.Sprintf("SELECT @%s, @replayed_%s, @%[1]s <=> @replayed_%[1]s", tc.name, tc.name))
		if err != nil {
			t.Fatal(err)
		}
		if a, b := res.Columns[0], res.Columns[1]; a.Type != b.Type || a.Charset != b.Charset || string(res.Rows[0][2]) != "1" {
			t.Errorf("%s: replayed %s: %#x/%d %q vs %#x/%d %q", tc.set, tc.want,
				a.Type, a.Charset, res.Rows[0][0], b.Type, b.Charset, res.Rows[0][1])
		}
	}

	// The read-back keeps the statement's warnings.
	exec("SET @w = 'x' + 1")
	if res, err := cl.Query("SHOW WARNINGS"); err != nil || len(res.Rows) != 1 || string(res.Rows[0][1]) != "1292" {
		t.Errorf("warnings after SET: %v %v", res, err)
	}

	// Under NO_BACKSLASH_ESCAPES a backslash is an ordinary character.
	exec("SET SESSION sql_mode = CONCAT(@@sql_mode, ',NO_BACKSLASH_ESCAPES')")
	q = `SET @nb = 'x\y'`
	wantUsers(q, exec(q), `nb='x\y'`)
	exec("SET SESSION sql_mode = DEFAULT")
}

func TestUserVariablesCall(t *testing.T) {
	c := testCluster(t)
	cl := dialAsODP(t, c.Node("zone2-1"))
	for _, q := range []string{"DROP PROCEDURE IF EXISTS obsim_uv_double",
		"CREATE PROCEDURE obsim_uv_double(IN x INT, OUT y INT) SET y = x * 2"} {
		if _, err := cl.Exec(q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	defer cl.Exec("DROP PROCEDURE IF EXISTS obsim_uv_double")
	if _, err := cl.Exec("SET @cin = 21"); err != nil {
		t.Fatal(err)
	}
	// @cin is an IN argument and keeps its value: only @cout is reported.
	r, err := cl.Exec("CALL obsim_uv_double(@cin, @cout)")
	if err != nil {
		t.Fatal(err)
	}
	if rep := parseUVReport(t, r.SessionState); strings.Join(rep.user, " ") != "cout=42" {
		t.Errorf("CALL: %+v", rep)
	}
	// Unchanged: nothing to report.
	r, err = cl.Exec("CALL obsim_uv_double(@cin, @cout)")
	if err != nil {
		t.Fatal(err)
	}
	if rep := parseUVReport(t, r.SessionState); rep.sep {
		t.Errorf("second CALL: %+v", rep)
	}
}

// TestUserVariablesProtocols checks the report on the OK that ends a
// result set (DEPRECATE_EOF), after multi-statements, over OB 2.0 framing
// and after COM_STMT_EXECUTE.
func TestUserVariablesProtocols(t *testing.T) {
	c := testCluster(t)
	n := c.Node("zone1-1")

	// SELECT @u := 7 returns a row; its closing OK carries the variable.
	cl, err := dialOB(t, n.Addr(), obLogin{user: "root@test", db: "test", proxy: true,
		caps: mysqlproto.DefaultClientCapability | mysqlproto.ClientDeprecateEOF | mysqlproto.ClientMultiStatements})
	if err != nil {
		t.Fatal(err)
	}
	cl.pio.ResetSequence()
	if err := cl.pio.WritePacketFlush(append([]byte{byte(mysqlproto.ComQuery)}, "SELECT @u := 7"...)); err != nil {
		t.Fatal(err)
	}
	var last []byte
	for range 4 { // column count, column, row, OK
		last = cl.read()
	}
	ok, good := mysqlproto.ParseOK(last, cl.caps)
	if rep := parseUVReport(t, ok.SessionState); !good || last[0] != mysqlproto.EOFHeader || strings.Join(rep.user, " ") != "u=7" {
		t.Errorf("result-set OK %x: %+v", last, rep)
	}

	// Multi-statements: the final OK reports what all of them assigned.
	r := cl.query("SET @m1 = 1; DO 0; SET @m2 = 'two'")
	if r.err != nil || !r.ok.Status.Has(mysqlproto.StatusMoreResultsExists) {
		t.Fatalf("first result %+v", r)
	}
	if rep := parseUVReport(t, r.ok.SessionState); rep.sep {
		t.Errorf("intermediate OK reports user variables: %+v", rep)
	}
	cl.read() // DO 0
	final, _ := mysqlproto.ParseOK(cl.read(), cl.caps)
	if rep := parseUVReport(t, final.SessionState); strings.Join(rep.user, " ") != "m1=1 m2='two'" || final.Status.Has(mysqlproto.StatusMoreResultsExists) {
		t.Errorf("final OK: %+v", rep)
	}

	// OB 2.0 framing, as ODP connects.
	ob, err := dialOB(t, n.Addr(), obLogin{user: "root@test", db: "test", proxy: true,
		obCaps: mysqlproto.OBCapProtocolV2 | mysqlproto.OBCapProxyNewExtraInfo})
	if err != nil {
		t.Fatal(err)
	}
	if !ob.granted.Has(mysqlproto.OBCapProtocolV2) {
		t.Fatalf("OB20 not granted: %v", ob.granted)
	}
	r = ob.query("SET @p = 'ob20', ob_trx_timeout = 100")
	if rep := parseUVReport(t, r.ok.SessionState); r.err != nil || strings.Join(rep.user, " ") != "p='ob20'" || !rep.hasSys("ob_trx_timeout") {
		t.Errorf("OB20 OK: %+v %+v", r, rep)
	}
	if r := ob.query("SELECT @p"); r.err != nil || len(r.rows) != 1 || r.rows[0][0] != "ob20" {
		t.Errorf("SELECT @p: %+v", r)
	}

	// COM_STMT_PREPARE / COM_STMT_EXECUTE of SET @ps = 42.
	cl.pio.ResetSequence()
	if err := cl.pio.WritePacketFlush(append([]byte{byte(mysqlproto.ComStmtPrepare)}, "SET @ps = 42"...)); err != nil {
		t.Fatal(err)
	}
	prep := cl.read()
	if prep[0] != mysqlproto.OKHeader || len(prep) < 9 || binary.LittleEndian.Uint16(prep[5:]) != 0 || binary.LittleEndian.Uint16(prep[7:]) != 0 {
		t.Fatalf("prepare answer %x", prep)
	}
	exe := []byte{byte(mysqlproto.ComStmtExecute)}
	exe = append(exe, prep[1:5]...)
	exe = append(exe, 0, 1, 0, 0, 0)
	cl.pio.ResetSequence()
	if err := cl.pio.WritePacketFlush(exe); err != nil {
		t.Fatal(err)
	}
	p := cl.read()
	ok, good = mysqlproto.ParseOK(p, cl.caps)
	if rep := parseUVReport(t, ok.SessionState); !good || p[0] != mysqlproto.OKHeader || strings.Join(rep.user, " ") != "ps=42" {
		t.Errorf("execute OK %x: %+v", p, rep)
	}

	// A client that does not track session state gets plain OKs.
	plain, err := dialOB(t, n.Addr(), obLogin{user: "root@test", db: "test", proxy: true,
		caps: mysqlproto.DefaultClientCapability &^ mysqlproto.ClientSessionTrack})
	if err != nil {
		t.Fatal(err)
	}
	if r := plain.query("SET @plain = 1"); r.err != nil || len(r.ok.SessionState) != 0 {
		t.Errorf("non-tracking client: %+v", r)
	}

	// A plain MySQL client (no OceanBase client type) gets MariaDB's state
	// as is: one pair per entry, no separator, no user variables, as an
	// OBServer answers a normal client.
	for _, typ := range []string{"", "some_client"} {
		var attrs []mysqlproto.ConnAttr
		if typ != "" {
			attrs = []mysqlproto.ConnAttr{{Key: mysqlproto.AttrMySQLClientType, Value: typ}}
		}
		mc, err := mysqlproto.Dial(t.Context(), n.Addr(), mysqlproto.ClientOptions{User: "root@test", Database: "test", Attrs: attrs})
		if err != nil {
			t.Fatal(err)
		}
		r, err := mc.Exec("SET @@session.time_zone = '+03:00', @mysql = 1")
		mc.Close()
		if err != nil {
			t.Fatal(err)
		}
		if rep := parseUVReport(t, r.SessionState); rep.sep || len(rep.user) > 0 || !rep.hasSys("time_zone") || rep.entries != len(rep.sys) {
			t.Errorf("client type %q: %+v", typ, rep)
		}
	}
	// The OceanBase drivers are told, like ODP.
	jc, err := mysqlproto.Dial(t.Context(), n.Addr(), mysqlproto.ClientOptions{User: "root@test", Database: "test",
		Attrs: []mysqlproto.ConnAttr{{Key: mysqlproto.AttrMySQLClientType, Value: mysqlproto.ClientTypeOBJDBC}}})
	if err != nil {
		t.Fatal(err)
	}
	defer jc.Close()
	if r, err := jc.Exec("SET @jdbc = 2"); err != nil || strings.Join(parseUVReport(t, r.SessionState).user, " ") != "jdbc=2" {
		t.Errorf("JDBC client: %v %v", r, err)
	}
}

// TestUserVariablesDriver uses go-sql-driver (which does not track session
// state): values and prepared assignments behave as on MariaDB, and the
// literal obsim reports for an escaped string is accepted back.
func TestUserVariablesDriver(t *testing.T) {
	c := testCluster(t)
	n := c.Node("zone3-1")
	db := openDB(t, n, "root@test", "", "test")
	conn, err := db.Conn(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	for _, q := range []string{"SET @g = 'it''s \\\\ \"q\"'", "SELECT 5 INTO @e"} {
		if _, err := conn.ExecContext(t.Context(), q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	if _, err := conn.ExecContext(t.Context(), "SET @ps = ?", 3); err != nil { // prepared
		t.Fatal(err)
	}
	var g, e, ps string
	if err := conn.QueryRowContext(t.Context(), "SELECT @g, @e, @ps").Scan(&g, &e, &ps); err != nil {
		t.Fatal(err)
	}
	if g != `it's \ "q"` || e != "5" || ps != "3" {
		t.Errorf("values %q %q %q", g, e, ps)
	}

	// The literal ODP is told, replayed on the driver's session.
	cl := dialAsODP(t, n)
	r, err := cl.Exec("SET @g = 'it''s \\\\ \"q\"'")
	if err != nil {
		t.Fatal(err)
	}
	rep := parseUVReport(t, r.SessionState)
	if len(rep.user) != 1 || !strings.HasPrefix(rep.user[0], "g=") {
		t.Fatalf("report %+v", rep)
	}
	lit := strings.TrimPrefix(rep.user[0], "g=")
	if _, err := conn.ExecContext(t.Context(), "SET @g2 = "+lit); err != nil {
		t.Fatalf("replay %s: %v", lit, err)
	}
	var same int
	if err := conn.QueryRowContext(t.Context(), "SELECT @g2 = @g").Scan(&same); err != nil || same != 1 {
		t.Errorf("replayed %s: equal %d %v", lit, same, err)
	}
}

func TestUserVarState(t *testing.T) {
	maria := mysqlproto.AppendSystemVariableState(nil, "time_zone", "+01:00")
	maria = mysqlproto.AppendSchemaState(maria, "db1")
	maria = mysqlproto.AppendSystemVariableState(maria, "autocommit", "ON")
	extra := mysqlproto.AppendSystemVariableState(nil, mysqlproto.OBPartitionHitVar, "1")
	got := userVarState(maria, extra, []varChange{{"a", "1"}, {"b", "'x'"}})

	var want []byte
	want = append(want, mysqlproto.SessionTrackSystemVariables)
	var data []byte
	for _, s := range []string{"time_zone", "+01:00", "autocommit", "ON", mysqlproto.OBPartitionHitVar, "1",
		"__NULL", "__NULL", "a", "1", "b", "'x'"} {
		data = mysqlproto.AppendLenEncString(data, s)
	}
	want = mysqlproto.AppendLenEncBytes(want, data)
	want = mysqlproto.AppendSchemaState(want, "db1")
	if !bytes.Equal(got, want) {
		t.Errorf("state\n got %x\nwant %x", got, want)
	}

	// Malformed MariaDB state is left alone.
	bad := []byte{0x00, 0x05, 0x01}
	got = userVarState(bad, nil, []varChange{{"a", "1"}})
	if !bytes.HasPrefix(got, bad) {
		t.Errorf("malformed state rewritten: %x", got)
	}
}
