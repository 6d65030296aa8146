package reactor_test

import (
	"context"
	"crypto/sha1"
	"database/sql"
	"encoding/hex"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/go-sql-driver/mysql"

	"obgate/internal/testkit"
	"obgate/internal/testproxy"
	"obgate/mysqlproto"
	"obgate/reactor"
	"obgate/route"
	"obgate/tools/obsim"
)

// The tests in this file cover the edges of the resend rules (retry.go,
// route.MayResend): the retry budget running out, statements that a KILL
// interrupted, KILL of a session's own broken server session, and KILL
// across the servers of mysql routing mode.

// retriedCount reads obgate_statement_retried_total for code (0 before
// the first retry creates the series).
func retriedCount(p *testproxy.Proxy, code uint16) float64 {
	n, _ := testkit.MetricSum(p.MetricsText(), "obgate_statement_retried_total", "code", fmt.Sprint(code))
	return n
}

// TestOBRetryBudgetExhausted makes every node answer a marked statement
// with ERR 8002 (server stopping: nothing ran, another server may take
// it). obgate sends it again within its budget, route.RetryBudget of
// connect_observer_max_retries and the statement's candidates, and then
// gives the client the server's ERR 8002. It proves the statement is
// tried exactly budget+1 times (obsim's log; obgate_statement_retried_total
// grows by the budget) and then fails instead of looping or hanging, for a
// read and a write alike (the write did not run), and that the session
// runs statements once the servers take them again. The cases: the
// tenant's three servers with the default connect_observer_max_retries (3:
// the servers decide, 2×3+1 tries over every node), and a single
// candidate (proxy_primary_zone_name leaves one zone) with the default and
// the largest connect_observer_max_retries (5): 2×1+1 = 3 and 5 tries, all
// on that server (a server the statement failed on goes last, not away).
// The expected numbers of tries are written out (the README's formula), so
// that a change of route.RetryBudget shows too.
func TestOBRetryBudgetExhausted(t *testing.T) {
	maria(t)
	testkit.CheckLeaks(t)
	c := startOBSim(t)
	for _, tc := range []struct {
		name       string
		maxRetries int64
		candidates []string // node names
		tries      int      // README: max(connect_observer_max_retries, 2 × servers + 1)
		kv         []string
	}{
		{"three servers", 3, []string{"zone1-1", "zone2-1", "zone3-1"}, 7, nil},
		{"one server", 3, []string{"zone1-1"}, 3, []string{"proxy_primary_zone_name", "zone1"}},
		{"one server/connect_observer_max_retries=5", 5, []string{"zone1-1"}, 5,
			[]string{"proxy_primary_zone_name", "zone1", "connect_observer_max_retries", "5"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			forEachMode(t, func(t *testing.T, haMode string) {
				resetOBSim(t, c)
				p := startOBProxy(t, c, haMode, tc.kv...)
				conn := freshConn(t, p)
				budget := route.RetryBudget(tc.maxRetries, len(tc.candidates))
				if budget+1 != tc.tries {
					t.Fatalf("route.RetryBudget(%d, %d) = %d resends, want %d tries in all as the README says", tc.maxRetries, len(tc.candidates), budget, tc.tries)
				}
				mk := newMarker("budget")
				if _, err := c.InjectError(obsim.ErrorRule{Pattern: mk, Code: mysqlproto.OBServerIsStopping}); err != nil {
					t.Fatal(err)
				}
				for _, q := range []string{
					fmt.Sprintf("SELECT 1 /* %s-r */", mk),
					fmt.Sprintf("INSERT INTO kv VALUES (9300, 'never') /* %s-w */", mk),
				} {
					before := retriedCount(p, mysqlproto.OBServerIsStopping)
					ctx, cancel := context.WithTimeout(context.Background(), hangLimit)
					_, err := conn.ExecContext(ctx, q)
					cancel()
					if sqlErrorCode(err) != mysqlproto.OBServerIsStopping {
						t.Fatalf("%s refused by every server: %v, want ERR %d once the budget is spent", q, err, mysqlproto.OBServerIsStopping)
					}
					es := proxyEntries(c, q[strings.Index(q, mk):])
					if len(es) != budget+1 {
						t.Fatalf("%s was tried %d times, want budget %d + 1:%s", q, len(es), budget, describeEntries(es))
					}
					for _, e := range es {
						if !e.Injected {
							t.Fatalf("a try of %s ran:%s", q, describeEntries(es))
						}
					}
					if n := retriedCount(p, mysqlproto.OBServerIsStopping) - before; int(n) != budget {
						t.Errorf("obgate_statement_retried_total{code=8002} grew by %v for %s, want the budget %d", n, q, budget)
					}
					if got := nodesOf(es); strings.Join(got, ",") != strings.Join(tc.candidates, ",") {
						t.Errorf("the tries of %s reached %v, want %v", q, got, tc.candidates)
					}
				}
				c.ClearErrors()
				if got := rowStrings(t, conn, fmt.Sprintf("SELECT 2 /* %s-after */", mk)); got[0][0] != "2" {
					t.Fatalf("the session after the spent budget: %q", got)
				}
				if n := queryInt(t, directDB(t), fmt.Sprintf("SELECT COUNT(*) FROM %s.kv WHERE id = 9300", obDB)); n != 0 {
					t.Fatal("the write every server refused is in the table")
				}
			})
		})
	}
}

