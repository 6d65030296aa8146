package reactor_test

import (
	"context"
	"database/sql"
	"errors"
	"io"
	"testing"

	"obgate/internal/testkit"
	"obgate/mysqlproto"
)

// TestOBWaitTimeout: in OceanBase mode a server never closes an idle
// client (a server session it closes is replaced invisibly), so obgate
// closes a client that stayed idle past the wait_timeout it set.
func TestOBWaitTimeout(t *testing.T) {
	c := startOBSim(t)
	forEachMode(t, func(t *testing.T, mode string) {
		p := startOBProxy(t, c, mode)
		rc, err := testkit.DialRaw(p.Addr, hangLimit)
		if err != nil {
			t.Fatal(err)
		}
		defer rc.Close()
		if err := rc.Login(obFullUser, obPass, obDB, hangLimit); err != nil {
			t.Fatal(err)
		}
		if err := rc.WritePacket(0, append([]byte{byte(mysqlproto.ComQuery)}, "SET @@SESSION.wait_timeout = 1"...)); err != nil {
			t.Fatal(err)
		}
		if _, err := rc.ReadResponse(hangLimit); err != nil {
			t.Fatal(err)
		}
		_, _, err = rc.ReadPacket(hangLimit)
		if !errors.Is(err, io.EOF) && !errors.Is(err, io.ErrUnexpectedEOF) {
			t.Fatalf("after wait_timeout: %v, want the connection closed", err)
		}
	})
}

// TestOBIdleServerSessionsExpire: server sessions that an idle client has
// not used for server_idle_timeout are closed, except the one it used
// last; the client carries on.
func TestOBIdleServerSessionsExpire(t *testing.T) {
	c := startOBSim(t)
	// Without enable_cached_server statements spread over the nodes, so
	// the client opens several server sessions.
	p := startOBProxy(t, c, "net", "server_idle_timeout", "1s", "enable_cached_server", "false")
	_, conn := obConn(t, p)
	ctx := context.Background()
	for i := 0; i < 30; i++ {
		if _, err := conn.ExecContext(ctx, "SELECT 1"); err != nil {
			t.Fatal(err)
		}
	}
	var id uint32
	for _, s := range p.Server.Sessions() {
		id = s.ID
	}
	sess, _ := p.Server.Session(id)
	if n := len(sess.ServerSessions()); n < 2 {
		t.Fatalf("30 statements used %d server session; the test needs several", n)
	}
	// The client stays idle now; only the server session it used last
	// may stay open.
	testkit.EventuallyDescribe(t, hangLimit, func() bool {
		n, _ := testkit.MetricSum(p.MetricsText(), "odp_current_session", "sessionType", "server")
		return n == 1
	}, func() string { return p.MetricsText() })
	if _, err := conn.ExecContext(ctx, "SELECT 1"); err != nil {
		t.Fatalf("statement after the expiry: %v", err)
	}
}

// TestOBCloseServerSessions: obgate can count and close every server
// session to one server from outside the client sessions; the clients'
// next statements run elsewhere, without an error.
func TestOBCloseServerSessions(t *testing.T) {
	c := startOBSim(t)
	p := startOBProxy(t, c, "net")
	ctx := context.Background()
	var conns []*sql.Conn
	for range 4 {
		_, conn := obConn(t, p)
		if _, err := conn.ExecContext(ctx, "SET @kept = 'yes'"); err != nil {
			t.Fatal(err)
		}
		conns = append(conns, conn)
	}
	held := map[string]int{}
	for _, s := range p.Server.Sessions() {
		held[s.ServerAddr]++
	}
	for addr, n := range held {
		if got := p.Server.ServerSessionCount(addr); got != n {
			t.Fatalf("ServerSessionCount(%s) = %d, want %d", addr, got, n)
		}
		if closed := p.Server.CloseServerSessions(addr); closed != n {
			t.Fatalf("CloseServerSessions(%s) closed %d, want %d", addr, closed, n)
		}
		if got := p.Server.ServerSessionCount(addr); got != 0 {
			t.Fatalf("after CloseServerSessions(%s): %d left", addr, got)
		}
		break // one server is enough; the others keep theirs
	}
	for i, conn := range conns {
		var v string
		if err := conn.QueryRowContext(ctx, "SELECT @kept").Scan(&v); err != nil || v != "yes" {
			t.Errorf("client %d after its server sessions were closed: %q, %v", i, v, err)
		}
	}
}
