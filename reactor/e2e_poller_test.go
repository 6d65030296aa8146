package reactor_test

import (
	"context"
	"database/sql"
	"strconv"
	"strings"
	"testing"

	"obgate/internal/testkit"
	"obgate/mysqlproto"
	"obgate/reactor"
)

// followLimit is how many commands the poller tests allow the goroutine
// that served a command off the poller to serve after it, before it
// gives the session back (serveOffPoller serves what the client sends
// until the client is quiet): one or two for a quick client, a few more
// when that goroutine waits for a CPU; the commands after those must be
// the poller's again.
const followLimit = 8

// TestE2EPollerServesStatements: with netpoll, the common statements of
// mysql routing mode (text queries and executes of prepared statements,
// as go-sql-driver sends them) start and end on the poller, with the
// answers the server gave.
func TestE2EPollerServesStatements(t *testing.T) {
	testkit.CheckLeaks(t)
	p := startProxy(t, "netpoll")
	db := rootDB(t, p)
	db.SetMaxOpenConns(1)
	ctx := context.Background()
	conn, err := db.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	stmt, err := conn.PrepareContext(ctx, "SELECT ? + 1")
	if err != nil {
		t.Fatal(err)
	}
	defer stmt.Close()
	const count = 200
	// Whatever a goroutine served after one handed to it counts as well
	// (serveOffPoller; the login's first command may be one).
	before, handOffs, followed := reactor.PolledFinished(), reactor.PollerHandOffs(), reactor.FollowedOffPoller()
	for i := range count {
		var got int
		if err := stmt.QueryRowContext(ctx, i).Scan(&got); err != nil || got != i+1 {
			t.Fatalf("execute %d: %d %v, want %d", i, got, err, i+1)
		}
		var text string
		if err := conn.QueryRowContext(ctx, "SELECT CONCAT('row ', "+itoa(int64(i))+")").Scan(&text); err != nil || text != "row "+itoa(int64(i)) {
			t.Fatalf("query %d: %q %v", i, text, err)
		}
	}
	// The poller counts a command once its answer went out, so the last
	// one may be counted just after the client read it.
	served := func() uint64 {
		return reactor.PolledFinished() - before + reactor.FollowedOffPoller() - followed
	}
	testkit.Eventually(t, hangLimit, func() bool { return served() >= 2*count },
		"%d of %d statements ended on the poller or after the prepare", served(), 2*count)
	if n := reactor.PollerHandOffs() - handOffs; n != 0 {
		t.Errorf("%d statements were handed to a goroutine", n)
	}
	if n := reactor.FollowedOffPoller() - followed; n > followLimit {
		t.Errorf("%d statements were served by a goroutine after a hand-off", n)
	}

	// A statement obgate answers itself goes off the poller and the
	// session comes back to it.
	// The statement after it may come before that goroutine lets go, so
	// the client waits until the session is idle again (the goroutine's
	// last step before it looks for more input).
	before, handOffs = reactor.PolledFinished(), reactor.PollerHandOffs()
	if _, err := conn.ExecContext(ctx, "SHOW PROXYSESSION"); err != nil {
		t.Fatalf("SHOW PROXYSESSION: %v", err)
	}
	id, _ := strconv.ParseUint(onlySession(t, p).id, 10, 32)
	sess, ok := p.Server.Session(uint32(id))
	if !ok {
		t.Fatal("the client session is gone")
	}
	testkit.Eventually(t, hangLimit, func() bool { return sess.State() == reactor.StateIdle },
		"the session did not go idle after an internal command")
	followed = reactor.FollowedOffPoller()
	const after = 3
	for range after {
		if err := conn.QueryRowContext(ctx, "SELECT 1").Scan(new(int)); err != nil {
			t.Fatal(err)
		}
	}
	testkit.Eventually(t, hangLimit, func() bool { return served() >= after },
		"the statements after an internal command were not served")
	if n := reactor.PolledFinished() - before; n < after-1 {
		t.Errorf("after an internal command, %d of %d statements ended on the poller (%d followed off it)",
			n, after, reactor.FollowedOffPoller()-followed)
	}
	if n := reactor.PollerHandOffs() - handOffs; n != 1 {
		t.Errorf("%d commands were handed to a goroutine, want 1 (the internal command)", n)
	}
}

