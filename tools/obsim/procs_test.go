package obsim

import (
	"encoding/binary"
	"fmt"
	"slices"
	"strconv"
	"testing"
	"time"

	"obgate/internal/testkit"
	"obgate/mysqlproto"
)

// odpV2Caps is what ODP asks with client_session_id_version = 2.
const odpV2Caps = mysqlproto.OBCapPartitionTable | mysqlproto.OBCapChangeUser | mysqlproto.OBCapReadWeak |
	mysqlproto.OBCapProtocolV2 | mysqlproto.OBCapProxyNewExtraInfo | mysqlproto.OBCapClientSessionIDV2

// connectionIDOf runs SELECT CONNECTION_ID() and returns the value.
func connectionIDOf(t *testing.T, c *obClient) string {
	t.Helper()
	r := c.query("SELECT CONNECTION_ID()")
	if r.err != nil || len(r.rows) != 1 || !slices.Equal(r.columns, []string{"CONNECTION_ID()"}) {
		t.Fatalf("SELECT CONNECTION_ID(): %+v", r)
	}
	return r.rows[0][0]
}

func TestConnectionID(t *testing.T) {
	c := testCluster(t)
	addr := c.Node("zone1-1").Addr()
	cases := []struct {
		name  string
		login obLogin
		want  string // "" = the server session id (handshake thread id)
	}{
		{"direct", obLogin{user: "root@test"}, ""},
		{"proxy v2", obLogin{user: "root@test", proxy: true, obCaps: odpV2Caps,
			clientSessionID: "305419896", proxyConnID: "9151314442816847873"}, "305419896"},
		{"proxy v1", obLogin{user: "root@test", proxy: true, obCaps: odpServerCaps,
			clientSessionID: "305419897", proxyConnID: "9151314442816847874"}, ""},
		{"proxy without proxy connection id", obLogin{user: "root@test", proxy: true, obCaps: odpServerCaps,
			clientSessionID: "305419898"}, "305419898"},
		{"proxy v2 without client session id", obLogin{user: "root@test", proxy: true, obCaps: odpV2Caps,
			proxyConnID: "9151314442816847875"}, ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			cl, err := dialOB(t, addr, tc.login)
			if err != nil {
				t.Fatal(err)
			}
			want := tc.want
			if want == "" {
				want = strconv.FormatUint(uint64(cl.connID), 10)
			}
			if got := connectionIDOf(t, cl); got != want {
				t.Errorf("CONNECTION_ID() = %s, want %s (handshake id %d)", got, want, cl.connID)
			}
			if tc.login.obCaps.Has(mysqlproto.OBCapClientSessionIDV2) != cl.granted.Has(mysqlproto.OBCapClientSessionIDV2) {
				t.Errorf("granted %v for %v", cl.granted, tc.login.obCaps)
			}
			r := cl.query("SELECT CONNECTION_ID() + 0 AS x, connection_id() FROM DUAL")
			if r.err != nil || !slices.Equal(r.columns, []string{"x", "connection_id()"}) || r.rows[0][0] != want || r.rows[0][1] != want {
				t.Errorf("in an expression: %+v", r)
			}
			if r := cl.query("SET @c = CONNECTION_ID()"); r.err != nil {
				t.Fatal(r.err)
			}
			if r := cl.query("SELECT @c"); r.err != nil || r.rows[0][0] != want {
				t.Errorf("SET @c = CONNECTION_ID(): %+v", r)
			}
		})
	}

	// A MySQL driver's direct login sees the server session id, which
	// has the top bit set, as an OBServer's do.
	db := openDB(t, c.Node("zone2-1"), "root@test", "", "test")
	db.SetMaxOpenConns(1)
	var id uint64
	if err := db.QueryRow("SELECT CONNECTION_ID()").Scan(&id); err != nil {
		t.Fatal(err)
	}
	if id&serverSessionTag == 0 {
		t.Errorf("direct CONNECTION_ID() %d has no server tag", id)
	}
	rows := queryStrings(t, db, "SHOW PROCESSLIST")
	found := false
	for _, r := range rows {
		if r[0] == strconv.FormatUint(id, 10) {
			found = r[4] == "Query" && r[6] == "ACTIVE" && r[7] == "SHOW PROCESSLIST"
		}
	}
	if !found {
		t.Errorf("own session %d not listed as running: %v", id, rows)
	}
}

