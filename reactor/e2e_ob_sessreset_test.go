package reactor_test

import (
	"bytes"
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/go-sql-driver/mysql"

	"obgate/internal/testkit"
	"obgate/internal/testproxy"
	"obgate/mysqlproto"
	"obgate/tools/obsim"
)

// The tests in this file drive commands that change a whole session
// (COM_CHANGE_USER, COM_RESET_CONNECTION, COM_SET_OPTION, the handshake's
// charset) through obgate in OceanBase mode and read the session back with
// many statements, which enable_cached_server=false spreads over every
// node: each node must show the session as the client left it, whether its
// server session is the one the command ran on or one obgate opened or
// synced later.

// Another account of tenant obTenant, for COM_CHANGE_USER.
const (
	obUser2 = "app2"
	obPass2 = "app2-Secret9"
)

// addOBUser2 creates obUser2 on the cluster's MariaDB, where obsim checks
// passwords.
func addOBUser2(t *testing.T, c *obsim.Cluster) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), hangLimit)
	defer cancel()
	for _, q := range []string{
		fmt.Sprintf("CREATE USER IF NOT EXISTS '%s'@'%%' IDENTIFIED BY '%s'", obUser2, obPass2),
		fmt.Sprintf("GRANT ALL PRIVILEGES ON *.* TO '%s'@'%%'", obUser2),
	} {
		if _, err := c.Admin().ExecContext(ctx, q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
}

// obRaw is a raw client session through obgate in OceanBase mode.
type obRaw struct {
	t *testing.T
	*testkit.RawConn
}

// dialOBRaw logs in as obFullUser to obDB with mysql_native_password;
// extra capabilities are added to the login's.
func dialOBRaw(t *testing.T, p *testproxy.Proxy, extra mysqlproto.Capability) *obRaw {
	t.Helper()
	c, err := testkit.DialRaw(p.Addr, hangLimit)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	login := c.LoginPacket(obFullUser, obPass, obDB)
	c.Caps |= extra
	mysqlproto.PatchResponseCapability(login, c.Caps)
	if err := c.WritePacket(1, login); err != nil {
		t.Fatal(err)
	}
	if p, _, err := c.ReadPacket(hangLimit); err != nil || len(p) == 0 || p[0] != mysqlproto.OKHeader {
		t.Fatalf("login: %q %v", p, err)
	}
	return &obRaw{t: t, RawConn: c}
}

// rawResult is one result of a statement: rows, an OK or an ERR.
type rawResult struct {
	rows [][]string // NULL as "NULL"
	err  *mysqlproto.SQLError
}

func (r rawResult) String() string {
	if r.err != nil {
		return "ERR " + r.err.Error()
	}
	return fmt.Sprint(r.rows)
}

// command sends a command packet and reads the results of its answer
// (several for a multi-statement query).
func (c *obRaw) command(payload []byte) []rawResult {
	c.t.Helper()
	if err := c.WritePacket(0, payload); err != nil {
		c.t.Fatal(err)
	}
	var out []rawResult
	for {
		pkts, err := c.ReadResponse(hangLimit)
		if err != nil {
			c.t.Fatalf("answer to %q: %v", payload[:min(len(payload), 64)], err)
		}
		res, more := c.decode(pkts)
		out = append(out, res)
		if !more {
			return out
		}
	}
}

// decode turns the packets of one result into a rawResult and says whether
// more results follow.
func (c *obRaw) decode(pkts [][]byte) (rawResult, bool) {
	first := pkts[0]
	switch {
	case len(first) > 0 && first[0] == mysqlproto.ERRHeader:
		e, _ := mysqlproto.ParseERR(first)
		return rawResult{err: mysqlproto.SQLErrorFromERR(e)}, false
	case len(first) > 0 && (first[0] == mysqlproto.OKHeader || first[0] == mysqlproto.EOFHeader):
		ok, _ := mysqlproto.ParseOK(first, c.Caps)
		if first[0] == mysqlproto.EOFHeader {
			eof, _ := mysqlproto.ParseEOF(first)
			ok.Status = eof.Status
		}
		return rawResult{}, ok.Status.Has(mysqlproto.StatusMoreResultsExists)
	}
	n, _, _ := mysqlproto.ReadLenEncInt(first, 0)
	last := pkts[len(pkts)-1]
	var res rawResult
	if last[0] == mysqlproto.ERRHeader {
		e, _ := mysqlproto.ParseERR(last)
		res.err = mysqlproto.SQLErrorFromERR(e)
	}
	for _, p := range pkts[n+2 : len(pkts)-1] {
		vals, nulls := make([][]byte, n), make([]bool, n)
		mysqlproto.ReadTextRow(p, vals, nulls)
		row := make([]string, n)
		for i := range vals {
			row[i] = string(vals[i])
			if nulls[i] {
				row[i] = "NULL"
			}
		}
		res.rows = append(res.rows, row)
	}
	eof, _ := mysqlproto.ParseEOF(last)
	return res, res.err == nil && eof.Status.Has(mysqlproto.StatusMoreResultsExists)
}

// query runs one statement and returns its results.
func (c *obRaw) query(q string) []rawResult {
	c.t.Helper()
	return c.command(append([]byte{byte(mysqlproto.ComQuery)}, q...))
}

// row runs a single-row query that must succeed and returns the row.
func (c *obRaw) row(q string) []string {
	c.t.Helper()
	res := c.query(q)
	if len(res) != 1 || res[0].err != nil || len(res[0].rows) != 1 {
		c.t.Fatalf("%s: %+v", abbrev(q), res)
	}
	return res[0].rows[0]
}

// exec runs a statement that must succeed.
func (c *obRaw) exec(q string) {
	c.t.Helper()
	for _, r := range c.query(q) {
		if r.err != nil {
			c.t.Fatalf("%s: %v", abbrev(q), r.err)
		}
	}
}

// changeUser sends COM_CHANGE_USER and answers auth switches with
// password; it returns the final ERR, or nil after an OK. switches gets
// the data of each auth switch request.
func (c *obRaw) changeUser(cu *mysqlproto.ChangeUser, password string, switches *[][]byte) *mysqlproto.SQLError {
	c.t.Helper()
	if err := c.WritePacket(0, cu.Append(nil, c.Caps)); err != nil {
		c.t.Fatal(err)
	}
	for range 4 {
		p, seq, err := c.ReadPacket(hangLimit)
		if err != nil {
			c.t.Fatalf("answer to COM_CHANGE_USER: %v", err)
		}
		switch p[0] {
		case mysqlproto.OKHeader:
			return nil
		case mysqlproto.ERRHeader:
			e, _ := mysqlproto.ParseERR(p)
			return mysqlproto.SQLErrorFromERR(e)
		case mysqlproto.AuthSwitchRequestHeader:
			sw, ok := mysqlproto.ParseAuthSwitchRequest(p)
			if !ok || sw.Plugin != mysqlproto.AuthNativePassword {
				c.t.Fatalf("auth switch %q", p)
			}
			if switches != nil {
				*switches = append(*switches, append([]byte(nil), sw.Data...))
			}
			if err := c.WritePacket(seq+1, mysqlproto.NativeToken(sw.Data, []byte(password))); err != nil {
				c.t.Fatal(err)
			}
		default:
			c.t.Fatalf("answer to COM_CHANGE_USER: %q", p)
		}
	}
	c.t.Fatal("COM_CHANGE_USER did not end")
	return nil
}

// prepare prepares a statement and returns obgate's statement id.
func (c *obRaw) prepare(q string) uint32 {
	c.t.Helper()
	if err := c.WritePacket(0, append([]byte{byte(mysqlproto.ComStmtPrepare)}, q...)); err != nil {
		c.t.Fatal(err)
	}
	p, _, err := c.ReadPacket(hangLimit)
	if err != nil || p[0] != mysqlproto.OKHeader || len(p) < 12 {
		c.t.Fatalf("prepare %s: %q %v", q, p, err)
	}
	id := uint32(p[1]) | uint32(p[2])<<8 | uint32(p[3])<<16 | uint32(p[4])<<24
	columns := int(p[5]) | int(p[6])<<8
	for range columns + 1 { // definitions and their EOF (no parameters)
		if _, _, err := c.ReadPacket(hangLimit); err != nil {
			c.t.Fatal(err)
		}
	}
	return id
}

// execute runs a prepared statement without parameters and returns its
// ERR, or nil when it ran.
func (c *obRaw) execute(id uint32) *mysqlproto.SQLError {
	c.t.Helper()
	pl := []byte{byte(mysqlproto.ComStmtExecute), byte(id), byte(id >> 8), byte(id >> 16), byte(id >> 24), 0, 1, 0, 0, 0}
	res := c.command(pl)
	return res[0].err
}

// spread runs n statements q (marked mk-i) and checks that every one
// returned want and that they ran on at least two nodes; it returns their
// log entries. Where all n landed on one node (a random start can do that,
// and a node a busy machine's probes found slow is avoided for a while),
// it runs more, each checked the same way, until two nodes ran them or
// hangLimit passed.
func spread(t *testing.T, c *obsim.Cluster, cl *obRaw, mk, q string, n int, want []string) []obsim.LogEntry {
	t.Helper()
	var all []obsim.LogEntry
	i := 0
	run := func() {
		tag := fmt.Sprintf("%s-%d ", mk, i)
		i++
		got := cl.row(fmt.Sprintf("%s /* %s*/", q, tag))
		if fmt.Sprint(got) != fmt.Sprint(want) {
			t.Errorf("%s: got %q, want %q (ran on%s)", tag, got, want, describeEntries(proxyEntries(c, tag)))
		}
		all = append(all, proxyEntries(c, tag)...)
	}
	for range n {
		run()
	}
	testkit.EventuallyDescribe(t, hangLimit, func() bool {
		if len(nodesOf(all)) >= 2 {
			return true
		}
		run()
		return false
	}, func() string { return fmt.Sprintf("the %d statements ran on %v, want several nodes", i, nodesOf(all)) })
	return all
}

// TestOBChangeUser changes the user of a session with COM_CHANGE_USER, as
// mysql2's changeUser and Connector/J do, with and without
// enable_proxy_scramble: afterwards every node runs the session's
// statements as the new user, with the new database and charset, no user
// variable or prepared statement of the old session, and SHOW
// PROXYSESSION shows the new user. A client that names another plugin gets
// the server's auth switch, relayed. A wrong password gets ERR 1045 and
// leaves the old user with a reset session; another tenant is refused
// without a change.
func TestOBChangeUser(t *testing.T) {
	testkit.CheckLeaks(t)
	c := startOBSim(t)
	addOBUser2(t, c)
	for _, scramble := range []string{"false", "true"} {
		t.Run("enable_proxy_scramble="+scramble, func(t *testing.T) {
			p := startOBProxy(t, c, "netpoll", "enable_cached_server", "false", "enable_proxy_scramble", scramble)
			for _, tc := range []struct {
				name, user, plugin string
			}{
				{"native", obUser2, mysqlproto.AuthNativePassword},
				{"full name", obUser2 + "@" + obTenant + "#" + obClusterName, mysqlproto.AuthNativePassword},
				{"auth switch", obUser2, mysqlproto.AuthCachingSha2},
			} {
				t.Run(tc.name, func(t *testing.T) {
					resetOBSim(t, c)
					cl := dialOBRaw(t, p, 0)
					mk := newMarker("cu")
					cl.exec(fmt.Sprintf("SET @v = 'before' /* %s */", mk))
					spread(t, c, cl, mk+"-old", "SELECT CURRENT_USER(), @v", 9, []string{obUser + "@%", "before"})
					stmt := cl.prepare("SELECT 1")

					token := mysqlproto.NativeToken(cl.Greeting.AuthData, []byte(obPass2))
					if tc.plugin == mysqlproto.AuthCachingSha2 {
						token = mysqlproto.CachingSha2Token(cl.Greeting.AuthData, []byte(obPass2))
					}
					var switches [][]byte
					cu := &mysqlproto.ChangeUser{User: tc.user, AuthResponse: token, Database: obDB,
						Charset: 8, HasCharset: true, AuthPlugin: tc.plugin, HasAttrs: true} // latin1_swedish_ci
					if err := cl.changeUser(cu, obPass2, &switches); err != nil {
						t.Fatalf("COM_CHANGE_USER to %s: %v", tc.user, err)
					}
					if tc.plugin != mysqlproto.AuthNativePassword {
						if len(switches) != 1 || !bytes.Equal(switches[0], cl.Greeting.AuthData) {
							t.Errorf("auth switches %q, want one carrying obgate's scramble %q", switches, cl.Greeting.AuthData)
						}
					}

					es := spread(t, c, cl, mk+"-new", "SELECT CURRENT_USER(), SUBSTRING_INDEX(USER(), '@', 1), @v, DATABASE(), @@collation_connection",
						24, []string{obUser2 + "@%", obUser2, "NULL", obDB, "latin1_swedish_ci"})
					for _, e := range es {
						if e.User != obUser2 || e.Tenant != obTenant {
							t.Errorf("entry #%d on %s ran as %s@%s, want %s@%s", e.Seq, e.Node, e.User, e.Tenant, obUser2, obTenant)
						}
					}
					if err := cl.execute(stmt); err == nil || err.Code != mysqlproto.ERUnknownStmtHandler {
						t.Errorf("executing a statement prepared before COM_CHANGE_USER: %v, want ERR %d", err, mysqlproto.ERUnknownStmtHandler)
					}
					s, ok := p.Server.Session(cl.Greeting.ConnectionID)
					if !ok {
						t.Fatal("obgate lost the session")
					}
					if info := s.Info(); info.User != tc.user || info.Identity.User != obUser2 || info.Identity.Tenant != obTenant || info.DB != obDB {
						t.Errorf("obgate shows the session as %q (%+v) in %q, want %q (user %s, tenant %s) in %q",
							info.User, info.Identity, info.DB, tc.user, obUser2, obTenant, obDB)
					}
				})
			}

			t.Run("wrong password", func(t *testing.T) {
				resetOBSim(t, c)
				cl := dialOBRaw(t, p, 0)
				mk := newMarker("cubad")
				cl.exec(fmt.Sprintf("SET @v = 'before' /* %s */", mk))
				spread(t, c, cl, mk+"-old", "SELECT @v", 9, []string{"before"})
				cu := &mysqlproto.ChangeUser{User: obUser2, AuthResponse: mysqlproto.NativeToken(cl.Greeting.AuthData, []byte("wrong")),
					Database: obDB, Charset: 45, HasCharset: true, AuthPlugin: mysqlproto.AuthNativePassword, HasAttrs: true}
				if err := cl.changeUser(cu, "wrong", nil); err == nil || err.Code != mysqlproto.ERAccessDenied {
					t.Fatalf("COM_CHANGE_USER with a wrong password: %v, want ERR %d", err, mysqlproto.ERAccessDenied)
				}
				// As on MySQL: the old user and database, a reset session.
				es := spread(t, c, cl, mk+"-after", "SELECT CURRENT_USER(), @v, DATABASE()", 24, []string{obUser + "@%", "NULL", obDB})
				for _, e := range es {
					if e.User != obUser {
						t.Errorf("entry #%d on %s ran as %s, want %s", e.Seq, e.Node, e.User, obUser)
					}
				}
				s, ok := p.Server.Session(cl.Greeting.ConnectionID)
				if !ok {
					t.Fatal("obgate lost the session")
				}
				if info := s.Info(); info.User != obFullUser || info.Identity.User != obUser {
					t.Errorf("after a refused COM_CHANGE_USER obgate shows the session as %q (%+v)", info.User, info.Identity)
				}
			})

			t.Run("other tenant", func(t *testing.T) {
				resetOBSim(t, c)
				cl := dialOBRaw(t, p, 0)
				mk := newMarker("cutenant")
				cl.exec(fmt.Sprintf("SET @v = 'before' /* %s */", mk))
				cu := &mysqlproto.ChangeUser{User: obUser2 + "@sys", AuthResponse: mysqlproto.NativeToken(cl.Greeting.AuthData, []byte(obPass2)),
					Charset: 45, HasCharset: true, AuthPlugin: mysqlproto.AuthNativePassword}
				if err := cl.changeUser(cu, obPass2, nil); err == nil || err.Code != mysqlproto.ERNotSupportedYet {
					t.Fatalf("COM_CHANGE_USER to another tenant: %v, want ERR %d", err, mysqlproto.ERNotSupportedYet)
				}
				for _, e := range c.Log() {
					if e.Command == "change_user" {
						t.Errorf("a COM_CHANGE_USER to another tenant reached %s", e.Node)
					}
				}
				spread(t, c, cl, mk+"-after", "SELECT CURRENT_USER(), @v", 12, []string{obUser + "@%", "before"})
			})
		})
	}
}

// TestOBResetConnection sends COM_RESET_CONNECTION, as Connector/J's
// resetConnection does, on a session whose state lives on several server
// sessions: afterwards no node shows a user variable or prepared statement
// of before, the database stays, obgate keeps only the server session the
// reset ran on, and state set after the reset on that server session
// reaches every other node.
func TestOBResetConnection(t *testing.T) {
	testkit.CheckLeaks(t)
	c := startOBSim(t)
	p := startOBProxy(t, c, "netpoll", "enable_cached_server", "false")
	cl := dialOBRaw(t, p, 0)
	mk := newMarker("reset")
	cl.exec(fmt.Sprintf("SET @v = 'before', sql_mode = 'ANSI_QUOTES' /* %s */", mk))
	spread(t, c, cl, mk+"-old", "SELECT @v, @@sql_mode", 9, []string{"before", "ANSI_QUOTES"})
	stmt := cl.prepare("SELECT 1")

	if res := cl.command([]byte{byte(mysqlproto.ComResetConnection)}); len(res) != 1 || res[0].err != nil {
		t.Fatalf("COM_RESET_CONNECTION: %+v", res)
	}
	// obgate answers a ping itself, after it finished with the reset.
	if res := cl.command([]byte{byte(mysqlproto.ComPing)}); len(res) != 1 || res[0].err != nil {
		t.Fatalf("COM_PING: %+v", res)
	}
	s, ok := p.Server.Session(cl.Greeting.ConnectionID)
	if !ok {
		t.Fatal("obgate lost the session")
	}
	if ss := s.ServerSessions(); len(ss) != 1 || !ss[0].Current {
		t.Errorf("after COM_RESET_CONNECTION obgate holds the server sessions %+v, want only the one the reset ran on", ss)
	}
	for _, v := range s.Variables() {
		if v.Kind != "database" {
			t.Errorf("after COM_RESET_CONNECTION obgate still replays %+v", v)
		}
	}
	var resetNode string
	for _, e := range c.Log() {
		if e.Command == "reset_connection" && e.Client == "proxy" {
			resetNode = e.Node
		}
	}
	// ROW_COUNT() keeps the statement on the server session of the reset.
	cl.exec(fmt.Sprintf("SET sql_mode = 'PIPES_AS_CONCAT', @rc = ROW_COUNT() /* %s-set */", mk))
	if e := entryFor(t, c, mk+"-set"); e.Node != resetNode {
		t.Fatalf("the SET after the reset ran on %s, not on %s where the reset ran", e.Node, resetNode)
	}
	spread(t, c, cl, mk+"-new", "SELECT @v, DATABASE(), @@sql_mode, 'a' || 'b'", 24, []string{"NULL", obDB, "PIPES_AS_CONCAT", "ab"})
	if err := cl.execute(stmt); err == nil || err.Code != mysqlproto.ERUnknownStmtHandler {
		t.Errorf("executing a statement prepared before COM_RESET_CONNECTION: %v, want ERR %d", err, mysqlproto.ERUnknownStmtHandler)
	}
}

// TestOBSetOptionReplayed turns multi-statements on (off) with
// COM_SET_OPTION on a session that logged in without (with) them: every
// node then runs (refuses) multi-statement queries, also after
// COM_RESET_CONNECTION, which keeps the option.
func TestOBSetOptionReplayed(t *testing.T) {
	testkit.CheckLeaks(t)
	c := startOBSim(t)
	p := startOBProxy(t, c, "netpoll", "enable_cached_server", "false")
	for _, tc := range []struct {
		name  string
		login mysqlproto.Capability
		opt   byte
		multi bool
	}{
		{"on", 0, 0, true},
		{"off", mysqlproto.ClientMultiStatements, 1, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			resetOBSim(t, c)
			cl := dialOBRaw(t, p, tc.login)
			mk := newMarker("opt" + tc.name)
			res := cl.command([]byte{byte(mysqlproto.ComSetOption), tc.opt, 0})
			if len(res) != 1 || res[0].err != nil {
				t.Fatalf("COM_SET_OPTION: %+v", res)
			}
			check := func(phase string, n int) {
				t.Helper()
				var all []obsim.LogEntry
				for i := range n {
					tag := fmt.Sprintf("%s-%s-%d ", mk, phase, i)
					res := cl.query(fmt.Sprintf("SELECT 1 /* %s*/; SELECT 2", tag))
					all = append(all, proxyEntries(c, tag)...)
					ran := len(res) == 2 && res[0].err == nil && res[1].err == nil
					refused := len(res) == 1 && res[0].err != nil && res[0].err.Code == 1064
					if (tc.multi && !ran) || (!tc.multi && !refused) {
						t.Errorf("%s: %+v, want multi-statements %s (ran on%s)", tag, res, tc.name, describeEntries(proxyEntries(c, tag)))
					}
				}
				if nodes := nodesOf(all); len(nodes) < 2 {
					t.Errorf("the %d queries ran on %v, want several nodes", n, nodes)
				}
			}
			check("set", 24)
			if res := cl.command([]byte{byte(mysqlproto.ComResetConnection)}); len(res) != 1 || res[0].err != nil {
				t.Fatalf("COM_RESET_CONNECTION: %+v", res)
			}
			check("reset", 12)
		})
	}
}