// markedSleepResult is the outcome of a SELECT SLEEP run in a goroutine.
type markedSleepResult struct {
	slept int
	err   error
}

// startMarkedSleep runs SELECT SLEEP(secs) marked mk on conn in a goroutine and
// waits until MariaDB (behind obsim) runs it.
func startMarkedSleep(t *testing.T, conn *sql.Conn, secs int, mk string) <-chan markedSleepResult {
	t.Helper()
	done := make(chan markedSleepResult, 1)
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), hangLimit)
		defer cancel()
		var r markedSleepResult
		r.err = conn.QueryRowContext(ctx, fmt.Sprintf("SELECT SLEEP(%d) /* %s */", secs, mk)).Scan(&r.slept)
		done <- r
	}()
	ctx, cancel := context.WithTimeout(context.Background(), hangLimit)
	defer cancel()
	if err := waitRunning(ctx, maria(t).DSN("root", "", ""), mk); err != nil {
		t.Fatal(err)
	}
	return done
}

// mariaThreadsRunning lists the MariaDB threads whose statement contains
// marker.
func mariaThreadsRunning(t *testing.T, marker string) []int64 {
	t.Helper()
	rows, err := directDB(t).Query("SELECT ID FROM information_schema.PROCESSLIST WHERE INFO LIKE CONCAT('%', ?, '%') AND INFO NOT LIKE '%PROCESSLIST%'", marker)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var ids []int64
	for rows.Next() {
		var id int64
		if err := rows.Scan(&id); err != nil {
			t.Fatal(err)
		}
		ids = append(ids, id)
	}
	return ids
}

