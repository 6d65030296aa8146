package reactor_test

import (
	"context"
	"crypto/tls"
	"database/sql"
	"database/sql/driver"
	"net"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-sql-driver/mysql"
	"golang.org/x/sys/unix"

	"obgate/internal/testkit"
	"obgate/internal/testproxy"
	"obgate/mysqlproto"
	"obgate/reactor"
)

// handoverPair is the socket a hot upgrade hands sessions over on: a
// SOCK_SEQPACKET pair, from, to.
func handoverPair(t *testing.T) (*net.UnixConn, *net.UnixConn) {
	t.Helper()
	fds, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_SEQPACKET|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		t.Fatal(err)
	}
	var ends [2]*net.UnixConn
	for i, fd := range fds {
		f := os.NewFile(uintptr(fd), "handover")
		c, err := net.FileConn(f)
		f.Close()
		if err != nil {
			t.Fatal(err)
		}
		ends[i] = c.(*net.UnixConn)
		t.Cleanup(func() { ends[i].Close() })
	}
	return ends[0], ends[1]
}

// linkServers has from hand its sessions to to, as a hot upgrade's commit
// does (from's Shutdown then moves them).
func linkServers(t *testing.T, from, to *testproxy.Proxy) {
	t.Helper()
	a, b := handoverPair(t)
	go func() { _ = to.Server.AdoptSessions(b) }()
	from.Server.HandOverSessions(a)
}

// dialCounter counts the connections a pool opens.
type dialCounter struct {
	driver.Connector
	n *atomic.Int64
}

func (c dialCounter) Connect(ctx context.Context) (driver.Conn, error) {
	c.n.Add(1)
	return c.Connector.Connect(ctx)
}

// handoverLoad runs writes and reads with parameters on a pool, some in
// transactions, and counts what failed.
type handoverLoad struct {
	db    *sql.DB
	dials atomic.Int64
	ok    atomic.Int64
	next  atomic.Int64
	stop  chan struct{}
	wg    sync.WaitGroup
	mu    sync.Mutex
	errs  map[string]int
}

func startHandoverLoad(t *testing.T, p *testproxy.Proxy, workers int) *handoverLoad {
	t.Helper()
	return startHandoverLoadAs(t, driverConfig(p, "root", "", testDB), workers)
}

func startHandoverLoadAs(t *testing.T, c *mysql.Config, workers int) *handoverLoad {
	t.Helper()
	conn, err := mysql.NewConnector(c)
	if err != nil {
		t.Fatal(err)
	}
	l := &handoverLoad{stop: make(chan struct{}), errs: map[string]int{}}
	l.db = sql.OpenDB(dialCounter{conn, &l.dials})
	t.Cleanup(func() { l.db.Close() })
	l.db.SetMaxOpenConns(workers)
	l.db.SetMaxIdleConns(workers)
	mustExec(t, l.db, "CREATE TABLE IF NOT EXISTS handover_ledger (id BIGINT PRIMARY KEY)")
	mustExec(t, l.db, "DELETE FROM handover_ledger")
	for range workers {
		l.wg.Add(1)
		go l.work()
	}
	return l
}

func (l *handoverLoad) work() {
	defer l.wg.Done()
	for {
		select {
		case <-l.stop:
			return
		default:
		}
		id := l.next.Add(1)
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		err := l.op(ctx, id)
		cancel()
		if err != nil {
			l.mu.Lock()
			l.errs[err.Error()]++
			l.mu.Unlock()
			continue
		}
		l.ok.Add(1)
	}
}

func (l *handoverLoad) op(ctx context.Context, id int64) error {
	if id%3 == 0 {
		tx, err := l.db.BeginTx(ctx, nil)
		if err != nil {
			return err
		}
		if _, err := tx.ExecContext(ctx, "INSERT INTO handover_ledger VALUES (?)", id); err != nil {
			_ = tx.Rollback()
			return err
		}
		return tx.Commit()
	}
	if _, err := l.db.ExecContext(ctx, "INSERT INTO handover_ledger VALUES (?)", id); err != nil {
		return err
	}
	var n int
	return l.db.QueryRowContext(ctx, "SELECT COUNT(*) FROM handover_ledger WHERE id = ?", id).Scan(&n)
}

func (l *handoverLoad) waitOps(t *testing.T, n int64) {
	t.Helper()
	target := l.ok.Load() + n
	waitFor(t, hangLimit, "load operations", func() bool { return l.ok.Load() >= target })
}

func (l *handoverLoad) finish() map[string]int {
	close(l.stop)
	l.wg.Wait()
	return l.errs
}