// TestE2EPollerServesQueriesWithArguments: a query with arguments and no
// explicit Prepare, as go-sql-driver sends it by default (COM_STMT_PREPARE,
// COM_STMT_EXECUTE, COM_STMT_CLOSE), is served on the poller from its
// prepare to its close, and each close reaches the server (closed
// statements not kept: client_ps_keep_count 0).
func TestE2EPollerServesQueriesWithArguments(t *testing.T) {
	testkit.CheckLeaks(t)
	p := startProxy(t, "netpoll", "client_ps_keep_count", "0")
	db := rootDB(t, p)
	db.SetMaxOpenConns(1)
	ctx := context.Background()
	conn, err := db.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	prepares, closes := serverStatus(t, conn, "Com_stmt_prepare"), serverStatus(t, conn, "Com_stmt_close")
	const count = 200
	before, handOffs, followed := reactor.PolledFinished(), reactor.PollerHandOffs(), reactor.FollowedOffPoller()
	for i := range count {
		var got int
		if err := conn.QueryRowContext(ctx, "SELECT ? + 1", i).Scan(&got); err != nil || got != i+1 {
			t.Fatalf("query %d: %d %v, want %d", i, got, err, i+1)
		}
	}
	// The last close has no answer: it may be counted after the client
	// moved on.
	testkit.Eventually(t, hangLimit, func() bool { return reactor.PolledFinished()-before >= 3*count },
		"%d of %d prepares, executes and closes ended on the poller", reactor.PolledFinished()-before, 3*count)
	if n := reactor.PollerHandOffs() - handOffs; n != 0 {
		t.Errorf("%d commands were handed to a goroutine", n)
	}
	if n := reactor.FollowedOffPoller() - followed; n != 0 {
		t.Errorf("%d commands were served by a goroutine after a hand-off", n)
	}
	// The status reads are text queries; the server counted every
	// prepare and close of the loop, and no other.
	if n := serverStatus(t, conn, "Com_stmt_prepare") - prepares; n != count {
		t.Errorf("the server saw %d prepares, want %d", n, count)
	}
	if n := serverStatus(t, conn, "Com_stmt_close") - closes; n != count {
		t.Errorf("the server saw %d closes, want %d", n, count)
	}
}

// TestE2EPollerShortServerWrites: when a server's socket takes a request
// only in part, or not at all, a goroutine sends the rest (resumeSend for
// a prepare, an execute or a query; finishClose for COM_STMT_CLOSE): every
// query gets its answer and every close reaches the server, in both
// routing modes (closed statements not kept: client_ps_keep_count 0).
func TestE2EPollerShortServerWrites(t *testing.T) {
	testkit.CheckLeaks(t)
	p := startProxy(t, "netpoll", "client_ps_keep_count", "0")
	c := startOBSim(t)
	ob := startOBProxy(t, c, "netpoll", "client_ps_keep_count", "0")
	for _, room := range []int64{3, -1} {
		t.Run("room="+itoa(room), func(t *testing.T) {
			ctx := context.Background()
			db := rootDB(t, p)
			db.SetMaxOpenConns(1)
			conn, err := db.Conn(ctx)
			if err != nil {
				t.Fatal(err)
			}
			defer conn.Close()
			obDB, obc := obConn(t, ob)
			obDB.SetMaxOpenConns(1)
			closes := serverStatus(t, conn, "Com_stmt_close")
			reactor.SetServerWriteRoom(t, room)
			const count = 50
			handOffs := reactor.PollerHandOffs()
			for i := range count {
				var got int
				if err := conn.QueryRowContext(ctx, "SELECT ? + 1", i).Scan(&got); err != nil || got != i+1 {
					t.Fatalf("mysql mode, query %d: %d %v, want %d", i, got, err, i+1)
				}
				if err := obc.QueryRowContext(ctx, "SELECT ? + 2", i).Scan(&got); err != nil || got != i+2 {
					t.Fatalf("OceanBase mode, query %d: %d %v, want %d", i, got, err, i+2)
				}
			}
			// The status read is written in part too; the closes before it
			// went out first.
			if n := serverStatus(t, conn, "Com_stmt_close") - closes; n != count {
				t.Errorf("the server saw %d closes, want %d", n, count)
			}
			if n := reactor.PollerHandOffs() - handOffs; n < count {
				t.Errorf("%d commands were handed to a goroutine, want at least %d: the short writes did not happen", n, count)
			}
		})
	}
}