// TestOBHandshakeCollation logs in with go-sql-driver's collation
// (latin1_general_ci, sent in the handshake response as go-sql-driver's
// TestCollation does): every server session, the first and the later
// ones, has the client's charset and collation.
func TestOBHandshakeCollation(t *testing.T) {
	testkit.CheckLeaks(t)
	c := startOBSim(t)
	p := startOBProxy(t, c, "netpoll", "enable_cached_server", "false")
	_, conn := obConn(t, p, func(cfg *mysql.Config) { cfg.Collation = "latin1_general_ci" })
	mk := newMarker("coll")
	want := []string{"latin1_general_ci", "latin1", "latin1", "latin1"}
	var all []obsim.LogEntry
	for i := range 24 {
		tag := fmt.Sprintf("%s-%d ", mk, i)
		got := rowStrings(t, conn, fmt.Sprintf("SELECT @@collation_connection, @@character_set_client, "+
			"@@character_set_connection, @@character_set_results /* %s*/", tag))
		if len(got) != 1 || strings.Join(got[0], ",") != strings.Join(want, ",") {
			t.Errorf("%s: got %q, want %q (ran on%s)", tag, got, want, describeEntries(proxyEntries(c, tag)))
		}
		all = append(all, proxyEntries(c, tag)...)
	}
	if nodes := nodesOf(all); len(nodes) < 2 {
		t.Errorf("the reads ran on %v, want several nodes", nodes)
	}
}

