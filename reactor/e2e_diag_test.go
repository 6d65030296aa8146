package reactor_test

import (
	"context"
	"database/sql"
	"fmt"
	"net"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/go-sql-driver/mysql"

	"obgate/internal/testkit"
	"obgate/internal/testproxy"
	"obgate/mysqlproto"
	"obgate/tools/obsim"
)

// The diagnosis log: one test per cause. Each finds the line of its event
// for its client (cs_id) and checks that it names the side that caused it.

// waitDiag waits for a diagnosis line with the given event whose fields
// include want, and returns it.
func waitDiag(t *testing.T, p *testproxy.Proxy, event string, want map[string]string) testproxy.DiagLine {
	t.Helper()
	var found testproxy.DiagLine
	testkit.EventuallyDescribe(t, hangLimit, func() bool {
		for _, l := range p.DiagLines() {
			if l.Str("event") != event {
				continue
			}
			ok := true
			for k, v := range want {
				if l.Str(k) != v {
					ok = false
				}
			}
			if ok {
				found = l
				return true
			}
		}
		return false
	}, func() string {
		return fmt.Sprintf("no %s line with %v in the diagnosis log:\n%s", event, want, p.DiagText())
	})
	return found
}

// onlySession returns the id of the proxy's single client session.
func onlySession(t *testing.T, p *testproxy.Proxy) testkitSession {
	t.Helper()
	var ss []testkitSession
	testkit.Eventually(t, hangLimit, func() bool {
		ss = ss[:0]
		for _, s := range p.Server.Sessions() {
			if !s.Admin {
				ss = append(ss, testkitSession{id: strconv.FormatUint(uint64(s.ID), 10), serverID: s.ServerID, server: s.ServerAddr})
			}
		}
		return len(ss) == 1
	}, "want exactly one client session")
	return ss[0]
}

type testkitSession struct {
	id       string
	serverID uint32
	server   string
}

// oneConn opens one connection (a pool of one) and runs a statement on it.
func oneConn(t *testing.T, db *sql.DB) *sql.Conn {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), hangLimit)
	defer cancel()
	conn, err := db.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := conn.ExecContext(ctx, "SELECT 1"); err != nil {
		t.Fatal(err)
	}
	return conn
}

func TestDiagClientDisconnect(t *testing.T) {
	p := startProxy(t, ioModes[0])
	raw, err := testkit.DialRaw(p.Addr, hangLimit)
	if err != nil {
		t.Fatal(err)
	}
	if err := raw.Login("root", "", testDB, hangLimit); err != nil {
		t.Fatal(err)
	}
	s := onlySession(t, p)
	raw.Close() // no COM_QUIT: the client's connection just ends
	l := waitDiag(t, p, "disconnect", map[string]string{"cs_id": s.id})
	if l.Str("trace_type") != "CLIENT_VC_TRACE" || l.Str("side") != "client" || l.Str("reason") != "client_network" {
		t.Fatalf("a client hanging up: %v", l)
	}
	if l.Str("user_name") != "root" || l.Str("server_addr") == "" || l.Str("connected_us") == "" {
		t.Fatalf("the line lacks who and where: %v", l)
	}
}

func TestDiagClientQuitIsNotADiagnosis(t *testing.T) {
	p := startProxy(t, ioModes[0])
	db := rootDB(t, p)
	conn := oneConn(t, db)
	s := onlySession(t, p)
	conn.Close()
	db.Close() // COM_QUIT
	// A TCP check: connect and close without a login.
	probe, err := net.Dial("tcp", p.Addr)
	if err != nil {
		t.Fatal(err)
	}
	probe.Close()
	// The probe's session has ended once it counts as a failed login.
	testkit.Eventually(t, hangLimit, func() bool {
		n, _ := testkit.MetricSum(p.MetricsText(), "odp_new_client_connections", "connectionResult", "fail")
		return n >= 1
	}, "the TCP check never ended as a failed login")
	waitNoClients(t, p)
	if text := p.DiagText(); text != "" {
		t.Fatalf("a COM_QUIT or a TCP check was logged:\n%s", text)
	}
	for _, l := range p.DiagLines() {
		if l.Str("cs_id") == s.id {
			t.Fatalf("a COM_QUIT was logged: %v", l)
		}
	}
}