// serverStatus reads the counter name of the server session behind conn
// (mysql mode: the client's one server session).
func serverStatus(t *testing.T, conn *sql.Conn, name string) int64 {
	t.Helper()
	var k string
	var v int64
	if err := conn.QueryRowContext(context.Background(), "SHOW SESSION STATUS LIKE '"+name+"'").Scan(&k, &v); err != nil {
		t.Fatal(err)
	}
	return v
}

// TestE2EPollerSlowClient: an answer larger than the client's socket
// takes at once, to a client that stops reading for a while, goes on off
// the poller and arrives whole; the session then serves on.
func TestE2EPollerSlowClient(t *testing.T) {
	testkit.CheckLeaks(t)
	p := startProxy(t, "netpoll")
	c := loginRaw(t, p, "root", "")
	const size = 8 << 20
	handOffs := reactor.PollerHandOffs()
	if err := c.WritePacket(0, append([]byte{byte(mysqlproto.ComQuery)}, "SELECT REPEAT('x', 8388608) AS big"...)); err != nil {
		t.Fatal(err)
	}
	testkit.Eventually(t, hangLimit, func() bool { return reactor.PollerHandOffs() > handOffs },
		"the answer was never handed off the poller")
	res, err := c.ReadResponse(hangLimit)
	if err != nil {
		t.Fatalf("reading the big answer: %v", err)
	}
	var row []byte
	for _, pkt := range res {
		if len(pkt) > size {
			row = pkt
		}
	}
	if row == nil || strings.Count(string(row), "x") != size {
		t.Fatalf("the big answer came back wrong (%d packets)", len(res))
	}
	if err := c.WritePacket(0, append([]byte{byte(mysqlproto.ComQuery)}, "DO 1"...)); err != nil {
		t.Fatal(err)
	}
	if res, err := c.ReadResponse(hangLimit); err != nil || len(res) != 1 || res[0][0] != mysqlproto.OKHeader {
		t.Fatalf("after the big answer: %q %v", res, err)
	}
}

// TestE2EPollerClientGoneWhileAwaiting: a client that hangs up while its
// statement awaits the server's answer on the poller is torn down at once,
// its server session with it, and that counts as no server's failure; a
// session killed while awaiting gets no answer and ends.
func TestE2EPollerClientGoneWhileAwaiting(t *testing.T) {
	testkit.CheckLeaks(t)
	p := startProxy(t, "netpoll")
	direct := directDB(t)
	c := dialClient(t, p, "root", "")
	sess, _ := p.Server.Session(c.ConnectionID())
	serverID := sess.Info().ServerID
	_ = startSleep(t, p, direct, c, 30)
	broken := p.Server.StatCounters().BrokenServers
	_ = c.Conn().Close()
	waitNoClients(t, p)
	if n := p.Server.StatCounters().BrokenServers - broken; n != 0 {
		t.Errorf("a client that hung up counted as %d broken server connections", n)
	}
	testkit.Eventually(t, hangLimit, func() bool {
		var n int
		err := direct.QueryRow("SELECT COUNT(*) FROM information_schema.PROCESSLIST WHERE ID = ?", serverID).Scan(&n)
		return err == nil && n == 0
	}, "MariaDB thread %d outlived its client", serverID)

	victim := dialClient(t, p, "root", "")
	killer := dialClient(t, p, "root", "")
	done := startSleep(t, p, direct, victim, 30)
	if _, err := killer.Exec("KILL CONNECTION " + itoa(int64(victim.ConnectionID()))); err != nil {
		t.Fatal(err)
	}
	if r := waitResult(t, done); r.err == nil {
		t.Errorf("the killed session's SLEEP returned %q, want an error", r.res.String(0, "SLEEP(30)"))
	}
	_ = killer.Close()
	waitNoClients(t, p)
}
