package reactor_test

// Adversarial tests of what a client can make obgate hold before and
// after it logged in: announced lengths that never arrive, logins that
// trickle or never finish, attribute floods, bare connections, and
// prepared statements without end.

import (
	"database/sql"
	"errors"
	"net"
	"runtime"
	"strings"
	"testing"
	"time"

	"obgate/internal/testkit"
	"obgate/internal/testproxy"
	"obgate/mysqlproto"
)

// heapInUse is the live heap after a collection.
func heapInUse() uint64 {
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return ms.HeapAlloc
}

// announce writes a packet header claiming n payload bytes with sequence
// id seq, followed by only the first bytes of body.
func announce(t *testing.T, c *testkit.RawConn, n int, seq uint8, body []byte) {
	t.Helper()
	hdr := make([]byte, mysqlproto.HeaderLen)
	mysqlproto.PutHeader(hdr, n, seq)
	if err := c.Write(append(hdr, body...)); err != nil {
		t.Fatal(err)
	}
}

// TestAttackAnnouncedLogin: a login packet is a claim of its length.
// Connections that announce a large login and send a few bytes hold no
// more than those bytes; one that announces more than a login can be
// (64 KiB) is closed at once.
func TestAttackAnnouncedLogin(t *testing.T) {
	p := startProxy(t, "netpoll", "client_max_handshakes", "0", "client_max_handshakes_per_ip", "0")
	c, err := testkit.DialRaw(p.Addr, hangLimit)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	announce(t, c, 1<<20, 1, make([]byte, 68))
	if _, err := c.WaitClosed(hangLimit); err != nil {
		t.Errorf("a login announced at 1 MiB: %v, want the connection closed", err)
	}

	const conns, claim = 200, 60 << 10
	before := heapInUse()
	held := make([]*testkit.RawConn, 0, conns)
	for range conns {
		c, err := testkit.DialRaw(p.Addr, hangLimit)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		announce(t, c, claim, 1, make([]byte, 68))
		held = append(held, c)
	}
	// The announced bytes have reached obgate's login goroutines once
	// every connection is in its handshake; give them a moment to read.
	testkit.Eventually(t, hangLimit, func() bool { return p.Server.ClientCount() >= conns }, "clients to arrive")
	time.Sleep(200 * time.Millisecond)
	grew := int64(heapInUse()) - int64(before)
	t.Logf("%d logins announcing %d bytes and sending 68: the heap grew by %d bytes", conns, claim, grew)
	// Each login holds a session and a read buffer of a few KiB (about
	// 12 KiB in all, measured); sized by the claim it would be 60 KiB
	// more.
	if limit := int64(conns * claim / 2); grew > limit {
		t.Errorf("%d logins announcing %d bytes and sending 68 grew the heap by %d bytes; want under %d (memory sized by the claim)", conns, claim, grew, limit)
	}
	runtime.KeepAlive(held)
}

// TestAttackTrickledLogin: a login that trickles in is closed at
// client_handshake_timeout, whatever it still claims to send.
func TestAttackTrickledLogin(t *testing.T) {
	p := startProxy(t, "netpoll", "client_handshake_timeout", "500ms")
	c, err := testkit.DialRaw(p.Addr, hangLimit)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	announce(t, c, 60<<10, 1, nil)
	closed := make(chan struct{})
	go func() {
		defer close(closed)
		for range 600 { // a byte every 100ms: a minute of trickle at most
			if c.Write([]byte{'x'}) != nil {
				return
			}
			time.Sleep(100 * time.Millisecond)
		}
	}()
	if _, err := c.WaitClosed(hangLimit); err != nil {
		t.Errorf("trickled login: %v, want it closed at client_handshake_timeout", err)
	}
	<-closed
}

// TestAttackAttributeFlood: a login with tens of thousands of connection
// attributes (three bytes each) is refused as a bad handshake.
func TestAttackAttributeFlood(t *testing.T) {
	p := startProxy(t, "netpoll")
	c, err := testkit.DialRaw(p.Addr, hangLimit)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	r := &mysqlproto.HandshakeResponse{Capability: mysqlproto.DefaultClientCapability&c.Greeting.Capability | mysqlproto.ClientConnectAttrs,
		MaxPacketSize: 1 << 24, Charset: byte(mysqlproto.CharsetUTF8MB4), User: "root", AuthPlugin: mysqlproto.AuthNativePassword}
	for range 20000 {
		r.Attrs = append(r.Attrs, mysqlproto.ConnAttr{Key: "k"})
	}
	if err := c.WritePacket(1, r.Append(nil)); err != nil {
		t.Fatal(err)
	}
	if e, err := c.ReadERR(hangLimit); err != nil || e.Code != mysqlproto.ERHandshakeError {
		t.Errorf("login with 20000 attributes: %v %v, want ERR 1043", e, err)
	}
}

// TestAttackUnfinishedLogins: connections that never log in cannot take
// more than client_max_handshakes_per_ip (or client_max_handshakes) login
// slots; past it a connection gets ERR 1040 at once, and a slot given
// back serves the next one.
func TestAttackUnfinishedLogins(t *testing.T) {
	for _, limit := range []string{"client_max_handshakes", "client_max_handshakes_per_ip"} {
		t.Run(limit, func(t *testing.T) {
			p := startProxy(t, "netpoll", limit, "4")
			var idle []*testkit.RawConn
			for range 4 {
				c, err := testkit.DialRaw(p.Addr, hangLimit)
				if err != nil {
					t.Fatal(err)
				}
				defer c.Close()
				idle = append(idle, c)
			}
			_, err := testkit.DialRaw(p.Addr, hangLimit)
			var se *mysqlproto.SQLError
			if !errors.As(err, &se) || se.Code != mysqlproto.ERConCountError {
				t.Fatalf("fifth unfinished login with %s=4: %v, want ERR 1040 in place of the greeting", limit, err)
			}
			idle[0].Close()
			testkit.Eventually(t, hangLimit, func() bool {
				c, err := testkit.DialRaw(p.Addr, hangLimit)
				if err != nil {
					return false
				}
				defer c.Close()
				return c.Login("root", "", "", hangLimit) == nil
			}, "a login once a slot was given back")
			if got, _ := testkit.MetricSum(p.MetricsText(), "obgate_client_refused_total", "reason", "handshakes"); got < 1 {
				t.Errorf("obgate_client_refused_total{reason=\"handshakes\"} = %v, want at least 1", got)
			}
		})
	}
}

