package reactor_test

import (
	"context"
	"database/sql"
	"fmt"
	"slices"
	"strings"
	"testing"

	"obgate/internal/testkit"
	"obgate/tools/obsim"
)

// TestOBSpread checks how statements outside transactions are spread with
// the default settings (enable_cached_server=true): many clients' sessions
// land on every node, while each client stays on its server session.
func TestOBSpread(t *testing.T) {
	testkit.CheckLeaks(t)
	c := startOBSim(t)
	forEachMode(t, func(t *testing.T, mode string) {
		resetOBSim(t, c)
		p := startOBProxy(t, c, mode)
		const clients = 36
		mk := newMarker("spread")
		db := openDB(t, obDriverConfig(p, obFullUser, obDB))
		db.SetMaxIdleConns(clients)
		ctx, cancel := context.WithTimeout(context.Background(), hangLimit)
		defer cancel()
		conns := make([]*sql.Conn, clients)
		for i := range conns {
			conn, err := db.Conn(ctx)
			if err != nil {
				t.Fatalf("connection %d: %v", i, err)
			}
			defer conn.Close()
			conns[i] = conn
		}
		for i, conn := range conns {
			got := rowStrings(t, conn, fmt.Sprintf("SELECT %d /* %s-%d */", i, mk, i))
			if len(got) != 1 || got[0][0] != fmt.Sprint(i) {
				t.Fatalf("client %d: got %q", i, got)
			}
		}
		var first []string
		for i := range conns {
			first = append(first, entryFor(t, c, fmt.Sprintf("%s-%d ", mk, i)).Node)
		}
		if nodes := slices.Compact(slices.Sorted(slices.Values(first))); len(nodes) < 3 {
			t.Errorf("the first statements of %d clients ran on %v only, want all 3 nodes", clients, nodes)
		}

		// With enable_cached_server=true a client stays where it is while
		// that server session is healthy.
		sticky := newMarker("sticky")
		for i := range 20 {
			rowStrings(t, conns[0], fmt.Sprintf("SELECT %d /* %s-%d */", i, sticky, i))
		}
		if nodes := nodesOf(proxyEntries(c, sticky)); len(nodes) != 1 {
			t.Errorf("with enable_cached_server=true one client's statements ran on %v, want one node", nodes)
		}
		if n := len(proxyEntries(c, sticky)); n != 20 {
			t.Errorf("%d log entries for 20 statements", n)
		}
	})
}

// TestOBFlashBreak stops the node that serves an idle client session: the
// next statement runs on another node with the same session state, and
// the client sees no error.
func TestOBFlashBreak(t *testing.T) {
	testkit.CheckLeaks(t)
	c := startOBSim(t)
	forEachMode(t, func(t *testing.T, mode string) {
		resetOBSim(t, c)
		p := startOBProxy(t, c, mode)
		_, conn := obConn(t, p)
		mk := newMarker("flash")
		execCtx(t, conn, fmt.Sprintf("SET time_zone = '-04:44', @fb = 'kept''s' /* %s-set */", mk))
		execCtx(t, conn, fmt.Sprintf("USE mysql /* %s-use */", mk))
		rowStrings(t, conn, fmt.Sprintf("SELECT 1 /* %s-0 */", mk))
		x := entryFor(t, c, mk+"-0 ").Node
		for i := 1; i < 4; i++ { // sticky: still X
			rowStrings(t, conn, fmt.Sprintf("SELECT 1 /* %s-%d */", mk, i))
			if n := entryFor(t, c, fmt.Sprintf("%s-%d ", mk, i)).Node; n != x {
				t.Fatalf("statement %d ran on %s, the one before on %s: the session is not sticky", i, n, x)
			}
		}
		if err := c.Node(x).Stop(); err != nil {
			t.Fatal(err)
		}
		idleServerSessions()
		for i := 10; i < 16; i++ {
			got := rowStrings(t, conn, fmt.Sprintf("SELECT @@time_zone, @fb, DATABASE() /* %s-%d */", mk, i))
			if want := "[[-04:44 kept's mysql]]"; fmt.Sprint(got) != want {
				t.Errorf("after node %s stopped, statement %d got %q, want %s", x, i, got, want)
			}
			if n := entryFor(t, c, fmt.Sprintf("%s-%d ", mk, i)).Node; n == x {
				t.Errorf("statement %d ran on the stopped node %s", i, x)
			}
		}
	})
}