// waitRunning waits until MariaDB runs sql for one of c's sessions: the
// statement has reached the backend, so obsim lists it as running and a
// KILL QUERY of its session interrupts it.
func waitRunning(t *testing.T, c *Cluster, sql string) {
	t.Helper()
	running := func() (int, error) {
		var n int
		err := c.admin.QueryRow("SELECT COUNT(*) FROM information_schema.PROCESSLIST WHERE COMMAND = 'Query' AND INFO = ?", sql).Scan(&n)
		return n, err
	}
	testkit.EventuallyDescribe(t, 10*time.Second, func() bool {
		n, err := running()
		return err == nil && n > 0
	}, func() string {
		n, err := running()
		return fmt.Sprintf("MariaDB does not run %q (%d sessions, err %v)", sql, n, err)
	})
}

// findRow returns the row whose first column is id.
func findRow(r obResult, id string) ([]string, []bool) {
	for i, row := range r.rows {
		if row[0] == id {
			return row, r.nulls[i]
		}
	}
	return nil, nil
}

func TestShowProcesslist(t *testing.T) {
	c := testCluster(t)
	n1, n2, n3 := c.Node("zone1-1"), c.Node("zone2-1"), c.Node("zone3-1")
	// A proxied session (client session id 4242) running a statement, an
	// idle direct one, a session of another tenant.
	busy, err := dialOB(t, n2.Addr(), obLogin{user: "root@test", db: "test", proxy: true, obCaps: odpV2Caps,
		clientSessionID: "4242", proxyConnID: "777"})
	if err != nil {
		t.Fatal(err)
	}
	idle, err := dialOB(t, n1.Addr(), obLogin{user: "root@test"})
	if err != nil {
		t.Fatal(err)
	}
	other, err := dialOB(t, n1.Addr(), obLogin{user: "app@app", password: "app-secret"})
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan obResult, 1)
	go func() { done <- busy.query("SELECT SLEEP(30)") }()
	defer func() {
		killer, err := dialOB(t, n3.Addr(), obLogin{user: "root@test"})
		if err == nil {
			killer.query("KILL QUERY 4242")
		}
		<-done
	}()
	waitRunning(t, c, "SELECT SLEEP(30)")

	watcher, err := dialOB(t, n3.Addr(), obLogin{user: "root@test"})
	if err != nil {
		t.Fatal(err)
	}
	r := watcher.query("SHOW PROCESSLIST")
	if r.err != nil || !slices.Equal(r.columns, []string{"Id", "User", "Host", "db", "Command", "Time", "State", "Info"}) {
		t.Fatalf("SHOW PROCESSLIST: %+v", r)
	}
	row, nulls := findRow(r, "4242")
	if row == nil {
		t.Fatalf("proxied session (client session id 4242) not listed: %v", r.rows)
	}
	if row[1] != "root" || row[3] != "test" || row[4] != "Query" || row[6] != "ACTIVE" || row[7] != "SELECT SLEEP(30)" {
		t.Errorf("proxied session: %v", row)
	}
	if _, err := strconv.Atoi(row[5]); err != nil {
		t.Errorf("Time %q", row[5])
	}
	if busyID := strconv.FormatUint(uint64(busy.connID), 10); slices.ContainsFunc(r.rows, func(r []string) bool { return r[0] == busyID }) {
		t.Errorf("proxied session listed by its server session id %s", busyID)
	}
	row, nulls = findRow(r, strconv.FormatUint(uint64(idle.connID), 10))
	if row == nil || row[3] != "NULL" || row[4] != "Sleep" || row[6] != "SLEEP" || !nulls[7] ||
		row[2] != idle.conn.LocalAddr().String() {
		t.Errorf("idle direct session: %v %v", row, nulls)
	}
	row, _ = findRow(r, strconv.FormatUint(uint64(watcher.connID), 10))
	if row == nil || row[4] != "Query" || row[7] != "SHOW PROCESSLIST" {
		t.Errorf("own session: %v", row)
	}
	if row, _ = findRow(r, strconv.FormatUint(uint64(other.connID), 10)); row != nil {
		t.Errorf("another tenant's session is listed: %v", row)
	}

	r = watcher.query("show full processlist;")
	if r.err != nil || !slices.Equal(r.columns, []string{"Id", "User", "Tenant", "Host", "db", "Command", "Time", "State", "Info", "Ip", "Port"}) {
		t.Fatalf("SHOW FULL PROCESSLIST: %+v", r)
	}
	row, _ = findRow(r, "4242")
	if row == nil || row[2] != "test" || row[9] != "127.0.0.1" || row[10] != strconv.Itoa(n2.Port()) {
		t.Errorf("full row: %v", row)
	}
	if e := lastEntry(t, n3, "query"); e.SQL != "show full processlist;" || e.Result != "ok" {
		t.Errorf("log entry %+v", e)
	}

	// sys sees every tenant, and the proxy session ids.
	sys, err := dialOB(t, n3.Addr(), obLogin{user: "root@sys"})
	if err != nil {
		t.Fatal(err)
	}
	r = sys.query("SHOW FULL PROCESSLIST")
	if r.err != nil || len(r.columns) != 12 || r.columns[11] != "Proxy_sessid" {
		t.Fatalf("sys SHOW FULL PROCESSLIST: %+v", r)
	}
	if row, _ := findRow(r, "4242"); row == nil || row[11] != "777" {
		t.Errorf("proxied session as sys sees it: %v", row)
	}
	if row, nulls := findRow(r, strconv.FormatUint(uint64(idle.connID), 10)); row == nil || !nulls[11] {
		t.Errorf("direct session as sys sees it: %v %v", row, nulls)
	}
	if row, _ := findRow(r, strconv.FormatUint(uint64(other.connID), 10)); row == nil || row[2] != "app" || row[1] != "app" {
		t.Errorf("app tenant session as sys sees it: %v", row)
	}

	// Without the PROCESS privilege a user sees its own sessions only.
	if _, err := c.admin.Exec("CREATE USER IF NOT EXISTS 'peek'@'%' IDENTIFIED BY 'peek-pw'"); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _, _ = c.admin.Exec("DROP USER IF EXISTS 'peek'@'%'") })
	peek, err := dialOB(t, n1.Addr(), obLogin{user: "peek@test", password: "peek-pw"})
	if err != nil {
		t.Fatal(err)
	}
	r = peek.query("SHOW PROCESSLIST")
	if r.err != nil || len(r.rows) != 1 || r.rows[0][0] != strconv.FormatUint(uint64(peek.connID), 10) || r.rows[0][1] != "peek" {
		t.Errorf("unprivileged SHOW PROCESSLIST: %+v", r)
	}

	// COM_PROCESS_INFO answers as SHOW PROCESSLIST.
	r = watcher.command([]byte{byte(mysqlproto.ComProcessInfo)})
	if row, _ := findRow(r, "4242"); r.err != nil || len(r.columns) != 8 || row == nil {
		t.Errorf("COM_PROCESS_INFO: %+v", r)
	}
}