// TestAttackBareConnections: in mysql routing mode a TCP connection that
// never logs in reaches no server, so the server counts no aborted
// handshake (max_connect_errors would block obgate's address for every
// client). obgate's server is a relay to MariaDB that counts the
// connections it is given: MariaDB's own Aborted_connects is global to
// the package's server, and anything else that touches it in the same
// moment would be counted too.
func TestAttackBareConnections(t *testing.T) {
	relay, dialed := countingRelay(t, maria(t).Addr())
	cfg, err := testproxy.Config(relay, "netpoll", "server_detect_mode", "0")
	if err != nil {
		t.Fatal(err)
	}
	p := testproxy.Start(t, cfg)
	// A real login first: obgate's one look at a server greeting is over.
	if c, err := testkit.DialRaw(p.Addr, hangLimit); err != nil || c.Login("root", "", "", hangLimit) != nil {
		t.Fatalf("login: %v", err)
	} else {
		c.Close()
	}
	waitNoClients(t, p)
	before := dialed.Load()
	if before == 0 {
		t.Fatal("the login reached no server through the relay")
	}
	for range 20 {
		conn, err := net.Dial("tcp", p.Addr)
		if err != nil {
			t.Fatal(err)
		}
		conn.Close()
		c, err := testkit.DialRaw(p.Addr, hangLimit)
		if err != nil {
			t.Fatal(err)
		}
		c.Close()
	}
	waitNoClients(t, p)
	if d := dialed.Load() - before; d != 0 {
		t.Errorf("40 connections that never logged in made obgate connect to the server %d times; want 0", d)
	}
}

// TestAttackPreparedStatements: a session holds at most
// client_max_prepared_stmt_count statements and client_max_memory_size
// bytes of their text; one more is refused with ERR 1461 and the session
// goes on. A prepare larger than client_max_memory_size is refused with
// ERR 1153, and one announced at 16 MiB is refused before obgate holds it.
func TestAttackPreparedStatements(t *testing.T) {
	p := startProxy(t, "netpoll", "client_max_prepared_stmt_count", "3", "client_max_memory_size", "8KB")
	db := rootDB(t, p)
	db.SetMaxOpenConns(1)
	var stmts []*sql.Stmt
	for i := range 3 {
		st, err := db.Prepare("SELECT ? + " + itoa(int64(i)))
		if err != nil {
			t.Fatal(err)
		}
		stmts = append(stmts, st)
	}
	if _, err := db.Prepare("SELECT ? + 3"); sqlErrorCode(err) != mysqlproto.ERMaxPreparedStmtCount {
		t.Errorf("fourth prepared statement: %v, want ERR 1461", err)
	}
	if got := queryInt(t, db, "SELECT 7"); got != 7 {
		t.Errorf("after the refusal SELECT 7 = %d", got)
	}
	stmts[0].Close()
	long := "SELECT ? /* " + strings.Repeat("x", 4100) + " */"
	st, err := db.Prepare(long)
	if err != nil {
		t.Fatalf("a statement once one was closed: %v", err)
	}
	defer st.Close()
	stmts[1].Close()
	if _, err := db.Prepare(long + " "); sqlErrorCode(err) != mysqlproto.ERMaxPreparedStmtCount {
		t.Errorf("statements holding more text than client_max_memory_size: %v, want ERR 1461", err)
	}

	c, err := testkit.DialRaw(p.Addr, hangLimit)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if err := c.Login("root", "", testDB, hangLimit); err != nil {
		t.Fatal(err)
	}
	if err := c.WritePacket(0, append([]byte{byte(mysqlproto.ComStmtPrepare)}, "SELECT 1 /* "+strings.Repeat("y", 9000)+" */"...)); err != nil {
		t.Fatal(err)
	}
	if e, err := c.ReadERR(hangLimit); err != nil || e.Code != mysqlproto.ERNetPacketTooLarge {
		t.Errorf("a 9 KB prepare with client_max_memory_size 8KB: %v %v, want ERR 1153", e, err)
	}

	before := heapInUse()
	var held []*testkit.RawConn
	for range 20 {
		c, err := testkit.DialRaw(p.Addr, hangLimit)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		if err := c.Login("root", "", testDB, hangLimit); err != nil {
			t.Fatal(err)
		}
		// More than obgate reads to classify a command (request_buffer_length).
		announce(t, c, mysqlproto.MaxPayloadLen, 0, append([]byte{byte(mysqlproto.ComStmtPrepare)}, "SELECT 1 /* "+strings.Repeat("z", 5000)...))
		held = append(held, c)
	}
	for _, c := range held {
		if e, err := c.ReadERR(hangLimit); err != nil || e.Code != mysqlproto.ERNetPacketTooLarge {
			t.Errorf("a prepare announced at 16 MiB: %v %v, want ERR 1153", e, err)
		}
	}
	if grew := int64(heapInUse()) - int64(before); grew > 32<<20 {
		t.Errorf("20 prepares announced at 16 MiB grew the heap by %d bytes", grew)
	}
}
