package reactor_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"testing"
	"time"

	"obgate/internal/testkit"
	"obgate/internal/testproxy"
	"obgate/mysqlproto"
)

// unauthenticatedOnServer counts MariaDB connections that have not logged
// in yet.
func unauthenticatedOnServer(t *testing.T) int {
	t.Helper()
	var n int
	if err := directDB(t).QueryRow("SELECT COUNT(*) FROM information_schema.PROCESSLIST WHERE USER = 'unauthenticated user'").Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

// TestE2EHandshakeTimeout checks that a client that never answers the
// greeting is closed after client_handshake_timeout, with the server
// connection obgate opened for it.
func TestE2EHandshakeTimeout(t *testing.T) {
	forEachMode(t, func(t *testing.T, mode string) {
		testkit.CheckLeaks(t)
		p := startProxy(t, mode, "client_handshake_timeout", "300ms")
		before, _ := testkit.MetricSum(p.MetricsText(), "obgate_session_quit_total", "reason", "timeout")

		c, err := testkit.DialRaw(p.Addr, hangLimit)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		if _, err := c.WaitClosed(hangLimit); err != nil {
			t.Fatalf("a client that never logs in: %v, want the connection closed", err)
		}
		// And one that does not even read the greeting.
		raw, err := net.Dial("tcp", p.Addr)
		if err != nil {
			t.Fatal(err)
		}
		defer raw.Close()
		_ = raw.SetDeadline(time.Now().Add(hangLimit))
		timedOut := func() float64 {
			n, _ := testkit.MetricSum(p.MetricsText(), "obgate_session_quit_total", "reason", "timeout")
			return n - before
		}
		testkit.Eventually(t, hangLimit, func() bool { return timedOut() == 2 },
			"%v sessions ended by the handshake timeout, want 2", timedOut())
		if _, err := raw.Read(make([]byte, 1024)); err != nil {
			t.Errorf("the greeting did not arrive: %v", err)
		}
		if _, err := io.ReadAll(raw); err != nil {
			t.Errorf("after the timeout: %v, want EOF", err)
		}
		// Teardown closes the socket before it drops the session from the
		// count, so the count may lag the EOF a moment.
		testkit.Eventually(t, hangLimit, func() bool { return p.Server.ClientCount() == 0 },
			"%d client connections still open", p.Server.ClientCount())
		testkit.Eventually(t, hangLimit, func() bool { return unauthenticatedOnServer(t) == 0 },
			"MariaDB still has connections that never logged in")
		if err := dialErr(p, "root", ""); err != nil {
			t.Errorf("a normal login after the timeouts: %v", err)
		}
	})
}

// readsEOF reports whether the next read on c's connection finds it closed.
func readsEOF(c *mysqlproto.Client) error {
	_ = c.Conn().SetReadDeadline(time.Now().Add(hangLimit))
	b, err := c.Reader().ReadByte()
	if err == nil {
		return errors.New("got a byte: " + string(b))
	}
	if testkit.IsClosedError(err) {
		return nil
	}
	return err
}

// readsShutdown checks that a drain closed c as a MySQL server that shuts
// down does: ERR 1053 with sequence 0, then the end of the connection.
func readsShutdown(c *mysqlproto.Client) error {
	_ = c.Conn().SetReadDeadline(time.Now().Add(hangLimit))
	hdr := make([]byte, mysqlproto.HeaderLen)
	if _, err := io.ReadFull(c.Reader(), hdr); err != nil {
		return fmt.Errorf("no ERR 1053 before the close: %w", err)
	}
	n, seq := mysqlproto.ParseHeader(hdr)
	body := make([]byte, n)
	if _, err := io.ReadFull(c.Reader(), body); err != nil {
		return err
	}
	e, ok := mysqlproto.ParseERR(body)
	if !ok || seq != 0 || e.Code != mysqlproto.ERServerShutdown {
		return fmt.Errorf("got packet %q (sequence %d), want ERR 1053", body, seq)
	}
	return readsEOF(c)
}

// TestE2EShutdown checks graceful shutdown: idle sessions close at once
// (told with ERR 1053, as by a MySQL server shutting down), a
// running statement finishes and its result arrives, a transaction runs
// until COMMIT and its session closes right after, new connections are
// refused, Shutdown returns when all are gone; with a short deadline the
// rest are closed by force.
func TestE2EShutdown(t *testing.T) {
	forEachMode(t, func(t *testing.T, mode string) {
		direct := directDB(t)
		tbl := "shut_" + mode
		mustExec(t, direct, "DROP TABLE IF EXISTS "+tbl)
		mustExec(t, direct, "CREATE TABLE "+tbl+" (id INT PRIMARY KEY) ENGINE=InnoDB")

		t.Run("drain", func(t *testing.T) {
			testkit.CheckLeaks(t)
			p := startProxy(t, mode)
			idle := dialClient(t, p, "root", "")
			busy := dialClient(t, p, "root", "")
			txn := dialClient(t, p, "root", "")
			for _, q := range []string{"DELETE FROM " + tbl, "BEGIN", "INSERT INTO " + tbl + " VALUES (1)"} {
				if _, err := txn.Exec(q); err != nil {
					t.Fatalf("%s: %v", q, err)
				}
			}
			sleeping := startSleep(t, p, direct, busy, 2)
			// A client still in the handshake.
			hs, err := testkit.DialRaw(p.Addr, hangLimit)
			if err != nil {
				t.Fatal(err)
			}
			defer hs.Close()

			stopped := make(chan error, 1)
			go func() {
				ctx, cancel := context.WithTimeout(context.Background(), hangLimit)
				defer cancel()
				stopped <- p.Shutdown(ctx)
			}()

			// The idle session goes first, while the others still run.
			if err := readsShutdown(idle); err != nil {
				t.Fatalf("idle session during shutdown: %v, want it closed", err)
			}
			if _, err := hs.WaitClosed(hangLimit); err != nil {
				t.Errorf("session in the handshake during shutdown: %v, want it closed", err)
			}
			if c, err := net.Dial("tcp", p.Addr); err == nil {
				c.Close()
				t.Error("a new connection was accepted during shutdown")
			}
			// The running statement completes and its result arrives.
			r := waitResult(t, sleeping)
			if r.err != nil || r.res.String(0, "SLEEP(2)") != "0" {
				t.Errorf("SLEEP(2) during shutdown: %v, want its result 0", r.err)
			}
			if err := readsShutdown(busy); err != nil {
				t.Errorf("session after its statement finished: %v, want it closed", err)
			}
			// The transaction goes on until COMMIT.
			if _, err := txn.Exec("INSERT INTO " + tbl + " VALUES (2)"); err != nil {
				t.Fatalf("statement in an open transaction during shutdown: %v", err)
			}
			select {
			case err := <-stopped:
				t.Fatalf("Shutdown returned (%v) while a transaction was open", err)
			default:
			}
			if _, err := txn.Exec("COMMIT"); err != nil {
				t.Fatalf("COMMIT during shutdown: %v", err)
			}
			if err := readsShutdown(txn); err != nil {
				t.Errorf("session after COMMIT during shutdown: %v, want it closed", err)
			}
			select {
			case err := <-stopped:
				if err != nil {
					t.Errorf("Shutdown: %v", err)
				}
			case <-time.After(hangLimit):
				t.Fatal("Shutdown did not return after every session ended")
			}
			if n := p.Server.ClientCount(); n != 0 {
				t.Errorf("%d client connections after Shutdown", n)
			}
			if n := queryInt(t, direct, "SELECT COUNT(*) FROM "+tbl); n != 2 {
				t.Errorf("%d rows committed, want 2", n)
			}
		})

		t.Run("deadline", func(t *testing.T) {
			testkit.CheckLeaks(t)
			p := startProxy(t, mode)
			txn := dialClient(t, p, "root", "")
			for _, q := range []string{"DELETE FROM " + tbl, "BEGIN", "INSERT INTO " + tbl + " VALUES (3)"} {
				if _, err := txn.Exec(q); err != nil {
					t.Fatalf("%s: %v", q, err)
				}
			}
			busy := dialClient(t, p, "root", "")
			sleeping := startSleep(t, p, direct, busy, 30)
			ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
			defer cancel()
			if err := p.Shutdown(ctx); !errors.Is(err, context.DeadlineExceeded) {
				t.Errorf("Shutdown with sessions left at the deadline: %v, want %v", err, context.DeadlineExceeded)
			}
			if n := p.Server.ClientCount(); n != 0 {
				t.Errorf("%d client connections after Shutdown", n)
			}
			if r := waitResult(t, sleeping); r.err == nil {
				t.Error("the 30s SLEEP returned a result although its session was closed")
			}
			if _, err := txn.Exec("COMMIT"); err == nil {
				t.Error("COMMIT after a forced shutdown succeeded")
			}
			// The server rolled the transaction back when obgate hung up.
			testkit.Eventually(t, hangLimit, func() bool {
				return queryInt(t, direct, "SELECT COUNT(*) FROM "+tbl+" WHERE id = 3") == 0
			}, "the open transaction's row is on the server after a forced close")
		})
	})
}

// TestE2ENoServer checks that when the server cannot be reached a client
// gets ERR 2003 and a close, and nothing is left behind.
func TestE2ENoServer(t *testing.T) {
	forEachMode(t, func(t *testing.T, mode string) {
		testkit.CheckLeaks(t)
		dead := net.JoinHostPort("127.0.0.1", itoa(int64(testkit.FreePort(t))))
		cfg, err := testproxy.Config(dead, mode, "short_async_task_timeout", "1s")
		if err != nil {
			t.Fatal(err)
		}
		p := testproxy.Start(t, cfg)
		c, err := testkit.DialRaw(p.Addr, hangLimit)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		err = c.Login("root", "", "", hangLimit)
		if sqlCode(err) != mysqlproto.CRConnHostError {
			t.Errorf("login with no server: %v, want ERR 2003", err)
		}
		if _, err := c.WaitClosed(hangLimit); err != nil {
			t.Errorf("after ERR 2003: %v, want the connection closed", err)
		}
		if n, _ := testkit.MetricSum(p.MetricsText(), "obgate_server_connect_failures_total"); n < 1 {
			t.Errorf("obgate_server_connect_failures_total = %v, want >= 1", n)
		}
		// Administrators need no server.
		if err := dialErr(p, "root@proxysys", ""); err != nil {
			t.Errorf("root@proxysys with no server: %v", err)
		}
		waitNoClients(t, p)
	})
}

// TestE2EServerSessionKilled kills obgate's server session on MariaDB
// behind its back: as with a direct connection, the client's connection is
// closed (obgate sees the server close it), or, when the statement races
// the close, it gets ERR 2013; either way the session ends.
func TestE2EServerSessionKilled(t *testing.T) {
	forEachMode(t, func(t *testing.T, mode string) {
		testkit.CheckLeaks(t)
		p := startProxy(t, mode)
		direct := directDB(t)
		c := dialClient(t, p, "root", "")
		s, ok := p.Server.Session(c.ConnectionID())
		if !ok {
			t.Fatal("no session")
		}
		mustExec(t, direct, "KILL "+itoa(int64(s.Info().ServerID)))
		_, err := c.Query("SELECT 1")
		code := sqlCode(err)
		closed := err != nil && code == 0 && testkit.IsClosedError(err)
		if !closed && code != mysqlproto.CRServerLost && code != mysqlproto.ERConnectionKilled {
			t.Errorf("statement after the server session died: %v, want a closed connection or ERR 2013 (or MariaDB's 1927)", err)
		}
		if err := readsEOF(c); !closed && err != nil {
			t.Errorf("after the error: %v, want the connection closed", err)
		}
		waitNoClients(t, p)
		if err := dialErr(p, "root", ""); err != nil {
			t.Errorf("a new login: %v", err)
		}
	})
}