// TestHandoverMovesSessionsBetweenServers: a server told to hand its
// sessions over (HandOverSessions) and shut down gives every session of
// a busy pool to another server at its next idle point, outside a
// transaction; the clients see no error and open no connection, a
// statement prepared before the move executes after it, and a user
// variable on the server session is still there. In client_io_mode=net
// nothing moves: the sessions drain as before.
func TestHandoverMovesSessionsBetweenServers(t *testing.T) {
	testkit.CheckLeaks(t)
	from := startProxy(t, "netpoll")
	to := startProxy(t, "netpoll")
	load := startHandoverLoad(t, from, 6)
	keep, err := load.db.Conn(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	defer keep.Close()
	if _, err := keep.ExecContext(context.Background(), "SET @kept = 'still here'"); err != nil {
		t.Fatal(err)
	}
	stmt, err := keep.PrepareContext(context.Background(), "SELECT COUNT(*) FROM handover_ledger WHERE id <= ?")
	if err != nil {
		t.Fatal(err)
	}
	defer stmt.Close()
	load.waitOps(t, 50)
	dials := load.dials.Load()

	a, b := handoverPair(t)
	adopted := make(chan error, 1)
	go func() { adopted <- to.Server.AdoptSessions(b) }()
	from.Server.HandOverSessions(a)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	if err := from.Shutdown(ctx); err != nil {
		t.Fatalf("the old server did not hand every session over: %v", err)
	}
	if n := to.Server.ClientCount(); n != 6 {
		t.Errorf("the new server has %d sessions, want the pool's 6", n)
	}
	load.waitOps(t, 100)
	var kept string
	if err := keep.QueryRowContext(context.Background(), "SELECT @kept").Scan(&kept); err != nil || kept != "still here" {
		t.Errorf("the user variable after the move: %q, %v", kept, err)
	}
	var n int
	if err := stmt.QueryRow(1 << 40).Scan(&n); err != nil || n == 0 {
		t.Errorf("the statement prepared before the move: %d, %v", n, err)
	}
	if errs := load.finish(); len(errs) != 0 {
		t.Errorf("clients saw errors: %v", errs)
	}
	if d := load.dials.Load() - dials; d != 0 {
		t.Errorf("the pool opened %d connections", d)
	}
	if sent, got := metricValue(t, from, `obgate_session_handovers_total{direction="sent"}`),
		metricValue(t, to, `obgate_session_handovers_total{direction="adopted"}`); sent != 6 || got != 6 {
		t.Errorf("%v sessions sent, %v adopted; want 6 and 6", sent, got)
	}
	a.Close()
	if err := <-adopted; err == nil {
		t.Error("AdoptSessions returned no error at the end of its socket")
	}
}

// TestHandoverRefusedSessionsDrain: sessions the new server will not take
// (it is shutting down) stay with the old one and go on serving without
// an error; once quiet they drain there. The refusals are counted.
func TestHandoverRefusedSessionsDrain(t *testing.T) {
	from := startProxy(t, "netpoll")
	to := startProxy(t, "netpoll")
	load := startHandoverLoad(t, from, 3)
	load.waitOps(t, 20)
	sctx, scancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer scancel()
	if err := to.Shutdown(sctx); err != nil {
		t.Fatal(err)
	}
	linkServers(t, from, to)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	drained := make(chan error, 1)
	go func() { drained <- from.Shutdown(ctx) }()
	waitFor(t, hangLimit, "three refusals", func() bool {
		return metricValue(t, to, `obgate_session_handovers_total{direction="refused"}`) >= 3
	})
	load.waitOps(t, 50) // still served by the old server
	if errs := load.finish(); len(errs) != 0 {
		t.Errorf("clients saw errors while their sessions were refused: %v", errs)
	}
	if err := <-drained; err != nil {
		t.Fatalf("refused sessions did not drain: %v", err)
	}
	if sent := metricValue(t, from, `obgate_session_handovers_total{direction="sent"}`); sent != 0 {
		t.Errorf("%v sessions counted as sent", sent)
	}
}

// TestHandoverNetTransportDrains: client_io_mode=net sessions are not
// handed over; they go on serving and drain as before.
func TestHandoverNetTransportDrains(t *testing.T) {
	from := startProxy(t, "net")
	to := startProxy(t, "netpoll")
	load := startHandoverLoad(t, from, 3)
	load.waitOps(t, 20)
	linkServers(t, from, to)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	drained := make(chan error, 1)
	go func() { drained <- from.Shutdown(ctx) }()
	load.waitOps(t, 50)
	if errs := load.finish(); len(errs) != 0 {
		t.Errorf("clients saw errors: %v", errs)
	}
	if err := <-drained; err != nil {
		t.Fatalf("net sessions did not drain: %v", err)
	}
	if n := to.Server.ClientCount(); n != 0 {
		t.Errorf("%d net sessions moved", n)
	}
}

// TestHandoverOceanBaseSessions: in OceanBase mode the client connection
// moves and the new server opens its own server sessions, replaying the
// session's variables and database there: a busy pool moves with no
// error and no new connection, and a user variable, a system variable and
// a prepared statement of a session survive the move.
func TestHandoverOceanBaseSessions(t *testing.T) {
	c := startOBSim(t)
	from := startOBProxy(t, c, "netpoll")
	to := startOBProxy(t, c, "netpoll")
	load := startHandoverLoadAs(t, obDriverConfig(from, obFullUser, obDB), 4)
	keep, err := load.db.Conn(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	defer keep.Close()
	ctx := context.Background()
	for _, q := range []string{"SET @kept = 'still here'", "SET SESSION ob_query_timeout = 7000000"} {
		if _, err := keep.ExecContext(ctx, q); err != nil {
			t.Fatal(err)
		}
	}
	stmt, err := keep.PrepareContext(ctx, "SELECT COUNT(*) FROM handover_ledger WHERE id <= ?")
	if err != nil {
		t.Fatal(err)
	}
	defer stmt.Close()
	load.waitOps(t, 50)
	dials := load.dials.Load()

	linkServers(t, from, to)
	sctx, cancel := context.WithTimeout(ctx, 20*time.Second)
	defer cancel()
	if err := from.Shutdown(sctx); err != nil {
		t.Fatalf("the old server did not hand every session over: %v", err)
	}
	if n := to.Server.ClientCount(); n != 4 {
		t.Errorf("the new server has %d sessions, want the pool's 4", n)
	}
	load.waitOps(t, 100)
	var kept string
	var timeout int64
	if err := keep.QueryRowContext(ctx, "SELECT @kept, @@ob_query_timeout").Scan(&kept, &timeout); err != nil ||
		kept != "still here" || timeout != 7000000 {
		t.Errorf("the variables after the move: %q, %d, %v", kept, timeout, err)
	}
	var n int
	if err := stmt.QueryRow(1 << 40).Scan(&n); err != nil || n == 0 {
		t.Errorf("the statement prepared before the move: %d, %v", n, err)
	}
	if errs := load.finish(); len(errs) != 0 {
		t.Errorf("clients saw errors: %v", errs)
	}
	if d := load.dials.Load() - dials; d != 0 {
		t.Errorf("the pool opened %d connections", d)
	}
}

// TestHandoverTLSClientsDrain: a TLS client's session cannot move (Go
// cannot export a TLS connection's state): in a hand-over it is closed
// at its idle point with the ERR 1053 a MySQL server shutting down
// sends, while a plain client of the same server moves and goes on.
func TestHandoverTLSClientsDrain(t *testing.T) {
	certFile, keyFile, err := testkit.WriteSelfSignedCert(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	tlsKV := []string{"client_ssl_cert_file", certFile, "client_ssl_key_file", keyFile, "enable_client_ssl", "true"}
	from := startProxy(t, "netpoll", tlsKV...)
	to := startProxy(t, "netpoll", tlsKV...)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	secure, err := mysqlproto.Dial(ctx, from.Addr, mysqlproto.ClientOptions{User: "root", Database: testDB,
		TLS: &tls.Config{InsecureSkipVerify: true}})
	if err != nil {
		t.Fatal(err)
	}
	defer secure.Close()
	plain := dialClient(t, from, "root", "")
	for _, c := range []*mysqlproto.Client{secure, plain} {
		if _, err := c.Query("SELECT 1"); err != nil {
			t.Fatal(err)
		}
	}
	linkServers(t, from, to)
	if err := from.Shutdown(ctx); err != nil {
		t.Fatalf("drain: %v", err)
	}
	if err := readsShutdown(secure); err != nil {
		t.Errorf("the TLS client: %v", err)
	}
	if _, err := plain.Query("SELECT 1"); err != nil {
		t.Errorf("the plain client after the hand-over: %v", err)
	}
	if n := to.Server.ClientCount(); n != 1 {
		t.Errorf("%d sessions moved, want the plain one", n)
	}
}

// TestAdoptRefusesBadOffers: what a broken or hostile peer could send on
// the hand-over socket is refused with a reason, the descriptors closed,
// and nothing adopted: garbage, a state for the other routing mode, the
// wrong number of descriptors, a descriptor that is no TCP socket.
func TestAdoptRefusesBadOffers(t *testing.T) {
	testkit.CheckLeaks(t)
	to := startProxy(t, "netpoll")
	a, b := handoverPair(t)
	done := make(chan error, 1)
	go func() { done <- to.Server.AdoptSessions(b) }()
	pipeFDs := func() []int {
		var p [2]int
		if err := unix.Pipe2(p[:], unix.O_CLOEXEC); err != nil {
			t.Fatal(err)
		}
		return p[:]
	}
	oneFD := func() []int {
		p := pipeFDs()
		unix.Close(p[1])
		return p[:1]
	}
	offer := func(state []byte, fds []int) string {
		t.Helper()
		var oob []byte
		if len(fds) > 0 {
			oob = unix.UnixRights(fds...)
		}
		if _, _, err := a.WriteMsgUnix(state, oob, nil); err != nil {
			t.Fatal(err)
		}
		for _, fd := range fds {
			unix.Close(fd) // the receiver has its own copies
		}
		buf := make([]byte, 512)
		_ = a.SetReadDeadline(time.Now().Add(hangLimit))
		n, _, _, _, err := a.ReadMsgUnix(buf, nil)
		if err != nil {
			t.Fatal(err)
		}
		return string(buf[:n])
	}
	// Sockets and pipes of this process: what an offer brings.
	openFDs := func() int {
		ents, err := os.ReadDir("/proc/self/fd")
		if err != nil {
			t.Fatal(err)
		}
		n := 0
		for _, e := range ents {
			if l, _ := os.Readlink("/proc/self/fd/" + e.Name()); strings.HasPrefix(l, "socket:") || strings.HasPrefix(l, "pipe:") {
				n++
			}
		}
		return n
	}
	before := openFDs()
	for _, c := range []struct {
		name  string
		state []byte
		fds   []int
		want  string
	}{
		{"garbage", []byte("not a session"), nil, "no header"},
		{"OceanBase state", reactor.HandoverTestState('o', 1), oneFD(), "routing mode"},
		{"no descriptor", reactor.HandoverTestState('m', 1), nil, "descriptors"},
		{"pipes", reactor.HandoverTestState('m', 1), pipeFDs(), "client descriptor"},
	} {
		if got := offer(c.state, c.fds); !strings.HasPrefix(got, "no: ") || !strings.Contains(got, c.want) {
			t.Errorf("%s: answered %q, want a refusal naming %q", c.name, got, c.want)
		}
	}
	if n := to.Server.ClientCount(); n != 0 {
		t.Errorf("%d sessions adopted", n)
	}
	if after := openFDs(); after != before {
		t.Errorf("%d sockets and pipes open after the refusals, %d before", after, before)
	}
	a.Close()
	<-done
}

// TestHandoverTLSServerSessionsDrain: in mysql mode a session whose
// server connection runs TLS cannot move (the TLS state stays in this
// process); it drains like a session that cannot move at all: ERR 1053
// and the close once quiet, not a forced close at the drain's end.
func TestHandoverTLSServerSessionsDrain(t *testing.T) {
	from := startProxy(t, "netpoll", "enable_server_ssl", "true")
	to := startProxy(t, "netpoll")
	c := dialClient(t, from, "root", "")
	if _, err := c.Query("SELECT 1"); err != nil {
		t.Fatal(err)
	}
	linkServers(t, from, to)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := from.Shutdown(ctx); err != nil {
		t.Fatalf("the drain did not close the session once quiet: %v", err)
	}
	if err := readsShutdown(c); err != nil {
		t.Errorf("the client: %v", err)
	}
	if n := to.Server.ClientCount(); n != 0 {
		t.Errorf("%d sessions moved", n)
	}
}

// TestHandoverLostAnswerStopsOffers: a new process that takes an offer
// and never answers costs the session offered (closed here: it may be
// served there) and no other: a late answer would be read as the next
// offer's, so the rest are not offered and drain as usual.
func TestHandoverLostAnswerStopsOffers(t *testing.T) {
	from := startProxy(t, "netpoll")
	var clients []*mysqlproto.Client
	for range 3 {
		c := dialClient(t, from, "root", "")
		if _, err := c.Query("SELECT 1"); err != nil {
			t.Fatal(err)
		}
		clients = append(clients, c)
	}
	a, b := handoverPair(t)
	offers := make(chan int, 8)
	go func() { // reads offers, answers none
		buf := make([]byte, 1<<20)
		oob := make([]byte, 1024)
		for {
			_, oobn, _, _, err := b.ReadMsgUnix(buf, oob)
			if err != nil {
				return
			}
			msgs, _ := unix.ParseSocketControlMessage(oob[:oobn])
			for i := range msgs {
				fds, _ := unix.ParseUnixRights(&msgs[i])
				for _, fd := range fds {
					unix.Close(fd)
				}
			}
			offers <- 1
		}
	}()
	from.Server.HandOverSessions(a)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := from.Shutdown(ctx); err != nil {
		t.Fatalf("drain: %v", err)
	}
	if n := len(offers); n != 1 {
		t.Errorf("%d offers made, want 1 (none after the lost answer)", n)
	}
	drained := 0
	for _, c := range clients {
		if readsShutdown(c) == nil {
			drained++
		}
	}
	if drained != 2 {
		t.Errorf("%d of 3 sessions drained with ERR 1053, want the 2 not offered", drained)
	}
}