func TestDiagFailedLogin(t *testing.T) {
	p := startProxy(t, ioModes[0])
	err := openDB(t, driverConfig(p, "root", "wrong-password", testDB)).Ping()
	if sqlErrorCode(err) != mysqlproto.ERAccessDenied {
		t.Fatalf("wrong password: %v", err)
	}
	l := waitDiag(t, p, "login_failed", map[string]string{"user_name": "root"})
	if l.Str("trace_type") != "LOGIN_TRACE" || l.Str("side") != "server" || l.Str("error_code") != strconv.Itoa(int(mysqlproto.ERAccessDenied)) {
		t.Fatalf("a login the server refused: %v", l)
	}
}

func TestDiagServerClosedTheSession(t *testing.T) {
	p := startProxy(t, ioModes[0])
	conn := oneConn(t, rootDB(t, p))
	defer conn.Close()
	s := onlySession(t, p)
	mustExec(t, directDB(t), "KILL "+strconv.FormatUint(uint64(s.serverID), 10))
	l := waitDiag(t, p, "disconnect", map[string]string{"cs_id": s.id})
	if l.Str("trace_type") != "SERVER_VC_TRACE" || l.Str("side") != "server" {
		t.Fatalf("the server closed the session's connection: %v", l)
	}
}

func TestDiagInactivityTimeout(t *testing.T) {
	p := startProxy(t, ioModes[0], "default_inactivity_timeout", "1s")
	conn := oneConn(t, rootDB(t, p))
	defer conn.Close()
	s := onlySession(t, p)
	l := waitDiag(t, p, "disconnect", map[string]string{"cs_id": s.id})
	if l.Str("trace_type") != "TIMEOUT_TRACE" || l.Str("timeout_event") != "CLIENT_WAIT_TIMEOUT" ||
		l.Str("reason") != "default_inactivity_timeout" || l.Str("timeout_us") != "1000000" {
		t.Fatalf("an idle client past default_inactivity_timeout: %v", l)
	}
	if err := conn.PingContext(context.Background()); err == nil {
		t.Fatal("the idle connection still answers")
	}
}

func TestDiagKillProxySession(t *testing.T) {
	p := startProxy(t, ioModes[0])
	conn := oneConn(t, rootDB(t, p))
	defer conn.Close()
	s := onlySession(t, p)
	id, _ := strconv.ParseUint(s.id, 10, 32)
	if err := p.Server.KillSession(uint32(id)); err != nil {
		t.Fatal(err)
	}
	l := waitDiag(t, p, "disconnect", map[string]string{"cs_id": s.id})
	if l.Str("trace_type") != "TIMEOUT_TRACE" || l.Str("timeout_event") != "CLIENT_FORCE_KILL" || l.Str("reason") != "kill_proxysession" {
		t.Fatalf("KILL PROXYSESSION: %v", l)
	}
}

func TestDiagOptionOffWritesNothing(t *testing.T) {
	p := startProxy(t, ioModes[0], "connection_diagnosis_option", "0")
	raw, err := testkit.DialRaw(p.Addr, hangLimit)
	if err != nil {
		t.Fatal(err)
	}
	if err := raw.Login("root", "", testDB, hangLimit); err != nil {
		t.Fatal(err)
	}
	raw.Close()
	waitNoClients(t, p)
	if text := p.DiagText(); text != "" {
		t.Fatalf("connection_diagnosis_option=0 still logs:\n%s", text)
	}
}

// TestDiagOBServerSessionLostAndRetry: in OceanBase mode a server that
// stops under an idle client costs it a server session (server_session_lost,
// side server) but not the connection; a statement a server refuses with
// an ERR another may not give is sent again (retry, with the code).
func TestDiagOBServerSessionLostAndRetry(t *testing.T) {
	c := startOBSim(t)
	resetOBSim(t, c)
	p := startOBProxy(t, c, ioModes[0])
	_, conn := obConn(t, p)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	mk := newMarker("diagretry")
	if _, err := c.InjectError(obsim.ErrorRule{Pattern: mk, Code: mysqlproto.OBServerIsStopping, Count: 1}); err != nil {
		t.Fatal(err)
	}
	if _, err := conn.ExecContext(ctx, "SELECT 1 /* "+mk+" */"); err != nil {
		t.Fatal(err)
	}
	c.ClearErrors()
	s := onlySession(t, p)
	l := waitDiag(t, p, "retry", map[string]string{"cs_id": s.id})
	if l.Str("error_code") != strconv.Itoa(int(mysqlproto.OBServerIsStopping)) || l.Str("trace_type") != "SERVER_INTERNAL_TRACE" ||
		l.Str("failed_server_addr") == "" || l.Str("failed_server_addr") == l.Str("retry_server_addr") {
		t.Fatalf("a statement sent again: %v", l)
	}

	s = onlySession(t, p)
	x := nodeByAddr(t, c, s.server)
	if err := x.Stop(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = x.Start() })
	if _, err := conn.ExecContext(ctx, "SELECT 2"); err != nil {
		t.Fatalf("a statement after its server stopped: %v", err)
	}
	l = waitDiag(t, p, "server_session_lost", map[string]string{"cs_id": s.id, "lost_server_addr": s.server})
	if l.Str("trace_type") != "SERVER_VC_TRACE" || l.Str("side") != "server" {
		t.Fatalf("a lost server session: %v", l)
	}
}