// TestOBKillQueryNotResent interrupts a read (SELECT SLEEP(30)) with KILL
// QUERY <its CONNECTION_ID()> from another connection. It proves that the
// interrupted read is not sent to another server: obsim's log holds it
// exactly once and obgate counts no resend, while the client gets the
// interruption (ERR 1317, or SLEEP returning 1) and keeps a usable session.
func TestOBKillQueryNotResent(t *testing.T) {
	maria(t)
	testkit.CheckLeaks(t)
	c := startOBSim(t)
	forEachMode(t, func(t *testing.T, haMode string) {
		resetOBSim(t, c)
		p := startOBProxy(t, c, haMode)
		db, victim := obConn(t, p)
		var id uint32
		if err := victim.QueryRowContext(context.Background(), "SELECT CONNECTION_ID()").Scan(&id); err != nil {
			t.Fatal(err)
		}
		killer, err := db.Conn(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		defer killer.Close()
		mk := newMarker("killq")
		done := startMarkedSleep(t, victim, 30, mk)
		execCtx(t, killer, fmt.Sprintf("KILL QUERY %d", id))
		var r markedSleepResult
		select {
		case r = <-done:
		case <-time.After(hangLimit):
			t.Fatal("the killed SLEEP did not return")
		}
		if r.err != nil && sqlErrorCode(r.err) != mysqlproto.ERQueryInterrupted || r.err == nil && r.slept != 1 {
			t.Fatalf("interrupted SLEEP: %d, %v; want ERR 1317 or SLEEP returning 1", r.slept, r.err)
		}
		if es := proxyEntries(c, mk); len(es) != 1 {
			t.Fatalf("the killed read was sent %d times, want once:%s", len(es), describeEntries(es))
		}
		if n := metricValue(t, p, "obgate_statement_resent_total"); n != 0 {
			t.Fatalf("obgate_statement_resent_total = %v, want 0", n)
		}
		if ids := mariaThreadsRunning(t, mk); len(ids) != 0 {
			t.Fatalf("MariaDB threads %v still run the killed read", ids)
		}
		if got := rowStrings(t, victim, "SELECT 3"); got[0][0] != "3" {
			t.Fatalf("victim after KILL QUERY: %q", got)
		}
	})
}

// TestOBKillConnectionNotResent kills (KILL <id>, the whole
// connection) a session whose read (SELECT SLEEP(10)) is in flight, from
// another connection, several rounds per client I/O mode. The server closes
// the victim's server session under the read, which for the read of a live
// session is a reason to send it elsewhere; after a KILL it must not be
// (route.Try.Stopped). It checks, once obgate has torn the victim's session
// down, that obgate counts no resend, that no MariaDB thread other than
// the original one runs the read and that obsim's log holds it at most
// once; the victim's client gets an error and the killer's session goes on.
//
// It failed before killsPending: the victim's session learned of the KILL
// only from the killer's close request, set after the server answered the
// KILL, and the server closed the victim's server session before
// answering, so the read went again on another node (obsim's log held it
// twice) and the killed client lived on until that statement ended.
func TestOBKillConnectionNotResent(t *testing.T) {
	maria(t)
	testkit.CheckLeaks(t)
	c := startOBSim(t)
	forEachMode(t, func(t *testing.T, haMode string) {
		resetOBSim(t, c)
		p := startOBProxy(t, c, haMode)
		for round := range 5 {
			db, victim := obConn(t, p)
			var id uint32
			if err := victim.QueryRowContext(context.Background(), "SELECT CONNECTION_ID()").Scan(&id); err != nil {
				t.Fatal(err)
			}
			killer, err := db.Conn(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			mk := newMarker("killc")
			done := startMarkedSleep(t, victim, 10, mk)
			original := mariaThreadsRunning(t, mk)
			if len(original) != 1 {
				t.Fatalf("round %d: MariaDB threads running the read: %v, want one", round, original)
			}
			execCtx(t, killer, fmt.Sprintf("KILL %d", id))
			var r markedSleepResult
			select {
			case r = <-done:
			case <-time.After(hangLimit):
				t.Fatalf("round %d: the killed session's SLEEP did not return", round)
			}
			if r.err == nil {
				t.Fatalf("round %d: the killed session's SLEEP returned %d, want an error", round, r.slept)
			}
			testkit.Eventually(t, hangLimit, func() bool { _, ok := p.Server.Session(id); return !ok },
				"session %d still exists after KILL", id)
			if n := metricValue(t, p, "obgate_statement_resent_total"); n != 0 {
				t.Errorf("round %d: obgate_statement_resent_total = %v after KILL of a session with a read in flight, want 0", round, n)
			}
			for _, tid := range mariaThreadsRunning(t, mk) {
				if tid != original[0] {
					t.Errorf("round %d: MariaDB thread %d runs the killed session's read again (the original was thread %d)", round, tid, original[0])
				}
			}
			if es := proxyEntries(c, mk); len(es) > 1 {
				t.Errorf("round %d: the killed session's read was sent %d times:%s", round, len(es), describeEntries(es))
			}
			if got := rowStrings(t, killer, "SELECT 4"); got[0][0] != "4" {
				t.Fatalf("round %d: killer after KILL: %q", round, got)
			}
			killer.Close()
			if t.Failed() {
				return
			}
		}
	})
}

// TestOBKillOfOwnBrokenServerSession sends KILL [QUERY] of a server
// session id that no obgate session holds (an id with the top bit set, as
// OBServer session ids are): obgate forwards such a KILL to the session's
// current server session (forwardKill in kill.go), and when that server
// session is found broken it drops it (obSession.dropBroken) and answers ERR
// 1094. Per obSession.dropBroken's comment, a dropped server session that
// held the client's open transaction takes the transaction with it: the
// session enters the broken-transaction state, so the next statement
// gets ERR 6002 and runs nowhere, ROLLBACK ends it, and nothing of the
// transaction is committed; without a transaction the next statement
// simply runs elsewhere.
//
// The node of the server session is stopped, and the test waits until
// obgate has not used the server session for twice reactor.PeekIdleAfter:
// from then on its liveness check looks at the socket (or the server
// watch has seen the close), so the KILL takes the obSession.dropBroken path
// (answer 1094) rather than sending to a dead socket (answer 2013).
func TestOBKillOfOwnBrokenServerSession(t *testing.T) {
	maria(t)
	testkit.CheckLeaks(t)
	c := startOBSim(t)
	direct := directDB(t)
	key := 9400
	forEachMode(t, func(t *testing.T, haMode string) {
		for _, tc := range []struct{ name, kill string }{
			{"in transaction/KILL QUERY", "KILL QUERY 3000000000"},
			{"in transaction/KILL", "KILL 3000000001"},
			{"autocommit/KILL QUERY", "KILL QUERY 3000000002"},
		} {
			t.Run(tc.name, func(t *testing.T) {
				resetOBSim(t, c)
				p := startOBProxy(t, c, haMode)
				cl := dialOBRaw(t, p, 0)
				key += 10
				k := key
				inTxn := strings.HasPrefix(tc.name, "in transaction")
				mk := newMarker("killown")
				if inTxn {
					cl.exec("BEGIN")
				}
				cl.exec(fmt.Sprintf("INSERT INTO kv VALUES (%d, 'a') /* %s-1 */", k, mk))
				x := c.Node(entryFor(t, c, mk+"-1 ").Node)
				if err := x.Stop(); err != nil {
					t.Fatal(err)
				}
				defer x.Start()
				waitServerSessionIdle(t, p, cl.Greeting.ConnectionID)
				sess, ok := p.Server.Session(cl.Greeting.ConnectionID)
				if !ok {
					t.Fatal("obgate lost the session")
				}
				res := cl.query(tc.kill)
				if len(res) != 1 || res[0].err == nil || res[0].err.Code != mysqlproto.ERNoSuchThread {
					t.Fatalf("%s of no session, with the current server session broken: %v, want ERR %d", tc.kill, res, mysqlproto.ERNoSuchThread)
				}
				if !inTxn {
					cl.exec(fmt.Sprintf("INSERT INTO kv VALUES (%d, 'b') /* %s-2 */", k+1, mk))
					if n := queryInt(t, direct, fmt.Sprintf("SELECT COUNT(*) FROM %s.kv WHERE id IN (%d, %d)", obDB, k, k+1)); n != 2 {
						t.Fatalf("%d of 2 autocommit writes are in the table", n)
					}
					return
				}
				if !sess.Info().InTrans {
					t.Error("after losing the transaction's server session obgate shows the session outside a transaction")
				}
				wantTxnRolledBack(t, cl, fmt.Sprintf("INSERT INTO kv VALUES (%d, 'b') /* %s-2 */", k+1, mk))
				wantTxnRolledBack(t, cl, fmt.Sprintf("SELECT 1 /* %s-3 */", mk))
				for _, tag := range []string{mk + "-2 ", mk + "-3 "} {
					if es := proxyEntries(c, tag); len(es) != 0 {
						t.Fatalf("a statement of the lost transaction reached a server:%s", describeEntries(es))
					}
				}
				cl.exec("ROLLBACK")
				cl.exec(fmt.Sprintf("INSERT INTO kv VALUES (%d, 'after') /* %s-4 */", k+2, mk))
				if n := queryInt(t, direct, fmt.Sprintf("SELECT COUNT(*) FROM %s.kv WHERE id IN (%d, %d)", obDB, k, k+1)); n != 0 {
					t.Fatalf("%d writes of the lost transaction were committed", n)
				}
				if n := queryInt(t, direct, fmt.Sprintf("SELECT COUNT(*) FROM %s.kv WHERE id = %d", obDB, k+2)); n != 1 {
					t.Fatal("the write after ROLLBACK is not committed")
				}
			})
		}
	})
}

// waitServerSessionIdle waits until the current server session of the
// client session id has not been used for twice reactor.PeekIdleAfter:
// from then on obgate's liveness check of it looks at its socket.
func waitServerSessionIdle(t *testing.T, p *testproxy.Proxy, id uint32) {
	t.Helper()
	sess, ok := p.Server.Session(id)
	if !ok {
		t.Fatalf("obgate has no session %d", id)
	}
	waitFor(t, hangLimit, "the server session idle long enough to be checked", func() bool {
		for _, ss := range sess.ServerSessions() {
			if ss.Current {
				return time.Since(ss.LastUsed) > 2*reactor.PeekIdleAfter
			}
		}
		return false
	})
}

// TestOBKillThroughLostTransactionServer opens a transaction (BEGIN,
// INSERT) and then sends a KILL that obgate runs through the server
// session holding that transaction, which is dead: it proves what txnbroken.go and the README promise ("nothing runs in
// autocommit behind the client"): losing the transaction's server session
// must put the session in the broken-transaction state, so that the next
// INSERT gets ERR 6002 and nothing of the transaction is committed, as
// TestOBKillOfOwnBrokenServerSession shows for the obSession.dropBroken path.
// Two paths lose that server session:
//
//   - "KILL QUERY of a session on the stopped node": the killer's
//     transaction and the victim's last statement are on the same node,
//     which is stopped. obSession.killSession (kill.go) finds the killer's server
//     session to that node not alive and drops it, then fails to open a new one: the KILL gets
//     ERROR 2003 (connect refused).
//   - "KILL of no session on the hung node": the transaction's node hangs
//     (short_async_task_timeout=1s); forwardKill (kill.go) finds the
//     server session alive and runs the KILL there with killOn, which
//     times out and drops it: the KILL gets ERROR 2013.
//
// Both dropped the server session without entering the broken-transaction
// state (obSession.drop, not obSession.dropBroken), so the next INSERT ran on
// another node in autocommit and was committed.
func TestOBKillThroughLostTransactionServer(t *testing.T) {
	maria(t)
	testkit.CheckLeaks(t)
	c := startOBSim(t)
	direct := directDB(t)
	key := 9500
	forEachMode(t, func(t *testing.T, haMode string) {
		for _, path := range []string{"KILL QUERY of a session on the stopped node", "KILL of no session on the hung node"} {
			t.Run(path, func(t *testing.T) {
				resetOBSim(t, c)
				p := startOBProxy(t, c, haMode, "short_async_task_timeout", "1s")
				key += 10
				k := key
				cl := dialOBRaw(t, p, 0)
				mk := newMarker("killtxn")
				cl.exec("BEGIN")
				cl.exec(fmt.Sprintf("INSERT INTO kv VALUES (%d, 'a') /* %s-1 */", k, mk))
				x := c.Node(entryFor(t, c, mk+"-1 ").Node)
				var kill string
				if strings.HasPrefix(path, "KILL QUERY") {
					var victim *obRaw
					for i := 0; victim == nil; i++ {
						if i == 30 {
							t.Fatalf("no session reached %s in 30 logins", x.Name())
						}
						v := dialOBRaw(t, p, 0)
						m := newMarker("killtxnv")
						v.row("SELECT 1 /* " + m + " */")
						if entryFor(t, c, m).Node == x.Name() {
							victim = v
						}
					}
					kill = fmt.Sprintf("KILL QUERY %d", victim.Greeting.ConnectionID)
					if err := x.Stop(); err != nil {
						t.Fatal(err)
					}
					defer x.Start()
					waitServerSessionIdle(t, p, cl.Greeting.ConnectionID)
				} else {
					kill = "KILL QUERY 3000000000"
					x.Hang()
					defer x.Unhang()
				}
				res := cl.query(kill)
				if len(res) != 1 || res[0].err == nil {
					t.Fatalf("%s through the dead server session: %v, want an error", kill, res)
				}
				t.Logf("%s: %v", kill, res[0].err)
				res = cl.query(fmt.Sprintf("INSERT INTO kv VALUES (%d, 'b') /* %s-2 */", k+1, mk))
				cl.exec("ROLLBACK")
				x.Unhang()
				if n := queryInt(t, direct, fmt.Sprintf("SELECT COUNT(*) FROM %s.kv WHERE id = %d", obDB, k+1)); n != 0 {
					t.Errorf("the INSERT after the KILL ran in autocommit and was committed (answer %v, ran on%s); the transaction it belonged to was open",
						res, describeEntries(proxyEntries(c, mk+"-2 ")))
				}
				if len(res) != 1 || res[0].err == nil || res[0].err.Code != mysqlproto.OBTransRollbacked {
					t.Errorf("INSERT of the transaction whose server session the KILL lost: %v, want ERR %d", res, mysqlproto.OBTransRollbacked)
				}
			})
		}
	})
}

// TestMySQLModeKillAcrossServers fronts two MariaDB servers in mysql
// routing mode (A, the package's, and B, a second one with the same user)
// and runs KILL between sessions on different servers, with bystanders on
// both running SLEEP(5) that a stray KILL would cut short. It proves what
// kill.go does:
//
//   - KILL QUERY <victim's obgate id> from a session on B, the victim
//     running SELECT SLEEP(30) on A, goes to A as the killer (obgate logs
//     the killer in there with mysql_user_hashes) and A decides: the same
//     user's statement is interrupted; without the hash it is refused with
//     ERR 1095 and the statement keeps running, untouched
//     (TestAttackKillAcrossServers);
//   - KILL QUERY <victim's CONNECTION_ID()> from B names B's thread of that
//     number, as a direct client of B would: B answers ERR 1094 when it
//     has no such thread, and the victim keeps running;
//   - from a session on A, KILL QUERY with either id interrupts the
//     victim's statement (ERR 1317 or SLEEP returning 1) and the victim
//     stays usable;
//   - KILL <victim's obgate id> (the connection) from B works across
//     servers: obgate closes the victim's session and its thread on A goes;
//   - no bystander's SLEEP was interrupted (each returns 0) and the killers
//     go on.
func TestMySQLModeKillAcrossServers(t *testing.T) {
	maria(t)
	testkit.CheckLeaks(t)
	second := startSecondMariaDB(t)
	directA := directDB(t)
	directB := openDB(t, func() *mysql.Config {
		c := mysql.NewConfig()
		c.User, c.Net, c.Addr = "root", "tcp", second.Addr()
		return c
	}())
	forEachMode(t, func(t *testing.T, haMode string) {
		stage1 := sha1.Sum([]byte(otherPass))
		stage2 := sha1.Sum(stage1[:])
		p := startProxy(t, haMode, "rootservice_list", second.Addr()+";"+maria(t).Addr(),
			"mysql_user_hashes", otherUser+":*"+strings.ToUpper(hex.EncodeToString(stage2[:])))
		// Logins go round-robin over the two servers. The victim is a
		// session on A whose thread id B has no thread of, so that a KILL
		// of that id sent from B names nothing there: A's thread ids are
		// first moved past B's (each connection takes the next one).
		var bMax uint32
		if err := directB.QueryRow("SELECT MAX(ID) FROM information_schema.PROCESSLIST").Scan(&bMax); err != nil {
			t.Fatal(err)
		}
		for id := uint32(0); id < bMax+100; {
			ctx, cancel := context.WithTimeout(context.Background(), hangLimit)
			cl, err := mysqlproto.Dial(ctx, maria(t).Addr(), mysqlproto.ClientOptions{User: "root"})
			cancel()
			if err != nil {
				t.Fatal(err)
			}
			id = cl.ConnectionID()
			cl.Close()
		}
		liveOnB := func(thread string) bool {
			var n int
			if err := directB.QueryRow("SELECT COUNT(*) FROM information_schema.PROCESSLIST WHERE ID = ?", thread).Scan(&n); err != nil {
				t.Fatal(err)
			}
			return n > 0
		}
		var victim *mysqlproto.Client
		var threadID string
		var onA, onB []*mysqlproto.Client
		for i := 0; victim == nil || len(onA) < 2 || len(onB) < 2; i++ {
			if i == 60 {
				t.Fatalf("60 logins did not put the sessions needed on A and B: %d, %d, victim %v", len(onA), len(onB), victim != nil)
			}
			cl := dialClient(t, p, otherUser, otherPass)
			res, err := cl.Query("SELECT @@port AS port, CONNECTION_ID() AS id")
			if err != nil {
				t.Fatal(err)
			}
			switch port, id := res.String(0, "port"), res.String(0, "id"); {
			case port == fmt.Sprint(second.Port()):
				onB = append(onB, cl)
			case victim == nil && !liveOnB(id):
				victim, threadID = cl, id
			default:
				onA = append(onA, cl)
			}
		}
		killerA, bystanderA := onA[0], onA[1]
		killerB, bystanderB := onB[0], onB[1]
		bystanders := []<-chan queryResult{
			startSleep(t, p, directA, bystanderA, 5),
			startSleep(t, p, directB, bystanderB, 5),
		}
		vid := victim.ConnectionID()
		if sess, ok := p.Server.Session(vid); !ok || fmt.Sprint(sess.Info().ServerID) != threadID || sess.Info().ServerAddr != maria(t).Addr() {
			t.Fatalf("the victim's CONNECTION_ID() %s is not its server thread on A", threadID)
		}
		running := func(db *sql.DB, thread string) bool {
			var n int
			err := db.QueryRow("SELECT COUNT(*) FROM information_schema.PROCESSLIST WHERE ID = ? AND INFO LIKE 'SELECT SLEEP%'", thread).Scan(&n)
			return err == nil && n == 1
		}
		interrupted := func(r queryResult) bool {
			if r.err != nil {
				return sqlCode(r.err) == mysqlproto.ERQueryInterrupted
			}
			return r.res.String(0, "SLEEP(30)") == "1"
		}

		done := startSleep(t, p, directA, victim, 30)
		if _, err := killerB.Exec(fmt.Sprintf("KILL QUERY %d", vid)); err != nil {
			t.Fatalf("KILL QUERY %d (obgate id) from B of a session on A, asked on A as the killer: %v", vid, err)
		}
		if r := waitResult(t, done); !interrupted(r) {
			t.Fatalf("SLEEP killed from B by obgate id: %v %v, want ERR 1317 or 1", r.err, r.res)
		}
		done = startSleep(t, p, directA, victim, 30)
		_, err := killerB.Exec("KILL QUERY " + threadID)
		if sqlCode(err) != mysqlproto.ERNoSuchThread {
			t.Fatalf("KILL QUERY %s (A's thread id) from B, where no thread has it: %v, want B's ERR %d", threadID, err, mysqlproto.ERNoSuchThread)
		}
		if !running(directA, threadID) {
			t.Fatal("KILL QUERY of A's thread id, sent from B, stopped the victim's statement on A")
		}
		if _, err := killerA.Exec(fmt.Sprintf("KILL QUERY %d", vid)); err != nil {
			t.Fatalf("KILL QUERY %d (obgate id) from A: %v", vid, err)
		}
		if r := waitResult(t, done); !interrupted(r) {
			t.Fatalf("SLEEP killed from the same server by obgate id: %v %v, want ERR 1317 or 1", r.err, r.res)
		}
		done = startSleep(t, p, directA, victim, 30)
		if _, err := killerA.Exec("KILL QUERY " + threadID); err != nil {
			t.Fatalf("KILL QUERY %s (CONNECTION_ID()) from A: %v", threadID, err)
		}
		if r := waitResult(t, done); !interrupted(r) {
			t.Fatalf("SLEEP killed from the same server by CONNECTION_ID(): %v %v, want ERR 1317 or 1", r.err, r.res)
		}
		if res, err := victim.Query("SELECT 1 AS one"); err != nil || res.String(0, "one") != "1" {
			t.Fatalf("victim after KILL QUERY: %v", err)
		}

		if _, err := killerB.Exec(fmt.Sprintf("KILL %d", vid)); err != nil {
			t.Fatalf("KILL %d (obgate id) from B of an idle session on A: %v", vid, err)
		}
		testkit.Eventually(t, hangLimit, func() bool { _, ok := p.Server.Session(vid); return !ok },
			"session %d still exists after KILL from the other server", vid)
		testkit.Eventually(t, hangLimit, func() bool {
			var n int
			err := directA.QueryRow("SELECT COUNT(*) FROM information_schema.PROCESSLIST WHERE ID = ?", threadID).Scan(&n)
			return err == nil && n == 0
		}, "the killed session's thread %s on A is still there", threadID)

		for i, b := range bystanders {
			r := waitResult(t, b)
			if r.err != nil || r.res.String(0, "SLEEP(5)") != "0" {
				t.Errorf("bystander %d's SLEEP(5): %v %v, want 0 (not interrupted)", i, r.err, r.res)
			}
		}
		for _, k := range []*mysqlproto.Client{killerA, killerB} {
			if _, err := k.Query("SELECT 1"); err != nil {
				t.Errorf("a killer's session broke: %v", err)
			}
		}
	})
}