// TestOBConnectionIDOneForLife: CONNECTION_ID() of an OceanBase-mode
// session is the id obgate's handshake gave it, on every node its
// statements reach, with both client_session_id_version values, and
// COM_CHANGE_USER keeps it (as an OBServer keeps a session's client
// session id). CONNECTION_ID() runs where the statement before it ran, so
// a plain statement before each one moves it from node to node.
func TestOBConnectionIDOneForLife(t *testing.T) {
	testkit.CheckLeaks(t)
	c := startOBSim(t)
	addOBUser2(t, c)
	for _, version := range []string{"1", "2"} {
		t.Run("client_session_id_version="+version, func(t *testing.T) {
			p := startOBProxy(t, c, "netpoll", "enable_cached_server", "false", "client_session_id_version", version)
			resetOBSim(t, c)
			cl := dialOBRaw(t, p, 0)
			id := fmt.Sprint(cl.Greeting.ConnectionID)
			mk := newMarker("connid")
			check := func(phase string) {
				var all []obsim.LogEntry
				for i := range 12 {
					cl.row(fmt.Sprintf("SELECT 1 /* %s-%s-move-%d */", mk, phase, i))
					tag := fmt.Sprintf("%s-%s-%d ", mk, phase, i)
					if got := cl.row(fmt.Sprintf("SELECT CONNECTION_ID() /* %s*/", tag)); fmt.Sprint(got) != "["+id+"]" {
						t.Errorf("%s: CONNECTION_ID() = %v, want obgate's id %s (ran on%s)", tag, got, id, describeEntries(proxyEntries(c, tag)))
					}
					all = append(all, proxyEntries(c, tag)...)
				}
				if nodes := nodesOf(all); len(nodes) < 2 {
					t.Errorf("%s: CONNECTION_ID() ran on %v, want several nodes", phase, nodes)
				}
			}
			check("before")
			cu := &mysqlproto.ChangeUser{User: obUser2, AuthResponse: mysqlproto.NativeToken(cl.Greeting.AuthData, []byte(obPass2)),
				Database: obDB, Charset: 45, HasCharset: true, AuthPlugin: mysqlproto.AuthNativePassword, HasAttrs: true}
			var switches [][]byte
			if err := cl.changeUser(cu, obPass2, &switches); err != nil {
				t.Fatalf("COM_CHANGE_USER: %v", err)
			}
			check("after")
		})
	}
}