// TestOBFlashBreakPrepared stops the node where a statement was prepared
// and last executed: the next execution is prepared again elsewhere and
// succeeds. Also a held BEGIN: the node of the idle session stops before
// the transaction's first statement, which then starts the transaction on
// another node.
func TestOBFlashBreakPrepared(t *testing.T) {
	testkit.CheckLeaks(t)
	c := startOBSim(t)
	forEachMode(t, func(t *testing.T, mode string) {
		resetOBSim(t, c)
		p := startOBProxy(t, c, mode)
		_, conn := obConn(t, p)
		ctx, cancel := context.WithTimeout(context.Background(), hangLimit)
		defer cancel()
		mk := newMarker("flashps")
		st, err := conn.PrepareContext(ctx, "SELECT ? * 3 /* "+mk+"-ps */")
		if err != nil {
			t.Fatal(err)
		}
		defer st.Close()
		var n int
		if err := st.QueryRowContext(ctx, 5).Scan(&n); err != nil || n != 15 {
			t.Fatalf("first execution: %d, %v", n, err)
		}
		x := entryFor(t, c, mk+"-ps ").Node
		if err := c.Node(x).Stop(); err != nil {
			t.Fatal(err)
		}
		idleServerSessions()
		for i := range 3 {
			if err := st.QueryRowContext(ctx, i).Scan(&n); err != nil || n != i*3 {
				t.Errorf("execution %d after node %s stopped: %d, %v", i, x, n, err)
			}
		}
		for _, e := range proxyEntries(c, mk+"-ps ")[2:] {
			if e.Node == x {
				t.Errorf("ran on the stopped node:%s", describeEntries([]obsim.LogEntry{e}))
			}
		}
		if err := c.Node(x).Start(); err != nil {
			t.Fatal(err)
		}

		key := int(markerSeq.Add(1))
		rowStrings(t, conn, fmt.Sprintf("SELECT 1 /* %s-idle */", mk))
		y := entryFor(t, c, mk+"-idle ").Node
		execCtx(t, conn, fmt.Sprintf("BEGIN /* %s-begin */", mk))
		if err := c.Node(y).Stop(); err != nil {
			t.Fatal(err)
		}
		idleServerSessions()
		execCtx(t, conn, fmt.Sprintf("INSERT INTO kv VALUES (%d, 'held') /* %s-insert */", key, mk))
		execCtx(t, conn, fmt.Sprintf("COMMIT /* %s-commit */", mk))
		b, ins, cm := entryFor(t, c, mk+"-begin "), entryFor(t, c, mk+"-insert "), entryFor(t, c, mk+"-commit ")
		if b.Node == y || b.Session != ins.Session || ins.Session != cm.Session {
			t.Errorf("held BEGIN after node %s stopped: BEGIN, INSERT, COMMIT ran on %s/%d, %s/%d, %s/%d; want one other node",
				y, b.Node, b.Session, ins.Node, ins.Session, cm.Node, cm.Session)
		}
		var v string
		if err := c.Admin().QueryRow("SELECT v FROM "+obDB+".kv WHERE id = ?", key).Scan(&v); err != nil || v != "held" {
			t.Errorf("committed row: %q, %v", v, err)
		}
	})
}

