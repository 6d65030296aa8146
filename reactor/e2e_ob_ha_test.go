package reactor_test

import (
	"context"
	"database/sql"
	"fmt"
	"strings"
	"testing"
	"time"

	"obgate/health"
	"obgate/internal/testkit"
	"obgate/internal/testproxy"
	"obgate/mysqlproto"
	"obgate/tools/obsim"
)

// viewOf returns obgate's health view of addr.
func viewOf(p *testproxy.Proxy, addr string) (health.View, bool) {
	for _, v := range p.Server.Health().Views("", true) {
		if v.Addr == addr {
			return v, true
		}
	}
	return health.View{}, false
}

// waitFor polls cond every 50 ms for at most limit.
func waitFor(t *testing.T, limit time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(limit)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("%s: not within %v", what, limit)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// freshConn opens a new client session (a new pool of one).
func freshConn(t *testing.T, p *testproxy.Proxy) *sql.Conn {
	t.Helper()
	_, conn := obConn(t, p)
	return conn
}

// TestOBServerErrorsRetriedElsewhereThenServerListed injects 8001 (server
// initialising) on one node: statements that reach it are sent to another
// node invisibly, reads and writes alike (8001 means nothing ran); after
// congestion_failure_threshold of them within the window the node is
// alive-congested and new sessions stop reaching it; once it answers
// again, a background probe lets it back after congestion_retry_interval
// without costing any client a statement.
func TestOBServerErrorsRetriedElsewhereThenServerListed(t *testing.T) {
	testkit.CheckLeaks(t)
	c := startOBSim(t)
	forEachMode(t, func(t *testing.T, haMode string) {
		resetOBSim(t, c)
		// A threshold high enough that every kind of statement meets the
		// failing node before it is listed.
		p := startOBProxy(t, c, haMode, "congestion_retry_interval", "2s", "enable_cached_server", "false",
			"congestion_failure_threshold", "30")
		x := c.Node("zone2-1")
		mk := newMarker("err8001")
		firedOn := func(part string) int {
			n := 0
			for _, e := range proxyEntries(c, mk+part) {
				if e.Injected {
					n++
				}
			}
			return n
		}
		if _, err := c.InjectError(obsim.ErrorRule{Node: x.Name(), Pattern: mk, Code: mysqlproto.OBServerIsInit}); err != nil {
			t.Fatal(err)
		}
		conn := freshConn(t, p)
		// First statements of transactions go elsewhere with their BEGIN.
		for i := range 20 {
			execCtx(t, conn, "BEGIN")
			execCtx(t, conn, fmt.Sprintf("INSERT INTO kv VALUES (%d, 't') /* %s-t%d */", 7100+i, mk, i))
			execCtx(t, conn, "COMMIT")
		}
		if n := queryInt(t, directDB(t), fmt.Sprintf("SELECT COUNT(*) FROM %s.kv WHERE id >= 7100 AND id < 7120", obDB)); n != 20 {
			t.Fatalf("%d of 20 committed transactions are in the table", n)
		}
		checkBegunBefore(t, c, mk+"-t")
		if firedOn("-t") == 0 {
			t.Fatal("no transaction met the failing node; the test proves nothing")
		}
		// Prepared statements (the driver prepares statements with arguments):
		// the prepare and the execute go elsewhere too, prepared there again.
		for i := range 20 {
			c2 := freshConn(t, p)
			if _, err := c2.ExecContext(context.Background(), fmt.Sprintf("INSERT INTO kv VALUES (?, ?) /* %s-p */", mk), 7200+i, "p"); err != nil {
				t.Fatalf("DEBUG %v\n%s", err, describeEntries(proxyEntries(c, mk+"-p")))
			}
			var v string
			if err := c2.QueryRowContext(context.Background(), fmt.Sprintf("SELECT v FROM kv WHERE id = ? /* %s-q */", mk), 7200+i).Scan(&v); err != nil || v != "p" {
				t.Fatalf("prepared read %d: %q, %v", i, v, err)
			}
		}
		if n := queryInt(t, directDB(t), fmt.Sprintf("SELECT COUNT(*) FROM %s.kv WHERE id >= 7200 AND id < 7220", obDB)); n != 20 {
			t.Fatalf("%d of 20 prepared inserts are in the table", n)
		}
		if firedOn("-p")+firedOn("-q") == 0 {
			t.Fatal("no prepared statement met the failing node; the test proves nothing")
		}
		for i := range 40 {
			if got := rowStrings(t, conn, fmt.Sprintf("SELECT %d /* %s-r%d */", i, mk, i)); got[0][0] != fmt.Sprint(i) {
				t.Fatalf("read %d answered %q", i, got)
			}
			execCtx(t, conn, fmt.Sprintf("INSERT INTO kv VALUES (%d, 'w') /* %s-w%d */", 7000+i, mk, i))
		}
		v, ok := viewOf(p, x.Addr())
		if !ok || !v.AliveCongested {
			t.Fatalf("node answering 8001 to every statement is not alive-congested: %+v", v)
		}
		if n := queryInt(t, directDB(t), fmt.Sprintf("SELECT COUNT(*) FROM %s.kv WHERE id >= 7000 AND id < 7040", obDB)); n != 40 {
			t.Fatalf("%d of 40 acknowledged writes are in the table", n)
		}
		fired := 0
		for _, e := range proxyEntries(c, mk) {
			if e.Injected {
				fired++
			}
		}
		t.Logf("%d statements met the injected 8001", fired)
		if fired < 30 {
			t.Fatalf("only %d statements reached the failing node; the test proves nothing", fired)
		}
		checkCongestionAdmin(t, p, x.Addr())
		// Listed: no statement reaches it any more.
		c.ClearLogs()
		for i := range 20 {
			rowStrings(t, freshConn(t, p), fmt.Sprintf("SELECT 1 /* %s-after%d */", mk, i))
		}
		if nodes := nodesOf(proxyEntries(c, mk+"-after")); strings.Contains(strings.Join(nodes, ","), x.Name()) {
			t.Fatalf("statements still reach the listed node: %v", nodes)
		}
		// Healthy again: probed and let back without client traffic.
		c.ClearErrors()
		waitFor(t, 15*time.Second, "the recovered node leaves the alive list", func() bool {
			v, _ := viewOf(p, x.Addr())
			return !v.AliveCongested
		})
	})
}

// TestOBTransactionBrokenByServerFailure stops the node of an open write
// transaction: the next statement gets ERR 6002 (rolled back), so does
// every statement until the client ends the transaction, nothing of it is
// committed, and the session goes on with later transactions.
func TestOBTransactionBrokenByServerFailure(t *testing.T) {
	testkit.CheckLeaks(t)
	c := startOBSim(t)
	forEachMode(t, func(t *testing.T, haMode string) {
		for _, end := range []string{"ROLLBACK", "COMMIT"} {
			t.Run(end, func(t *testing.T) {
				resetOBSim(t, c)
				p := startOBProxy(t, c, haMode)
				conn := freshConn(t, p)
				mk := newMarker("txnbreak")
				base := 8000
				if end == "COMMIT" {
					base = 8100
				}
				execCtx(t, conn, "BEGIN")
				execCtx(t, conn, fmt.Sprintf("INSERT INTO kv VALUES (%d, 'a') /* %s-1 */", base, mk))
				x := entryFor(t, c, mk+"-1 ").Node
				if err := c.Node(x).Stop(); err != nil {
					t.Fatal(err)
				}
				ctx, cancel := context.WithTimeout(context.Background(), hangLimit)
				defer cancel()
				for i, q := range []string{
					fmt.Sprintf("INSERT INTO kv VALUES (%d, 'b') /* %s-2 */", base+1, mk),
					"SELECT 1",
					fmt.Sprintf("INSERT INTO kv VALUES (%d, 'c') /* %s-3 */", base+2, mk),
				} {
					_, err := conn.ExecContext(ctx, q)
					if code := sqlErrorCode(err); code != mysqlproto.OBTransRollbacked {
						t.Fatalf("statement %d of the broken transaction: %v (code %d), want ERR %d", i+2, err, code, mysqlproto.OBTransRollbacked)
					}
				}
				_, err := conn.ExecContext(ctx, end)
				if end == "ROLLBACK" && err != nil {
					t.Fatalf("ROLLBACK of the broken transaction: %v", err)
				}
				if end == "COMMIT" && sqlErrorCode(err) != mysqlproto.OBTransRollbacked {
					t.Fatalf("COMMIT of the broken transaction: %v, want ERR %d", err, mysqlproto.OBTransRollbacked)
				}
				execCtx(t, conn, fmt.Sprintf("INSERT INTO kv VALUES (%d, 'later') /* %s-4 */", base+3, mk))
				if err := c.Node(x).Start(); err != nil {
					t.Fatal(err)
				}
				db := directDB(t)
				if n := queryInt(t, db, fmt.Sprintf("SELECT COUNT(*) FROM %s.kv WHERE id BETWEEN %d AND %d", obDB, base, base+2)); n != 0 {
					t.Fatalf("%d writes of the broken transaction were committed", n)
				}
				if n := queryInt(t, db, fmt.Sprintf("SELECT COUNT(*) FROM %s.kv WHERE id = %d", obDB, base+3)); n != 1 {
					t.Fatalf("the write after the broken transaction is missing")
				}
			})
		}
	})
}

// TestOBAutocommitWriteOfUnknownOutcome breaks a node while an autocommit
// write waits for its answer: the write is not sent again (it may have
// run); the client gets ERR 4012 / 25000 (result unknown) and keeps its
// connection, and a read in the same situation is answered from another
// node.
func TestOBAutocommitWriteOfUnknownOutcome(t *testing.T) {
	testkit.CheckLeaks(t)
	c := startOBSim(t)
	forEachMode(t, func(t *testing.T, haMode string) {
		resetOBSim(t, c)
		p := startOBProxy(t, c, haMode)
		conn := freshConn(t, p)
		mk := newMarker("unknown")
		// A read of kv first: its location is known (the cluster does not list
		// it, so it goes by the tenant list) before the node is slowed.
		rowStrings(t, conn, fmt.Sprintf("SELECT COUNT(*) FROM kv /* %s-0 */", mk))
		x := c.Node(entryFor(t, c, mk+"-0 ").Node)
		x.Slow(time.Second)
		stopped := stopWhenSent(p, x)
		ctx, cancel := context.WithTimeout(context.Background(), hangLimit)
		defer cancel()
		_, err := conn.ExecContext(ctx, fmt.Sprintf("INSERT INTO kv VALUES (8200, 'u') /* %s-1 */", mk))
		if err := <-stopped; err != nil {
			t.Fatal(err)
		}
		if !isOBError(err, mysqlproto.OBErrTransUnknown) {
			t.Fatalf("write whose server broke before answering: %v, want ERR 4012 (25000) Transaction result is unknown", err)
		}
		if got := rowStrings(t, conn, fmt.Sprintf("SELECT 2 /* %s-2 */", mk)); got[0][0] != "2" {
			t.Fatalf("the session after the unknown write: %q", got)
		}
		x.Slow(0)
		if err := x.Start(); err != nil {
			t.Fatal(err)
		}
	})
}

// TestOBDetectFindsHungServerAndClosesItsConnections hangs a node with
// server_detect_mode=3 and a 1 s detect timeout: it is detect-congested
// within a few seconds, every connection obgate holds to it is closed,
// and a read that was waiting on it is answered from another node.
func TestOBDetectFindsHungServerAndClosesItsConnections(t *testing.T) {
	testkit.CheckLeaks(t)
	c := startOBSim(t)
	forEachMode(t, func(t *testing.T, haMode string) {
		resetOBSim(t, c)
		p := startOBProxy(t, c, haMode, "server_detect_mode", "3", "detect_server_timeout", "1s")
		conn := freshConn(t, p)
		mk := newMarker("hang")
		rowStrings(t, conn, fmt.Sprintf("SELECT 1 /* %s-0 */", mk))
		x := c.Node(entryFor(t, c, mk+"-0 ").Node)
		others := make([]*sql.Conn, 4)
		for i := range others {
			others[i] = freshConn(t, p)
			rowStrings(t, others[i], "SELECT 1")
		}
		x.Hang()
		defer x.Unhang()
		hungAt := time.Now()
		ctx, cancel := context.WithTimeout(context.Background(), hangLimit)
		defer cancel()
		rows, err := conn.QueryContext(ctx, fmt.Sprintf("SELECT 5 /* %s-1 */", mk))
		if err != nil {
			t.Fatalf("read waiting on the hung node: %v, want an answer from another node", err)
		}
		got, _ := scanStrings(rows)
		rows.Close()
		if fmt.Sprint(got) != "[[5]]" {
			t.Fatalf("read answered %q", got)
		}
		v, _ := viewOf(p, x.Addr())
		if !v.DetectCongested {
			t.Fatalf("hung node answered around but is not detect-congested: %+v", v)
		}
		t.Logf("hung node listed and its read answered elsewhere after %v", time.Since(hungAt).Round(100*time.Millisecond))
		waitFor(t, 2*time.Second, "connections to the dead node closed", func() bool {
			return p.Server.ServerSessionCount(x.Addr()) == 0
		})
		x.Unhang()
		waitFor(t, 10*time.Second, "the node leaves the detect list once it answers", func() bool {
			v, _ := viewOf(p, x.Addr())
			return !v.DetectCongested
		})
	})
}

// TestOBDeepProbeFindsServerWhoseSQLHangs: a node that greets and logs
// clients in but answers no statement (obsim's HangSQL). With
// server_detect_mode=3 the probe logs in and runs a statement, so the
// node is detect-listed and a read waiting on it is answered elsewhere;
// with the handshake probe of mode 1 the same node passes every probe and
// is never listed.
func TestOBDeepProbeFindsServerWhoseSQLHangs(t *testing.T) {
	testkit.CheckLeaks(t)
	c := startOBSim(t)
	forEachMode(t, func(t *testing.T, haMode string) {
		for _, mode := range []string{"3", "1"} {
			t.Run("mode"+mode, func(t *testing.T) {
				resetOBSim(t, c)
				p := startOBProxy(t, c, haMode, "server_detect_mode", mode, "detect_server_timeout", "1s",
					"server_detect_refresh_interval", "200ms")
				conn := freshConn(t, p)
				mk := newMarker("sqlhang" + mode)
				rowStrings(t, conn, fmt.Sprintf("SELECT 1 /* %s-0 */", mk))
				x := c.Node(entryFor(t, c, mk+"-0 ").Node)
				x.HangSQL()
				defer x.UnhangSQL()
				ctx, cancel := context.WithTimeout(context.Background(), hangLimit)
				defer cancel()
				type answer struct {
					rows [][]string
					err  error
				}
				done := make(chan answer, 1)
				go func() {
					rows, err := conn.QueryContext(ctx, fmt.Sprintf("SELECT 5 /* %s-1 */", mk))
					if err != nil {
						done <- answer{err: err}
						return
					}
					got, err := scanStrings(rows)
					rows.Close()
					done <- answer{got, err}
				}()
				if mode == "3" {
					waitFor(t, 10*time.Second, "the node whose SQL hangs detect-listed", func() bool {
						v, _ := viewOf(p, x.Addr())
						return v.DetectCongested
					})
					a := <-done
					if a.err != nil || fmt.Sprint(a.rows) != "[[5]]" {
						t.Fatalf("read waiting on the node: %v %v, want an answer from another node", a.rows, a.err)
					}
					x.UnhangSQL()
					waitFor(t, 10*time.Second, "the node leaves the detect list once it answers SQL", func() bool {
						v, _ := viewOf(p, x.Addr())
						return !v.DetectCongested
					})
					return
				}
				// Mode 1 probes the node while the read is in flight on it:
				// five probes (new connections) and it is still not listed.
				base := x.Accepted()
				waitFor(t, 10*time.Second, "five handshake probes of the node", func() bool { return x.Accepted() >= base+5 })
				if v, _ := viewOf(p, x.Addr()); v.DetectCongested {
					t.Fatal("a handshake probe listed a node that greets")
				}
				x.UnhangSQL()
				if a := <-done; a.err != nil || fmt.Sprint(a.rows) != "[[5]]" {
					t.Fatalf("read after the node's SQL came back: %v %v", a.rows, a.err)
				}
			})
		}
	})
}

// TestOBStatusListDrainsAndRestoresServer sets a node INACTIVE in
// DBA_OB_SERVERS: after one refresh no new statement reaches it; once it
// is ACTIVE again and min_keep_congestion_interval has passed it takes
// statements again. DELETING (a server being emptied), a stop_time
// (upgrade) and an INACTIVE zone drain it the same way.
func TestOBStatusListDrainsAndRestoresServer(t *testing.T) {
	testkit.CheckLeaks(t)
	c := startOBSim(t)
	forEachMode(t, func(t *testing.T, haMode string) {
		resetOBSim(t, c)
		p := startOBProxy(t, c, haMode, "server_state_refresh_interval", "200ms",
			"min_keep_congestion_interval", "1s", "enable_cached_server", "false")
		x := c.Node("zone3-1")
		reaches := func(mk string) bool {
			for i := range 12 {
				rowStrings(t, freshConn(t, p), fmt.Sprintf("SELECT 1 /* %s-%d */", mk, i))
			}
			return strings.Contains(strings.Join(nodesOf(proxyEntries(c, mk)), ","), x.Name())
		}
		for _, fault := range []struct {
			name       string
			set, unset func() error
		}{
			{"inactive", func() error { return x.SetStatus("INACTIVE") }, func() error { return x.SetStatus("ACTIVE") }},
			{"deleting", func() error { return x.SetStatus("DELETING") }, func() error { return x.SetStatus("ACTIVE") }},
			{"stop_time", func() error { return x.SetStopTime(time.Now()) }, func() error { return x.SetStopTime(time.Time{}) }},
			{"zone_inactive", func() error { return c.SetZoneStatus("zone3", "INACTIVE") }, func() error { return c.SetZoneStatus("zone3", "ACTIVE") }},
		} {
			if err := fault.set(); err != nil {
				t.Fatal(err)
			}
			waitFor(t, 5*time.Second, fault.name+": listed", func() bool {
				v, _ := viewOf(p, x.Addr())
				return v.Congested
			})
			if reaches(newMarker(fault.name + "-drained")) {
				t.Fatalf("%s: statements still reach the drained node", fault.name)
			}
			if err := fault.unset(); err != nil {
				t.Fatal(err)
			}
			waitFor(t, 10*time.Second, fault.name+": back", func() bool {
				v, _ := viewOf(p, x.Addr())
				return !v.Congested
			})
			waitFor(t, 10*time.Second, fault.name+": takes statements again", func() bool {
				return reaches(newMarker(fault.name + "-back"))
			})
		}
	})
}

// checkCongestionAdmin reads SHOW PROXYCONGESTION as root@proxysys: ODP's
// 20 columns in ODP's order, and addr listed as alive-congested (only
// congested servers without ALL; every server with it).
func checkCongestionAdmin(t *testing.T, p *testproxy.Proxy, addr string) {
	t.Helper()
	want := "cluster_name zone_name region_name zone_state server_ip cr_version server_state " +
		"alive_congested last_alive_congested dead_congested last_dead_congested stat_alive_failures " +
		"stat_conn_failures conn_last_fail_time conn_failure_events alive_last_fail_time " +
		"alive_failure_events ref_count detect_congested last_detect_congested"
	out := lines(cli(t, p, "", "-u", "root@proxysys", "-B", "-e", "SHOW PROXYCONGESTION"))
	if len(out) != 2 {
		t.Fatalf("SHOW PROXYCONGESTION lists %d rows, want the one congested server:\n%s", len(out)-1, strings.Join(out, "\n"))
	}
	if got := strings.Join(strings.Split(out[0], "\t"), " "); got != want {
		t.Fatalf("columns:\n%s\nwant\n%s", got, want)
	}
	row := strings.Split(out[1], "\t")
	if row[0] != obClusterName || row[4] != addr || row[7] != "1" || row[6] != "ACTIVE" {
		t.Fatalf("row = %q", row)
	}
	all := lines(cli(t, p, "", "-u", "root@proxysys", "-B", "-N", "-e", "SHOW PROXYCONGESTION ALL "+obClusterName))
	if len(all) != 3 {
		t.Fatalf("SHOW PROXYCONGESTION ALL lists %d servers, want 3", len(all))
	}
}

// checkBegunBefore checks that every statement with marker that ran (not
// the injected failures) ran in a transaction its server session began:
// a statement sent elsewhere took its held BEGIN along.
func checkBegunBefore(t *testing.T, c *obsim.Cluster, marker string) {
	t.Helper()
	log := c.Log()
	for i, e := range log {
		if e.Client != "proxy" || e.Injected || !strings.Contains(e.SQL, marker) {
			continue
		}
		begun := false
		for j := i - 1; j >= 0; j-- {
			b := log[j]
			if b.Node != e.Node || b.Session != e.Session {
				continue
			}
			begun = strings.EqualFold(strings.TrimSpace(b.SQL), "BEGIN")
			break
		}
		if !begun {
			t.Fatalf("%q ran on %s without its BEGIN just before", e.SQL, e.Node)
		}
	}
}

// TestOBCommitOfUnknownOutcome breaks the node of a transaction while its
// COMMIT waits for the answer: the client gets ERR 4012 / 25000 (result unknown),
// the transaction is over for the client and the server alike, and the
// next statement runs in autocommit as the client expects.
func TestOBCommitOfUnknownOutcome(t *testing.T) {
	testkit.CheckLeaks(t)
	c := startOBSim(t)
	forEachMode(t, func(t *testing.T, haMode string) {
		resetOBSim(t, c)
		p := startOBProxy(t, c, haMode)
		conn := freshConn(t, p)
		mk := newMarker("commitbreak")
		execCtx(t, conn, "BEGIN")
		execCtx(t, conn, fmt.Sprintf("INSERT INTO kv VALUES (8300, 'c') /* %s-1 */", mk))
		x := c.Node(entryFor(t, c, mk+"-1 ").Node)
		x.Slow(time.Second)
		stopped := stopWhenSent(p, x)
		ctx, cancel := context.WithTimeout(context.Background(), hangLimit)
		defer cancel()
		_, err := conn.ExecContext(ctx, "COMMIT")
		if err := <-stopped; err != nil {
			t.Fatal(err)
		}
		if !isOBError(err, mysqlproto.OBErrTransUnknown) {
			t.Fatalf("COMMIT whose server broke: %v, want ERR 4012 (25000) Transaction result is unknown", err)
		}
		execCtx(t, conn, fmt.Sprintf("INSERT INTO kv VALUES (8301, 'after') /* %s-2 */", mk))
		x.Slow(0)
		if err := x.Start(); err != nil {
			t.Fatal(err)
		}
		if n := queryInt(t, directDB(t), fmt.Sprintf("SELECT COUNT(*) FROM %s.kv WHERE id = 8301", obDB)); n != 1 {
			t.Fatal("the statement after the broken COMMIT did not run in autocommit")
		}
	})
}

// TestOBExecuteRetriedOnAnotherServerSession prepares a statement on every
// node, then makes one node answer its executes with ERR 8002 (server
// stopping): each execute that meets it runs on another server session,
// with that session's statement id, and the client sees only answers.
func TestOBExecuteRetriedOnAnotherServerSession(t *testing.T) {
	testkit.CheckLeaks(t)
	c := startOBSim(t)
	forEachMode(t, func(t *testing.T, haMode string) {
		resetOBSim(t, c)
		p := startOBProxy(t, c, haMode, "enable_cached_server", "false", "congestion_failure_threshold", "1000")
		conn := freshConn(t, p)
		mk := newMarker("exec8002")
		ctx := context.Background()
		execCtx(t, conn, "INSERT INTO kv VALUES (8400, 'x')")
		stmt, err := conn.PrepareContext(ctx, fmt.Sprintf("SELECT v FROM kv WHERE id = ? /* %s */", mk))
		if err != nil {
			t.Fatal(err)
		}
		defer stmt.Close()
		read := func(i int) {
			var v string
			if err := stmt.QueryRowContext(ctx, 8400).Scan(&v); err != nil || v != "x" {
				t.Fatalf("execute %d: %q, %v", i, v, err)
			}
		}
		// Spread the statement over the nodes: random routing reaches
		// each of them, though not within any fixed number of reads.
		for i := 0; len(nodesOf(proxyEntries(c, mk))) < 3; i++ {
			if i == 300 {
				t.Fatalf("300 executes reached only %v", nodesOf(proxyEntries(c, mk)))
			}
			read(i)
		}
		x := c.Node("zone1-1")
		if _, err := c.InjectError(obsim.ErrorRule{Node: x.Name(), Pattern: mk, Code: mysqlproto.OBServerIsStopping}); err != nil {
			t.Fatal(err)
		}
		for i := range 30 {
			read(i)
		}
		fired := 0
		for _, e := range proxyEntries(c, mk) {
			if e.Injected && e.Command == "execute" {
				fired++
			}
		}
		if fired == 0 {
			t.Fatalf("no execute met the failing node; the test proves nothing:\n%s", describeEntries(proxyEntries(c, mk)))
		}
		t.Logf("%d executes met ERR 8002 and ran elsewhere", fired)
	})
}

// TestOBTransactionServerLostBeforeCommit stops the node of an open
// transaction while the client is idle, then sends COMMIT (or ROLLBACK):
// the transaction is over either way (COMMIT fails with 6002, ROLLBACK
// succeeds) and the next statement runs in autocommit.
func TestOBTransactionServerLostBeforeCommit(t *testing.T) {
	testkit.CheckLeaks(t)
	c := startOBSim(t)
	forEachMode(t, func(t *testing.T, haMode string) {
		for i, end := range []string{"COMMIT", "ROLLBACK"} {
			t.Run(end, func(t *testing.T) {
				resetOBSim(t, c)
				p := startOBProxy(t, c, haMode)
				conn := freshConn(t, p)
				mk := newMarker("lostbefore")
				base := 8700 + 10*i
				execCtx(t, conn, "BEGIN")
				execCtx(t, conn, fmt.Sprintf("INSERT INTO kv VALUES (%d, 'a') /* %s-1 */", base, mk))
				x := c.Node(entryFor(t, c, mk+"-1 ").Node)
				if err := x.Stop(); err != nil {
					t.Fatal(err)
				}
				defer x.Start()
				idleServerSessions()
				_, err := conn.ExecContext(context.Background(), end)
				switch {
				case end == "COMMIT" && sqlErrorCode(err) != mysqlproto.OBTransRollbacked:
					t.Fatalf("COMMIT after the transaction's server was lost: %v, want ERR 6002", err)
				case end == "ROLLBACK" && err != nil:
					t.Fatalf("ROLLBACK after the transaction's server was lost: %v, want OK", err)
				}
				execCtx(t, conn, fmt.Sprintf("INSERT INTO kv VALUES (%d, 'after') /* %s-2 */", base+1, mk))
				if n := queryInt(t, directDB(t), fmt.Sprintf("SELECT COUNT(*) FROM %s.kv WHERE id IN (%d, %d)", obDB, base, base+1)); n != 1 {
					t.Fatalf("%d rows, want only the write after the lost transaction", n)
				}
			})
		}
	})
}

// stopWhenSent stops n once obgate has sent it a statement after this
// call and waits for the answer (n's request count went up and its health
// entry counts a statement in flight), so that n breaks while that
// statement waits on it: the caller slows n so that the answer cannot
// come first. The channel gets the outcome: Stop's error, or an error
// when no statement went to n within hangLimit.
func stopWhenSent(p *testproxy.Proxy, n *obsim.Node) <-chan error {
	requests := func() float64 {
		v, _ := testkit.MetricSum(p.MetricsText(), "obgate_server_requests_total", "server", n.Addr())
		return v
	}
	base := requests()
	done := make(chan error, 1)
	go func() {
		deadline := time.Now().Add(hangLimit)
		for {
			if requests() > base {
				if v, _ := viewOf(p, n.Addr()); v.InFlight > 0 {
					done <- n.Stop()
					return
				}
			}
			if time.Now().After(deadline) {
				done <- fmt.Errorf("no statement sent to %s waited for its answer within %v", n.Name(), hangLimit)
				return
			}
			time.Sleep(5 * time.Millisecond)
		}
	}()
	return done
}

// TestOBTransactionEndRefusedByStoppingServer opens a transaction on a
// node that then answers every statement with ERR 8002 (stopping). The
// statement in the transaction fails (it cannot go elsewhere). The
// client's ROLLBACK succeeds and its COMMIT fails with 6002 (8002 says
// nothing ran): either way obgate closes that server session, which rolls
// the transaction back, and the session is free, its next statements
// running elsewhere.
func TestOBTransactionEndRefusedByStoppingServer(t *testing.T) {
	testkit.CheckLeaks(t)
	c := startOBSim(t)
	forEachMode(t, func(t *testing.T, haMode string) {
		for i, end := range []string{"ROLLBACK", "COMMIT"} {
			t.Run(end, func(t *testing.T) {
				resetOBSim(t, c)
				p := startOBProxy(t, c, haMode)
				conn := freshConn(t, p)
				mk := newMarker("endstop")
				base := 8500 + 100*i
				execCtx(t, conn, "BEGIN")
				execCtx(t, conn, fmt.Sprintf("INSERT INTO kv VALUES (%d, 'a') /* %s-1 */", base, mk))
				x := c.Node(entryFor(t, c, mk+"-1 ").Node)
				if _, err := c.InjectError(obsim.ErrorRule{Node: x.Name(), Code: mysqlproto.OBServerIsStopping}); err != nil {
					t.Fatal(err)
				}
				ctx := context.Background()
				_, err := conn.ExecContext(ctx, fmt.Sprintf("INSERT INTO kv VALUES (%d, 'b') /* %s-2 */", base+1, mk))
				if sqlErrorCode(err) != mysqlproto.OBServerIsStopping {
					t.Fatalf("statement of the transaction on the stopping node: %v, want ERR 8002", err)
				}
				_, err = conn.ExecContext(ctx, end)
				switch {
				case end == "ROLLBACK" && err != nil:
					t.Fatalf("ROLLBACK refused by the stopping node: %v, want OK", err)
				case end == "COMMIT" && sqlErrorCode(err) != mysqlproto.OBTransRollbacked:
					t.Fatalf("COMMIT refused by the stopping node: %v, want ERR 6002", err)
				}
				for j := range 5 {
					execCtx(t, conn, fmt.Sprintf("INSERT INTO kv VALUES (%d, 'later') /* %s-later */", base+10+j, mk))
				}
				c.ClearErrors()
				db := directDB(t)
				if n := queryInt(t, db, fmt.Sprintf("SELECT COUNT(*) FROM %s.kv WHERE id IN (%d, %d)", obDB, base, base+1)); n != 0 {
					t.Fatalf("%d writes of the rolled-back transaction are in the table", n)
				}
				if n := queryInt(t, db, fmt.Sprintf("SELECT COUNT(*) FROM %s.kv WHERE id BETWEEN %d AND %d", obDB, base+10, base+14)); n != 5 {
					t.Fatalf("%d of 5 later writes are in the table", n)
				}
			})
		}
	})
}
