package reactor_test

import (
	"context"
	"testing"

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
}
