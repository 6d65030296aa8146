package reactor_test

import (
	"bytes"
	"strings"
	"testing"

	"obgate/internal/testkit"
	"obgate/internal/testproxy"
	"obgate/mysqlproto"
	"obgate/reactor"
	"obgate/route"
)

// panicStmt is the statement panicInterceptor panics on. It starts like
// an internal command (SHOW PROXYTRACE), so reactor hands it to the
// interceptor.
const panicStmt = "SHOW PROXYTRACE PANIC"

// panicInterceptor panics on panicStmt, on the session's own goroutine
// (reactor calls the Interceptor there, in the middle of a command), and
// hands every other statement to the admin interceptor.
type panicInterceptor struct{ next reactor.Interceptor }

func (p panicInterceptor) Intercept(sess *reactor.Session, query []byte, info route.StmtInfo, reply *reactor.Reply) bool {
	if bytes.EqualFold(bytes.TrimSpace(query), []byte(panicStmt)) {
		panic("injected by the test on " + panicStmt)
	}
	return p.next.Intercept(sess, query, info, reply)
}

// rawQuery runs sql on c and fails the test unless the answer is a
// result set or an OK.
func rawQuery(t *testing.T, c *testkit.RawConn, sql string) {
	t.Helper()
	if err := c.WritePacket(0, append([]byte{byte(mysqlproto.ComQuery)}, sql...)); err != nil {
		t.Fatalf("%s: %v", sql, err)
	}
	pkts, err := c.ReadResponse(hangLimit)
	if err != nil {
		t.Fatalf("%s: %v", sql, err)
	}
	if p := pkts[0]; len(p) > 0 && p[0] == mysqlproto.ERRHeader {
		e, _ := mysqlproto.ParseERR(p)
		t.Fatalf("%s: %v", sql, mysqlproto.SQLErrorFromERR(e))
	}
}

// TestE2EPanicContained makes obgate's code panic in the middle of one
// session's command and checks that only that session pays: it gets ERR
// 1105 and is closed, its server connection is closed, it leaves obgate's
// books once, the panic is counted, sessions opened before and after keep
// working, and no goroutine is left behind.
func TestE2EPanicContained(t *testing.T) {
	forEachMode(t, func(t *testing.T, mode string) {
		testkit.CheckLeaks(t)
		cfg, err := testproxy.Config(maria(t).Addr(), mode)
		if err != nil {
			t.Fatal(err)
		}
		p := testproxy.StartIntercepted(t, cfg, func(next reactor.Interceptor) reactor.Interceptor {
			return panicInterceptor{next: next}
		})
		direct := directDB(t)

		before := loginRaw(t, p, "root", "")
		rawQuery(t, before, "SELECT 1")

		victim := loginRaw(t, p, "root", "")
		vid := victim.Greeting.ConnectionID
		sess, ok := p.Server.Session(vid)
		if !ok {
			t.Fatalf("obgate has no session %d", vid)
		}
		serverID := sess.Info().ServerID
		rawQuery(t, victim, "BEGIN")
		if err := victim.WritePacket(0, append([]byte{byte(mysqlproto.ComQuery)}, panicStmt...)); err != nil {
			t.Fatal(err)
		}
		e, err := victim.ReadERR(hangLimit)
		if err != nil {
			t.Fatalf("after the panic: %v, want ERR 1105", err)
		}
		if e.Code != mysqlproto.ERUnknownError || !strings.Contains(e.Message, "obgate internal error") {
			t.Errorf("after the panic: got %v, want ERR 1105 obgate internal error", e)
		}
		if rest, err := victim.WaitClosed(hangLimit); err != nil || len(rest) != 0 {
			t.Errorf("after the ERR: %d more bytes, %v; want the connection closed", len(rest), err)
		}

		testkit.Eventually(t, hangLimit, func() bool {
			_, ok := p.Server.Session(vid)
			return !ok
		}, "session %d is still listed after its panic", vid)
		testkit.Eventually(t, hangLimit, func() bool {
			var n int
			err := direct.QueryRow("SELECT COUNT(*) FROM information_schema.PROCESSLIST WHERE ID = ?", serverID).Scan(&n)
			return err == nil && n == 0
		}, "MariaDB thread %d of the panicked session is still connected", serverID)

		rawQuery(t, before, "SELECT 1")
		after := loginRaw(t, p, "root", "")
		rawQuery(t, after, "SELECT 1")
		if n := p.Server.ClientCount(); n != 2 {
			t.Errorf("%d client connections counted, want 2 (before and after)", n)
		}

		text := p.MetricsText()
		if v, _ := testkit.MetricSum(text, "obgate_panic_total", "where", "command"); v != 1 {
			t.Errorf(`obgate_panic_total{where="command"} = %v, want 1`, v)
		}
		if v, _ := testkit.MetricSum(text, "obgate_panic_total"); v != 1 {
			t.Errorf("obgate_panic_total = %v in all, want 1", v)
		}
		if v, _ := testkit.MetricSum(text, "obgate_session_quit_total", "reason", "panic"); v != 1 {
			t.Errorf(`obgate_session_quit_total{reason="panic"} = %v, want 1`, v)
		}

		before.Close()
		after.Close()
		waitNoClients(t, p)
	})
}