func TestKillClientSessionID(t *testing.T) {
	c := testCluster(t)
	n1, n2, n3 := c.Node("zone1-1"), c.Node("zone2-1"), c.Node("zone3-1")
	// Client session 5151 has a server session on two nodes, as ODP opens
	// one per server it routes to.
	v2 := func(n *Node, csID string) *obClient {
		t.Helper()
		cl, err := dialOB(t, n.Addr(), obLogin{user: "root@test", proxy: true, obCaps: odpV2Caps,
			clientSessionID: csID, proxyConnID: "99"})
		if err != nil {
			t.Fatal(err)
		}
		return cl
	}
	victimA, victimB := v2(n2, "5151"), v2(n3, "5151")
	killer, err := dialOB(t, n1.Addr(), obLogin{user: "root@test"})
	if err != nil {
		t.Fatal(err)
	}

	// KILL QUERY by client session id interrupts the running statement.
	done := make(chan obResult, 1)
	go func() { done <- victimA.query("SELECT SLEEP(20)") }()
	waitRunning(t, c, "SELECT SLEEP(20)")
	if r := killer.query("KILL QUERY 5151"); r.err != nil {
		t.Fatal(r.err)
	}
	select {
	case r := <-done:
		if r.err == nil && r.rows[0][0] != "1" {
			t.Errorf("killed sleep returned %+v", r)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("KILL QUERY 5151 did not interrupt")
	}

	// KILL by client session id ends every session of that client.
	if r := killer.query("KILL 5151"); r.err != nil {
		t.Fatal(r.err)
	}
	if !victimA.closed(2*time.Second) || !victimB.closed(2*time.Second) {
		t.Error("sessions of client session 5151 still open")
	}
	if r := killer.query("KILL CONNECTION 5151"); r.err == nil || r.err.Code != mysqlproto.ERNoSuchThread ||
		r.err.Message != "Unknown thread id: 5151" {
		t.Errorf("second KILL 5151: %+v", r.err)
	}

	// A proxy session without client session ids (client_session_id_version
	// 1) names server session ids only.
	target := v2(n2, "6161")
	v1, err := dialOB(t, n3.Addr(), obLogin{user: "root@test", proxy: true, obCaps: odpServerCaps,
		clientSessionID: "7171", proxyConnID: "100"})
	if err != nil {
		t.Fatal(err)
	}
	if r := v1.query("KILL 6161"); r.err == nil || r.err.Code != mysqlproto.ERNoSuchThread {
		t.Errorf("KILL of a client session id without the capability: %+v", r.err)
	}
	if r := v1.query(fmt.Sprintf("KILL %d", target.connID)); r.err != nil {
		t.Fatal(r.err)
	}
	if !target.closed(2 * time.Second) {
		t.Error("KILL by server session id left the session open")
	}

	// A session killing its own client session gets OB_ERR_KILL_CLIENT_SESSION
	// and is closed.
	self := v2(n1, "8181")
	if r := self.query("KILL 8181"); r.err == nil || r.err.Code != mysqlproto.OBErrKillClientSession {
		t.Errorf("self kill: %+v", r.err)
	}
	if !self.closed(2 * time.Second) {
		t.Error("self-killed session still open")
	}

	// Another tenant's session cannot be killed.
	victim := v2(n2, "9191")
	app, err := dialOB(t, n1.Addr(), obLogin{user: "app@app", password: "app-secret"})
	if err != nil {
		t.Fatal(err)
	}
	if r := app.query("KILL 9191"); r.err == nil || r.err.Code != mysqlproto.ERKillDenied {
		t.Errorf("cross-tenant kill: %+v", r.err)
	}
	if r := app.query(fmt.Sprintf("KILL %d", victim.connID)); r.err == nil || r.err.Code != mysqlproto.ERKillDenied {
		t.Errorf("cross-tenant kill by server id: %+v", r.err)
	}

	// COM_PROCESS_KILL is KILL id; a statement obsim cannot read is not
	// relayed.
	pkt := binary.LittleEndian.AppendUint32([]byte{byte(mysqlproto.ComProcessKill)}, 9191)
	if r := killer.command(pkt); r.err != nil {
		t.Fatal(r.err)
	}
	if !victim.closed(2 * time.Second) {
		t.Error("COM_PROCESS_KILL left the session open")
	}
	if r := killer.query("KILL 1 + 1"); r.err == nil || r.err.Code != mysqlproto.ERNotSupportedYet {
		t.Errorf("KILL of an expression: %+v", r.err)
	}
}
