package reactor_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"obgate/internal/testkit"

	"github.com/go-sql-driver/mysql"
)

// TestOBPreparedReadOnHungNodeAnsweredBeforeClientTimeout: with obgate's
// default detection, a prepared read in flight on a node that hangs is
// answered by another node before the client's 5 s read timeout: the
// detect task lists the node within about 4 s and closes its
// connections, and the read goes again elsewhere.
func TestOBPreparedReadOnHungNodeAnsweredBeforeClientTimeout(t *testing.T) {
	testkit.CheckLeaks(t)
	c := startOBSim(t)
	forEachMode(t, func(t *testing.T, mode string) {
		resetOBSim(t, c)
		p := startOBProxy(t, c, mode)
		_, conn := obConn(t, p, func(cfg *mysql.Config) { cfg.ReadTimeout = 5 * time.Second })
		ctx := context.Background()
		mk := newMarker("pshang")
		stmt, err := conn.PrepareContext(ctx, "SELECT CONCAT('answer-', ?) /* "+mk+" */")
		if err != nil {
			t.Fatal(err)
		}
		defer stmt.Close()
		var got string
		if err := stmt.QueryRowContext(ctx, 0).Scan(&got); err != nil {
			t.Fatal(err)
		}
		x := entryFor(t, c, mk)
		node := c.Node(x.Node)
		node.Hang()
		defer node.Unhang()
		start := time.Now()
		if err := stmt.QueryRowContext(ctx, 1).Scan(&got); err != nil || got != "answer-1" {
			t.Fatalf("prepared read on the hung node %s after %v: %q, %v", x.Node, time.Since(start).Round(time.Millisecond), got, err)
		}
		t.Logf("answered after %v", time.Since(start).Round(time.Millisecond))
		if v, _ := viewOf(p, node.Addr()); !v.DetectCongested {
			t.Errorf("the hung node is not detect-listed: %+v", v)
		}
		if n, _ := testkit.MetricSum(p.MetricsText(), "obgate_statement_resent_total"); n < 1 {
			t.Errorf("obgate_statement_resent_total = %v: the read never went to the hung node, the test proves nothing", n)
		}
	})
}

// TestOBStatementCloseWithBrokenServerSession: COM_STMT_CLOSE of a
// statement prepared on several server sessions, one of whose nodes has
// stopped, closes it on the others and forgets the broken one; the
// session goes on (it used to index past the list it was shrinking).
func TestOBStatementCloseWithBrokenServerSession(t *testing.T) {
	testkit.CheckLeaks(t)
	c := startOBSim(t)
	forEachMode(t, func(t *testing.T, mode string) {
		resetOBSim(t, c)
		p := startOBProxy(t, c, mode, "enable_cached_server", "false")
		_, conn := obConn(t, p)
		ctx := context.Background()
		mk := newMarker("psclose")
		stmt, err := conn.PrepareContext(ctx, "SELECT ? /* "+mk+" */")
		if err != nil {
			t.Fatal(err)
		}
		nodes := map[string]bool{}
		for i := 0; len(nodes) < 2 && i < 200; i++ {
			var v int
			if err := stmt.QueryRowContext(ctx, i).Scan(&v); err != nil {
				t.Fatal(err)
			}
			nodes = map[string]bool{}
			for _, e := range proxyEntries(c, mk) {
				nodes[e.Node] = true
			}
		}
		if len(nodes) < 2 {
			t.Fatalf("the statement ran on %v only; the test needs two nodes", nodes)
		}
		var stop string
		for n := range nodes {
			stop = n
			break
		}
		if err := c.Node(stop).Stop(); err != nil {
			t.Fatal(err)
		}
		defer c.Node(stop).Start()
		if err := stmt.Close(); err != nil {
			t.Fatalf("close: %v", err)
		}
		for i := range 3 {
			if got := rowStrings(t, conn, fmt.Sprintf("SELECT %d /* %s-after */", i, mk)); fmt.Sprint(got) != fmt.Sprintf("[[%d]]", i) {
				t.Fatalf("after the close: %v", got)
			}
		}
	})
}

// TestOBExecuteWhosePrepareBreaksGoesElsewhere: an execute routed to a
// server session where the statement is not prepared yet makes obgate
// prepare it there first; when that server's answer to the prepare is
// damaged, nothing of the client's request has been sent, so the execute
// goes to another server session, and the client gets its rows.
func TestOBExecuteWhosePrepareBreaksGoesElsewhere(t *testing.T) {
	testkit.CheckLeaks(t)
	c := startOBSim(t)
	forEachMode(t, func(t *testing.T, mode string) {
		resetOBSim(t, c)
		p := startOBProxy(t, c, mode, "enable_cached_server", "false")
		_, conn := obConn(t, p)
		ctx := context.Background()
		mk := newMarker("psbreak")
		stmt, err := conn.PrepareContext(ctx, "SELECT CONCAT('row-', ?) /* "+mk+" */")
		if err != nil {
			t.Fatal(err)
		}
		defer stmt.Close()
		var got string
		if err := stmt.QueryRowContext(ctx, 0).Scan(&got); err != nil {
			t.Fatal(err)
		}
		home := entryFor(t, c, mk).Node
		var other string
		for _, n := range c.Nodes() {
			if n.Name() != home {
				other = n.Name()
				break
			}
		}
		c.Node(other).CorruptFrames(1)
		hit := false
		for i := 1; i <= 60 && !hit; i++ {
			if err := stmt.QueryRowContext(ctx, i).Scan(&got); err != nil || got != fmt.Sprintf("row-%d", i) {
				t.Fatalf("execute %d: %q, %v", i, got, err)
			}
			for _, e := range proxyEntries(c, mk) {
				if e.Command == "prepare" && e.Node == other {
					hit = true
				}
			}
		}
		if !hit {
			t.Fatalf("no execute went to %s; the test proves nothing", other)
		}
	})
}
