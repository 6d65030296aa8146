package reactor_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"obgate/internal/testkit"
	"obgate/reactor"
)

// TestE2EOBPollerServesStatements: in OceanBase mode with netpoll, the
// common statements (executes of prepared statements and text queries,
// OB 2.0 to the servers) start and end on the poller once the session's
// server sessions are open and in step; a transaction's statements stay
// on its server, and what needs a round trip first (a held BEGIN) goes to
// a goroutine and comes back.
func TestE2EOBPollerServesStatements(t *testing.T) {
	testkit.CheckLeaks(t)
	c := startOBSim(t)
	p := startOBProxy(t, c, "netpoll")
	db, conn := obConn(t, p)
	db.SetMaxOpenConns(1)
	ctx := context.Background()
	const count = 200
	for i := range 10 {
		execCtx(t, conn, "INSERT INTO kv (id, v) VALUES (?, ?)", i, "v"+itoa(int64(i)))
	}
	stmt, err := conn.PrepareContext(ctx, "SELECT v FROM kv WHERE id = ?")
	if err != nil {
		t.Fatal(err)
	}
	defer stmt.Close()
	// The first statements open what the table's route needs.
	for i := range 10 {
		var v string
		if err := stmt.QueryRowContext(ctx, i).Scan(&v); err != nil {
			t.Fatal(err)
		}
	}
	before, handOffs := reactor.PolledFinished(), reactor.PollerHandOffs()
	for i := range count {
		var v string
		if err := stmt.QueryRowContext(ctx, i%10).Scan(&v); err != nil || v != "v"+itoa(int64(i%10)) {
			t.Fatalf("execute %d: %q %v", i, v, err)
		}
		var text string
		if err := conn.QueryRowContext(ctx, "SELECT CONCAT('row ', "+itoa(int64(i))+")").Scan(&text); err != nil || text != "row "+itoa(int64(i)) {
			t.Fatalf("query %d: %q %v", i, text, err)
		}
	}
	testkit.Eventually(t, hangLimit, func() bool { return reactor.PolledFinished()-before >= 2*count-2 },
		"%d of %d statements ended on the poller", reactor.PolledFinished()-before, 2*count)
	// A table's location or a server session the router prefers may
	// still be opening for the first few: a handful may go off it.
	if n := reactor.PollerHandOffs() - handOffs; n > 2 {
		t.Errorf("%d statements were handed to a goroutine", n)
	}

	// A transaction: BEGIN is held (answered off the poller), the first
	// statement takes it to the server; the rest run on the poller, on
	// that server session, and see the transaction's own writes.
	tx, err := conn.BeginTx(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tx.ExecContext(ctx, "UPDATE kv SET v = 'in tx' WHERE id = 1"); err != nil {
		t.Fatal(err)
	}
	// The reads are queries with an argument, as go-sql-driver sends them
	// without an explicit Prepare: a prepare, an execute and a close each,
	// all on the poller, on the transaction's server session.
	before, followed, handOffs := reactor.PolledFinished(), reactor.FollowedOffPoller(), reactor.PollerHandOffs()
	const reads = 20
	for range reads {
		var v string
		if err := tx.QueryRowContext(ctx, "SELECT v FROM kv WHERE id = ?", 1).Scan(&v); err != nil || v != "in tx" {
			t.Fatalf("in the transaction: %q %v", v, err)
		}
	}
	testkit.Eventually(t, hangLimit, func() bool { return reactor.PolledFinished()-before >= 3*reads },
		"%d of the transaction's %d prepares, executes and closes ended on the poller", reactor.PolledFinished()-before, 3*reads)
	if n := reactor.PollerHandOffs() - handOffs; n != 0 {
		t.Errorf("%d of the transaction's commands were handed to a goroutine", n)
	}
	if n := reactor.FollowedOffPoller() - followed; n != 0 {
		t.Errorf("%d of the transaction's commands were served by a goroutine after a hand-off", n)
	}
	if err := tx.Rollback(); err != nil {
		t.Fatal(err)
	}
	var v string
	if err := stmt.QueryRowContext(ctx, 1).Scan(&v); err != nil || v != "v1" {
		t.Fatalf("after the rollback: %q %v", v, err)
	}

	// /metrics tells an operator the same: what ended on the poller, and
	// what went to a goroutine, by where it was taken over.
	text := p.MetricsText()
	if n, _ := testkit.MetricSum(text, "obgate_poller_finished_total"); n < 2*count-2+3*reads {
		t.Errorf("obgate_poller_finished_total %v, want at least %d", n, 2*count-2+3*reads)
	}
	if n, _ := testkit.MetricSum(text, "obgate_poller_handoffs_total"); n < 1 {
		t.Errorf("obgate_poller_handoffs_total %v: the held BEGIN went to a goroutine", n)
	}
	if _, ok := testkit.MetricSum(text, "obgate_poller_handoffs_total", "step", "command_not_fast"); !ok {
		t.Errorf("obgate_poller_handoffs_total has no command_not_fast series:\n%s", text)
	}
}

// TestE2EOBPollerPreparesOnTheLeader: go-sql-driver's query with an
// argument on a hash-partitioned table is a prepare (routed without the
// key), an execute (routed to the key's partition leader, often another
// server) and a close. Where the leader's server session lacks the
// statement, the poller prepares it there itself and then serves the
// execute: every command ends on the poller, each execute runs on its
// leader as a local plan, and the answers are right.
func TestE2EOBPollerPreparesOnTheLeader(t *testing.T) {
	testkit.CheckLeaks(t)
	c := startPartOBSim(t, false)
	p := startOBProxy(t, c, "netpoll", "client_ps_keep_count", "0")
	db := openDB(t, obDriverConfig(p, obFullUser, partDB))
	db.SetMaxOpenConns(1)
	ctx := context.Background()
	const keys, count = 16, 200
	for i := range keys {
		if _, err := db.ExecContext(ctx, "INSERT INTO h_orders (id, v) VALUES (?, ?)", i, "v"+itoa(int64(i))); err != nil {
			t.Fatal(err)
		}
	}
	mk := newMarker("leader")
	query := "SELECT v FROM h_orders WHERE id = ? /* " + mk + " */"
	read := func(i int) {
		t.Helper()
		var v string
		if err := db.QueryRowContext(ctx, query, i%keys).Scan(&v); err != nil || v != "v"+itoa(int64(i%keys)) {
			t.Fatalf("query %d: %q %v", i, v, err)
		}
	}
	// The first queries fetch the table's location and open a server
	// session to each leader.
	for i := range 2 * keys {
		read(i)
	}
	before, handOffs, prepares := reactor.PolledFinished(), reactor.PollerHandOffs(), reactor.PolledPrepares()
	logged := len(proxyEntries(c, mk))
	for i := range count {
		read(i)
	}
	testkit.Eventually(t, hangLimit, func() bool { return reactor.PolledFinished()-before >= 3*count },
		"%d of %d prepares, executes and closes ended on the poller", reactor.PolledFinished()-before, 3*count)
	if n := reactor.PollerHandOffs() - handOffs; n != 0 {
		t.Errorf("%d commands were handed to a goroutine", n)
	}
	// Four partitions over three servers: most executes find their
	// leader's server session without the statement.
	again := reactor.PolledPrepares() - prepares
	if again < count/4 {
		t.Errorf("%d of %d statements were prepared again on the poller, want at least %d", again, count, count/4)
	}
	var executes, remote int
	for _, e := range proxyEntries(c, mk)[logged:] {
		if e.Command == "prepare" {
			continue
		}
		executes++
		if !e.Local {
			remote++
		}
	}
	if executes != count || remote != 0 {
		t.Errorf("obsim logged %d executes, %d of them remote plans; want %d, none remote", executes, remote, count)
	}
	t.Logf("%d of %d statements prepared again on the poller", again, count)
}

// TestE2EOBPollerPrepareAnswerDamaged: the answer to a prepare the poller
// sent before an execute arrives with a broken OB 2.0 checksum. A
// goroutine takes the command over, the server session is closed (it is
// out of step), and the execute still runs, once, on its partition's
// leader: the client sees its row and no error. The leader's next frame
// is damaged before each query; when the client's own prepare went to the
// leader, that frame is its answer instead, which the usual path resends.
func TestE2EOBPollerPrepareAnswerDamaged(t *testing.T) {
	testkit.CheckLeaks(t)
	c := startPartOBSim(t, false)
	p := startOBProxy(t, c, "netpoll", "client_ps_keep_count", "0")
	db := openDB(t, obDriverConfig(p, obFullUser, partDB))
	db.SetMaxOpenConns(1)
	ctx := context.Background()
	const keys = 8
	leaders := make([]string, keys)
	for i := range keys {
		if _, err := db.ExecContext(ctx, "INSERT INTO h_orders (id, v) VALUES (?, ?)", i, "v"+itoa(int64(i))); err != nil {
			t.Fatal(err)
		}
		part, err := c.PartitionOf("h_orders", map[string]string{"id": itoa(int64(i))})
		if err != nil {
			t.Fatal(err)
		}
		if leaders[i], err = c.Leader("h_orders", part); err != nil {
			t.Fatal(err)
		}
	}
	mk := newMarker("damaged")
	query := "SELECT v FROM h_orders WHERE id = ? /* " + mk + " */"
	read := func(i int) {
		t.Helper()
		var v string
		if err := db.QueryRowContext(ctx, query, i%keys).Scan(&v); err != nil || v != "v"+itoa(int64(i%keys)) {
			t.Fatalf("query %d: %q %v", i, v, err)
		}
	}
	for i := range 2 * keys {
		read(i)
	}
	offPoller := reactor.PreparesOffPoller()
	logged := len(proxyEntries(c, mk))
	const rounds = 40
	for i := range rounds {
		c.Node(leaders[i%keys]).CorruptFrames(1)
		read(i)
		c.Node(leaders[i%keys]).CorruptFrames(0)
	}
	if n := reactor.PreparesOffPoller() - offPoller; n == 0 {
		t.Errorf("no damaged prepare answer went to a goroutine in %d rounds", rounds)
	}
	executes := 0
	for _, e := range proxyEntries(c, mk)[logged:] {
		if e.Command != "prepare" {
			executes++
		}
	}
	if executes != rounds {
		t.Errorf("obsim logged %d executes, want %d", executes, rounds)
	}
}

// TestE2EOBPollerPrepareAnswerOverdue: the leader stops answering
// statements while a prepare the poller sent before an execute awaits its
// answer. After short_async_task_timeout the command goes to a goroutine,
// whose read meets the same deadline; the server session is closed and
// the execute is served from its start by the usual path, which prepares
// it elsewhere: the client gets its row, late, and no error.
func TestE2EOBPollerPrepareAnswerOverdue(t *testing.T) {
	testkit.CheckLeaks(t)
	c := startPartOBSim(t, false)
	const timeout = time.Second
	p := startOBProxy(t, c, "netpoll", "short_async_task_timeout", timeout.String(), "client_ps_keep_count", "0")
	db := openDB(t, obDriverConfig(p, obFullUser, partDB))
	db.SetMaxOpenConns(1)
	ctx, cancel := context.WithTimeout(context.Background(), hangLimit)
	defer cancel()
	const keys = 8
	leaders := make([]string, keys)
	for i := range keys {
		if _, err := db.ExecContext(ctx, "INSERT INTO h_orders (id, v) VALUES (?, ?)", i, "v"+itoa(int64(i))); err != nil {
			t.Fatal(err)
		}
		part, err := c.PartitionOf("h_orders", map[string]string{"id": itoa(int64(i))})
		if err != nil {
			t.Fatal(err)
		}
		if leaders[i], err = c.Leader("h_orders", part); err != nil {
			t.Fatal(err)
		}
	}
	mk := newMarker("overdue")
	query := "SELECT v FROM h_orders WHERE id = ? /* " + mk + " */"
	for i := range 2 * keys {
		var v string
		if err := db.QueryRowContext(ctx, query, i%keys).Scan(&v); err != nil {
			t.Fatal(err)
		}
	}
	// The statement is prepared on one server; the execute goes to a key
	// whose leader is another, which stops answering statements.
	stmt, err := db.PrepareContext(ctx, query)
	if err != nil {
		t.Fatal(err)
	}
	defer stmt.Close()
	es := proxyEntries(c, mk)
	preparedOn := es[len(es)-1]
	if preparedOn.Command != "prepare" {
		t.Fatalf("the last statement obsim logged is a %s, want the prepare", preparedOn.Command)
	}
	key := -1
	for i, l := range leaders {
		if l != preparedOn.Node {
			key = i
			break
		}
	}
	if key < 0 {
		t.Fatalf("every key's leader is %s, where the statement was prepared", preparedOn.Node)
	}
	offPoller := reactor.PreparesOffPoller()
	node := c.Node(leaders[key])
	node.HangSQL()
	var v string
	err = stmt.QueryRowContext(ctx, key).Scan(&v)
	node.UnhangSQL()
	if err != nil || v != "v"+itoa(int64(key)) {
		t.Fatalf("execute for key %d, whose leader %s hung: %q %v", key, leaders[key], v, err)
	}
	if reactor.PreparesOffPoller() == offPoller {
		t.Errorf("the prepare the poller sent to %s did not go to a goroutine", leaders[key])
	}
}

// TestE2EOBPollerClientGoneIsNoServerFault: an application whose query
// times out while its server does not answer (go-sql-driver closes the
// connection when the context ends) ends its session as a client that
// left. The server session obgate closed under the command is not counted
// as a broken server connection, and the server stays in use.
func TestE2EOBPollerClientGoneIsNoServerFault(t *testing.T) {
	testkit.CheckLeaks(t)
	c := startPartOBSim(t, false)
	p := startOBProxy(t, c, "netpoll")
	db := openDB(t, obDriverConfig(p, obFullUser, partDB))
	ctx, cancel := context.WithTimeout(context.Background(), hangLimit)
	defer cancel()
	const key = 3
	if _, err := db.ExecContext(ctx, "INSERT INTO h_orders (id, v) VALUES (?, ?)", key, "v3"); err != nil {
		t.Fatal(err)
	}
	part, err := c.PartitionOf("h_orders", map[string]string{"id": itoa(key)})
	if err != nil {
		t.Fatal(err)
	}
	leader, err := c.Leader("h_orders", part)
	if err != nil {
		t.Fatal(err)
	}
	const query = "SELECT v FROM h_orders WHERE id = ?"
	var v string
	if err := db.QueryRowContext(ctx, query, key).Scan(&v); err != nil {
		t.Fatal(err)
	}
	broken := p.Server.StatCounters().BrokenServers
	node := c.Node(leader)
	node.HangSQL()
	for range 3 {
		short, stop := context.WithTimeout(ctx, 200*time.Millisecond)
		err := db.QueryRowContext(short, query, key).Scan(&v)
		stop()
		if !errors.Is(err, context.DeadlineExceeded) {
			node.UnhangSQL()
			t.Fatalf("query to the hung leader %s: %v, want the client's deadline", leader, err)
		}
	}
	testkit.Eventually(t, hangLimit, func() bool { return p.Server.ClientCount() <= 1 },
		"%d client connections open, want the timed-out ones gone", p.Server.ClientCount())
	node.UnhangSQL()
	if n := p.Server.StatCounters().BrokenServers - broken; n != 0 {
		t.Errorf("clients that timed out counted as %d broken server connections", n)
	}
	if err := db.QueryRowContext(ctx, query, key).Scan(&v); err != nil || v != "v3" {
		t.Fatalf("after the timeouts: %q %v", v, err)
	}
}