// TestOBStatementsThatStay checks the statements that must run on the
// server session of the statement before them even with
// enable_cached_server=false: LAST_INSERT_ID() after an INSERT, and
// everything after CREATE TEMPORARY TABLE or GET_LOCK.
func TestOBStatementsThatStay(t *testing.T) {
	testkit.CheckLeaks(t)
	c := startOBSim(t)
	if _, err := c.Admin().Exec("CREATE TABLE " + obDB + ".ai (id INT AUTO_INCREMENT PRIMARY KEY, v INT)"); err != nil {
		t.Fatal(err)
	}
	forEachMode(t, func(t *testing.T, mode string) {
		resetOBSim(t, c)
		p := startOBProxy(t, c, mode, "enable_cached_server", "false")

		t.Run("LAST_INSERT_ID", func(t *testing.T) {
			_, conn := obConn(t, p)
			mk := newMarker("lastid")
			for i := range 12 {
				res := execCtx(t, conn, fmt.Sprintf("INSERT INTO ai (v) VALUES (%d) /* %s-ins%d */", i, mk, i))
				id, _ := res.LastInsertId()
				got := rowStrings(t, conn, fmt.Sprintf("SELECT LAST_INSERT_ID() /* %s-sel%d */", mk, i))
				if fmt.Sprint(got) != fmt.Sprintf("[[%d]]", id) {
					t.Errorf("insert %d: LAST_INSERT_ID() %q, the INSERT's OK said %d", i, got, id)
				}
				ins, sel := entryFor(t, c, fmt.Sprintf("%s-ins%d ", mk, i)), entryFor(t, c, fmt.Sprintf("%s-sel%d ", mk, i))
				if ins.Session != sel.Session {
					t.Errorf("insert %d: SELECT LAST_INSERT_ID() ran on %s/%d, the INSERT on %s/%d", i, sel.Node, sel.Session, ins.Node, ins.Session)
				}
			}
			if nodes := nodesOf(proxyEntries(c, mk+"-ins")); len(nodes) < 2 {
				t.Errorf("the INSERTs ran on %v only: the test did not move", nodes)
			}
		})

		for _, pin := range []string{"CREATE TEMPORARY TABLE tmp_pin (x INT)", "SELECT GET_LOCK('%s', 5)"} {
			t.Run(strings.Fields(pin)[1], func(t *testing.T) {
				_, conn := obConn(t, p)
				mk := newMarker("pin")
				if strings.Contains(pin, "%s") {
					pin = fmt.Sprintf(pin, mk) // a lock no other test holds
				}
				for i := range 4 {
					rowStrings(t, conn, fmt.Sprintf("SELECT 1 /* %s-pre%d */", mk, i))
				}
				if strings.HasPrefix(pin, "SELECT") {
					rowStrings(t, conn, fmt.Sprintf("%s /* %s-pin */", pin, mk))
				} else {
					execCtx(t, conn, fmt.Sprintf("%s /* %s-pin */", pin, mk))
				}
				home := entryFor(t, c, mk+"-pin ")
				for i := range 12 {
					rowStrings(t, conn, fmt.Sprintf("SELECT %d /* %s-after%d */", i, mk, i))
					if e := entryFor(t, c, fmt.Sprintf("%s-after%d ", mk, i)); e.Session != home.Session {
						t.Fatalf("statement %d after %q ran on %s/%d, not on its server session %s/%d", i, pin, e.Node, e.Session, home.Node, home.Session)
					}
				}
			})
		}
	})
}

// TestOBTransactionOnOneNode checks that with enable_cached_server=false a
// transaction's statements (obgate's held BEGIN included) all run on one
// node, and that statements move again after it ends.
func TestOBTransactionOnOneNode(t *testing.T) {
	testkit.CheckLeaks(t)
	c := startOBSim(t)
	forEachMode(t, func(t *testing.T, mode string) {
		p := startOBProxy(t, c, mode, "enable_cached_server", "false")
		for _, start := range []string{"BEGIN", "START TRANSACTION", "SET autocommit = 0"} {
			t.Run(start, func(t *testing.T) {
				resetOBSim(t, c)
				_, conn := obConn(t, p)
				mk := newMarker("txn")
				key := int(markerSeq.Add(1))
				q := func(step, sql string) string { return fmt.Sprintf("%s /* %s-%s */", sql, mk, step) }
				// Move around first, so that the transaction does not
				// start on a server session that happens to be the only one.
				for i := range 6 {
					rowStrings(t, conn, q(fmt.Sprintf("pre%d", i), "SELECT 1"))
				}
				execCtx(t, conn, q("start", start))
				if start != "SET autocommit = 0" {
					if es := proxyEntries(c, mk+"-start "); len(es) != 0 {
						t.Errorf("%s reached a server before the transaction's first statement (not held):%s", start, describeEntries(es))
					}
				}
				execCtx(t, conn, q("insert", "INSERT INTO kv VALUES (?, 'a')"), key)
				execCtx(t, conn, q("update", "UPDATE kv SET v = 'b' WHERE id = ?"), key)
				for i := range 6 {
					if got := rowStrings(t, conn, q(fmt.Sprintf("select%d", i), "SELECT v FROM kv WHERE id = ?"), key); fmt.Sprint(got) != "[[b]]" {
						t.Errorf("inside the transaction: %q, want [[b]]", got)
					}
				}
				execCtx(t, conn, q("commit", "COMMIT"))
				if start == "SET autocommit = 0" {
					execCtx(t, conn, q("ac1", "SET autocommit = 1"))
				}
				for i := range 20 {
					rowStrings(t, conn, q(fmt.Sprintf("post%d", i), "SELECT v FROM kv WHERE id = ?"), key)
				}

				var txn []string // the transaction's nodes, in order
				steps := []string{"start", "insert", "update", "select0", "select1", "select2", "select3", "select4", "select5", "commit"}
				if start == "SET autocommit = 0" {
					steps = steps[1:] // SET autocommit runs anywhere
				}
				for _, s := range steps {
					txn = append(txn, entryFor(t, c, mk+"-"+s+" ").Node)
				}
				if nodes := slices.Compact(slices.Clone(txn)); len(nodes) != 1 {
					t.Errorf("the transaction ran on %v (steps %v), want one node", txn, steps)
				}
				if start != "SET autocommit = 0" {
					// The held BEGIN goes right before the INSERT (its
					// prepare, as go-sql-driver prepares it), on its server
					// session.
					b, ins := entryFor(t, c, mk+"-start "), entryFor(t, c, mk+"-insert ")
					if b.Session != ins.Session {
						t.Errorf("BEGIN ran on server session %d, INSERT on %d", b.Session, ins.Session)
					}
					for _, e := range c.Log() {
						if e.Seq > b.Seq && e.Seq < ins.Seq && e.Session == b.Session && e.Command != "init_db" && !isReplay(e.SQL) &&
							(e.Command != "prepare" || !strings.Contains(e.SQL, mk+"-insert ")) {
							t.Errorf("between the held BEGIN and the INSERT: %s", describeEntries([]obsim.LogEntry{e}))
						}
					}
				}
				var post []obsim.LogEntry
				for i := range 20 {
					post = append(post, entryFor(t, c, fmt.Sprintf("%s-post%d ", mk, i)))
				}
				if nodes := nodesOf(post); len(nodes) < 2 {
					t.Errorf("after COMMIT, 20 statements with enable_cached_server=false ran on %v only", nodes)
				}
				var v string
				if err := c.Admin().QueryRow("SELECT v FROM "+obDB+".kv WHERE id = ?", key).Scan(&v); err != nil || v != "b" {
					t.Errorf("after COMMIT the row is %q, %v; want b", v, err)
				}
			})
		}
	})
}