// TestDiagOBBlocklist: a server its cluster reports INACTIVE goes on the
// status blocklist and off it again, each with a line.
func TestDiagOBBlocklist(t *testing.T) {
	c := startOBSim(t)
	resetOBSim(t, c)
	p := startOBProxy(t, c, ioModes[0], "server_state_refresh_interval", "200ms")
	_, conn := obConn(t, p)
	_ = conn
	x := c.Nodes()[1]
	if err := x.SetStatus("INACTIVE"); err != nil {
		t.Fatal(err)
	}
	waitDiag(t, p, "blocklist", map[string]string{"server_addr": x.Addr(), "change": "blocked"})
	if err := x.SetStatus("ACTIVE"); err != nil {
		t.Fatal(err)
	}
	waitDiag(t, p, "blocklist", map[string]string{"server_addr": x.Addr(), "change": "cleared"})
}

// TestDiagOBRouteMiss: after a partition's leader moves, the first
// statement routed by the old location lands on a server that no longer
// leads it; the partition-hit feedback makes the entry dirty, with a
// route_miss line naming the table.
func TestDiagOBRouteMiss(t *testing.T) {
	c := startPartOBSim(t, false)
	p := startOBProxy(t, c, ioModes[0])
	_, conn := obConn(t, p, func(cfg *mysql.Config) { cfg.DBName = partDB })
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if _, err := conn.ExecContext(ctx, "SELECT v FROM h_orders WHERE id = ?", 1); err != nil {
		t.Fatal(err)
	}
	part, err := c.PartitionOf("h_orders", map[string]string{"id": "1"})
	if err != nil {
		t.Fatal(err)
	}
	leader, err := c.Leader("h_orders", part)
	if err != nil {
		t.Fatal(err)
	}
	var to string
	for _, n := range c.Nodes() {
		if n.Name() != leader && !strings.Contains(n.Zone(), "4") {
			to = n.Name()
			break
		}
	}
	if err := c.MoveLeader("h_orders", part, to); err != nil {
		t.Fatal(err)
	}
	if _, err := conn.ExecContext(ctx, "SELECT v FROM h_orders WHERE id = ?", 1); err != nil {
		t.Fatal(err)
	}
	l := waitDiag(t, p, "route_miss", map[string]string{"table": partDB + ".h_orders"})
	if l.Str("side") != "server" || l.Str("how") == "" {
		t.Fatalf("a route miss: %v", l)
	}
}

// TestDiagOptionBit2SendsERRBeforeClose: a statement whose server
// connection breaks under it, in mysql routing mode where the session
// cannot move, ends the session; with connection_diagnosis_option bit 2
// the client first gets an ERR, without it just the closed connection.
func TestDiagOptionBit2SendsERRBeforeClose(t *testing.T) {
	for _, opt := range []string{"3", "1"} {
		p := startProxy(t, ioModes[0], "connection_diagnosis_option", opt)
		conn := oneConn(t, rootDB(t, p))
		s := onlySession(t, p)
		errc := make(chan error, 1)
		go func() {
			_, err := conn.ExecContext(context.Background(), "SELECT SLEEP(30)")
			errc <- err
		}()
		testkit.Eventually(t, hangLimit, func() bool {
			for _, i := range p.Server.Sessions() {
				if i.Command == "COM_QUERY" {
					return true
				}
			}
			return false
		}, "the statement never started")
		mustExec(t, directDB(t), "KILL "+strconv.FormatUint(uint64(s.serverID), 10))
		err := <-errc
		conn.Close()
		got := sqlErrorCode(err) != 0
		if want := opt == "3"; got != want {
			t.Fatalf("connection_diagnosis_option=%s: the client saw %v; want an ERR packet: %v", opt, err, want)
		}
	}
}