// isReplay reports whether sql is one of obgate's own session replays.
func isReplay(sql string) bool {
	return len(sql) > 4 && (sql[:5] == "SET @")
}

// TestOBTransactionServerLost stops the node of an open transaction: the
// client's next statement fails (ERR or a closed connection) and never
// runs elsewhere, and the transaction's changes are gone.
func TestOBTransactionServerLost(t *testing.T) {
	testkit.CheckLeaks(t)
	c := startOBSim(t)
	forEachMode(t, func(t *testing.T, mode string) {
		for _, cached := range []string{"true", "false"} {
			t.Run("enable_cached_server="+cached, func(t *testing.T) {
				resetOBSim(t, c)
				p := startOBProxy(t, c, mode, "enable_cached_server", cached)
				_, conn := obConn(t, p)
				mk := newMarker("lost")
				key := int(markerSeq.Add(1))
				execCtx(t, conn, fmt.Sprintf("BEGIN /* %s-begin */", mk))
				execCtx(t, conn, fmt.Sprintf("INSERT INTO kv VALUES (?, 'lost') /* %s-insert */", mk), key)
				x := entryFor(t, c, mk+"-insert ").Node
				if err := c.Node(x).Stop(); err != nil {
					t.Fatal(err)
				}
				ctx, cancel := context.WithTimeout(context.Background(), hangLimit)
				defer cancel()
				_, err := conn.ExecContext(ctx, fmt.Sprintf("UPDATE kv SET v = 'moved' WHERE id = %d /* %s-update */", key, mk))
				if err == nil {
					t.Errorf("UPDATE after the transaction's node %s stopped succeeded; want an error", x)
				} else {
					t.Logf("UPDATE after the node stopped: %v", err)
				}
				if es := proxyEntries(c, mk+"-update "); len(es) != 0 {
					t.Errorf("the UPDATE of the broken transaction ran elsewhere:%s", describeEntries(es))
				}
				_, err = conn.ExecContext(ctx, fmt.Sprintf("COMMIT /* %s-commit */", mk))
				if err == nil {
					if es := proxyEntries(c, mk+"-commit "); len(es) != 0 && es[0].Node != x {
						t.Logf("COMMIT after the loss ran on %s (a new session, nothing to commit)", es[0].Node)
					}
				}
				var n int
				if err := c.Admin().QueryRow("SELECT COUNT(*) FROM "+obDB+".kv WHERE id = ?", key).Scan(&n); err != nil || n != 0 {
					t.Errorf("the lost transaction's row: count %d, %v; want 0", n, err)
				}
			})
		}
	})
}
