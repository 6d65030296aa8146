package main_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"strings"
	"syscall"
	"testing"
	"time"

	"obgate/bench/memory"
	"obgate/mysqlproto"
)

var clientIOModes = []string{"netpoll", "net"}

// maxStallGrowth is how much obgate's RSS may grow while a client stalls
// in the middle of a 1 GiB result: bounded buffering means a few pooled
// chunks, not the result.
const maxStallGrowth = 64 << 20

// TestSlowClientMemory streams a 1 GiB result through obgate to a client
// that reads 1 MiB, stops reading for 5 s, then drains the rest: obgate
// must push back on MariaDB instead of buffering the result.
func TestSlowClientMemory(t *testing.T) {
	if testing.Short() {
		t.Skip("streams 1 GiB per client I/O mode")
	}
	for _, mode := range clientIOModes {
		t.Run(mode, func(t *testing.T) {
			// The bytes in flight come from odp_request_byte, an extra family.
			p := startObgate(t, "", "-o", "client_io_mode="+mode, "-o", "enable_extra_prometheus_metric=true")
			q := memory.StreamQuery{
				Addr: p.addr(), Rows: 1 << 20, RowLen: 1024,
				ReadFirst: 1 << 20, Stall: 5 * time.Second, RcvBuf: 64 << 10,
			}
			ctx, cancel := context.WithTimeout(t.Context(), 5*time.Minute)
			defer cancel()
			rep, err := memory.MeasureStall(ctx, memory.StallOptions{Query: q, PID: p.pid(), MetricsURL: p.metricsURL(), Interval: 100 * time.Millisecond})
			if err != nil {
				t.Fatal(err)
			}
			t.Logf("%s: %d rows, %.1f MiB; RSS before %.1f MiB, stall peak %.1f MiB (+%.1f MiB), overall peak %.1f MiB, after %.1f MiB; %.1f MiB in flight at the end of the stall; drain %v",
				mode, rep.Rows, memory.MiB(rep.Bytes), memory.MiB(rep.RSSBefore), memory.MiB(rep.RSSPeakStall),
				memory.MiB(rep.Growth()), memory.MiB(rep.RSSPeak), memory.MiB(rep.RSSAfter), memory.MiB(rep.InFlight), rep.Drain.Round(time.Millisecond))
			if rep.Rows != int64(q.Rows) {
				t.Errorf("received %d rows, want %d", rep.Rows, q.Rows)
			}
			// If obgate had kept reading from MariaDB, the bytes would be
			// somewhere: this checks that the stall held the server back.
			if rep.InFlight >= maxStallGrowth {
				t.Errorf("%.1f MiB were read from MariaDB and not by the client at the end of the stall, want < %.0f MiB",
					memory.MiB(rep.InFlight), memory.MiB(maxStallGrowth))
			}
			if g := rep.Growth(); g >= maxStallGrowth {
				t.Errorf("RSS grew by %.1f MiB during the stall, want < %.0f MiB", memory.MiB(g), memory.MiB(maxStallGrowth))
			}
		})
	}
}

// TestIdleConnections holds 5000 idle client connections through obgate
// and reports what each costs; the connections must all be held, a sample
// must still answer, and closing them must bring the session gauge to 0.
func TestIdleConnections(t *testing.T) {
	if testing.Short() {
		t.Skip("opens 5000 connections per client I/O mode")
	}
	const n = 5000
	for _, mode := range clientIOModes {
		t.Run(mode, func(t *testing.T) {
			// The live heap comes from /debug/pprof/heap, served only with enable_pprof.
			p := startObgate(t, "", "-o", "client_io_mode="+mode, "-o", "enable_pprof=true")
			ctx, cancel := context.WithTimeout(t.Context(), 5*time.Minute)
			defer cancel()
			rep, err := memory.MeasureIdle(ctx, memory.IdleOptions{
				Addr: p.addr(), PID: p.pid(), MetricsURL: p.metricsURL(),
				N: n, Concurrency: 32, Sample: 100, Settle: time.Second,
			})
			t.Logf("%s: %d connections opened in %v; RSS %.1f → %.1f MiB, %.1f KiB per connection; goroutines %.0f → %.0f, %.3f per connection; sample %d/%d answered; sessions held %.0f, after close %.0f (goroutines %.0f)",
				mode, rep.Connections, rep.OpenTime.Round(time.Millisecond), memory.MiB(rep.RSSBefore), memory.MiB(rep.RSSAfter),
				rep.RSSPerConn()/1024, rep.GoroutinesBefore, rep.GoroutinesAfter, rep.GoroutinesPerConn(),
				rep.SampleOK, rep.SampleAsked, rep.SessionsHeld, rep.SessionsAfterClose, rep.GoroutinesAfterClose)
			if err != nil {
				t.Fatal(err)
			}
			if rep.Connections != n || rep.SessionsHeld != n {
				t.Errorf("held %d connections, obgate counted %.0f sessions; want %d", rep.Connections, rep.SessionsHeld, n)
			}
			if rep.SampleOK != 100 {
				t.Errorf("%d of 100 sampled idle connections answered", rep.SampleOK)
			}
			if rep.SessionsAfterClose != 0 {
				t.Errorf("%.0f client sessions left after closing every connection", rep.SessionsAfterClose)
			}
			// A few goroutines may come and go (the metrics handler, pools);
			// one per session would be thousands.
			if leaked := rep.GoroutinesAfterClose - rep.GoroutinesBefore; leaked > 10 {
				t.Errorf("%.0f more goroutines after closing every connection than before opening them", leaked)
			}
			// netpoll parks no goroutine per idle connection; net parks one.
			if mode == "netpoll" && rep.GoroutinesPerConn() > 0.1 {
				t.Errorf("netpoll: %.3f goroutines per idle connection, want none", rep.GoroutinesPerConn())
			}
		})
	}
}

// TestSIGTERMDrains checks the graceful stop: on SIGTERM an idle session
// is closed at once, a running statement finishes and its result arrives,
// and obgate exits 0 within hot_upgrade_exit_timeout.
func TestSIGTERMDrains(t *testing.T) {
	for _, mode := range clientIOModes {
		t.Run(mode, func(t *testing.T) {
			const exitTimeout = 20 * time.Second
			p := startObgate(t, "", "-o", "client_io_mode="+mode, "-o", "hot_upgrade_exit_timeout="+exitTimeout.String())
			ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
			defer cancel()
			idle, err := mysqlproto.Dial(ctx, p.addr(), mysqlproto.ClientOptions{User: "root"})
			if err != nil {
				t.Fatal(err)
			}
			defer idle.Conn().Close()
			if err := memory.SelectOne(idle); err != nil {
				t.Fatal(err)
			}
			busy, err := mysqlproto.Dial(ctx, p.addr(), mysqlproto.ClientOptions{User: "root"})
			if err != nil {
				t.Fatal(err)
			}
			defer busy.Conn().Close()
			type answer struct {
				res *mysqlproto.Result
				err error
			}
			done := make(chan answer, 1)
			go func() {
				_ = busy.Conn().SetDeadline(time.Now().Add(time.Minute))
				res, err := busy.Query("SELECT SLEEP(2)")
				done <- answer{res, err}
			}()
			waitForQuery(t, ctx, "SELECT SLEEP(2)")

			stopped := time.Now()
			if err := p.cmd.Process.Signal(syscall.SIGTERM); err != nil {
				t.Fatal(err)
			}
			// The idle session is closed without waiting for the busy one.
			if err := waitClosed(idle.Conn(), exitTimeout); err != nil {
				t.Errorf("idle session: %v", err)
			}
			a := <-done
			if a.err != nil {
				t.Fatalf("the running statement failed: %v", a.err)
			}
			if len(a.res.Rows) != 1 || string(a.res.Rows[0][0]) != "0" {
				t.Fatalf("SELECT SLEEP(2) answered %q", a.res.Rows)
			}
			if code := p.wait(exitTimeout - time.Since(stopped)); code != 0 {
				t.Fatalf("obgate exited with %d, want 0", code)
			}
			t.Logf("%s: obgate exited %v after SIGTERM", mode, time.Since(stopped).Round(time.Millisecond))
			// The busy session was closed after its statement.
			if err := waitClosed(busy.Conn(), 10*time.Second); err != nil {
				t.Errorf("busy session after its statement: %v", err)
			}
		})
	}
}

// TestSIGTERMTimeout checks the end of the drain: a statement that runs
// past hot_upgrade_exit_timeout is cut off, and obgate still exits 0.
func TestSIGTERMTimeout(t *testing.T) {
	p := startObgate(t, "", "-o", "hot_upgrade_exit_timeout=1s")
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	busy, err := mysqlproto.Dial(ctx, p.addr(), mysqlproto.ClientOptions{User: "root"})
	if err != nil {
		t.Fatal(err)
	}
	defer busy.Conn().Close()
	done := make(chan error, 1)
	go func() {
		_ = busy.Conn().SetDeadline(time.Now().Add(time.Minute))
		_, err := busy.Query("SELECT SLEEP(30)")
		done <- err
	}()
	waitForQuery(t, ctx, "SELECT SLEEP(30)")
	if err := p.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	if code := p.wait(20 * time.Second); code != 0 {
		t.Fatalf("obgate exited with %d, want 0", code)
	}
	if err := <-done; err == nil {
		t.Fatal("SELECT SLEEP(30) succeeded although obgate stopped 1 s into it")
	}
}

// waitClosed reads conn until the peer closes it. Bytes before the close
// (a goodbye error packet) are fine; a timeout is not.
func waitClosed(conn net.Conn, timeout time.Duration) error {
	_ = conn.SetReadDeadline(time.Now().Add(timeout))
	_, err := io.Copy(io.Discard, conn)
	if isTimeout(err) {
		return fmt.Errorf("still open after %v", timeout)
	}
	return nil // EOF or a reset: closed
}

// waitForQuery waits until MariaDB runs a statement starting with sql.
func waitForQuery(t *testing.T, ctx context.Context, sql string) {
	t.Helper()
	c, err := mysqlproto.Dial(ctx, mariaDB(t).Addr(), mysqlproto.ClientOptions{User: "root"})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	for {
		res, err := c.Query("SELECT COUNT(*) FROM information_schema.PROCESSLIST WHERE INFO LIKE '" + sql + "%' AND ID <> CONNECTION_ID()")
		if err != nil {
			t.Fatal(err)
		}
		if string(res.Rows[0][0]) != "0" {
			return
		}
		select {
		case <-ctx.Done():
			t.Fatalf("MariaDB never ran %q", sql)
		case <-time.After(20 * time.Millisecond):
		}
	}
}

func isTimeout(err error) bool {
	var ne net.Error
	return errors.As(err, &ne) && ne.Timeout()
}

func TestVersionFlag(t *testing.T) {
	out, errOut, code := runObgate(t, "-V")
	if code != 0 || !strings.HasPrefix(out, "obgate ") || strings.TrimSpace(out) == "obgate" {
		t.Fatalf("-V: exit %d, stdout %q, stderr %q", code, out, errOut)
	}
}

func TestHelpFlag(t *testing.T) {
	out, errOut, code := runObgate(t, "-h")
	if code != 0 || !strings.Contains(out, "Usage: obgate") || !strings.Contains(out, "--optstr") {
		t.Fatalf("-h: exit %d, stdout %q, stderr %q", code, out, errOut)
	}
}

func TestBadOptions(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string // in the message on stderr
	}{
		{[]string{"-o", "client_max_connections=lots"}, "client_max_connections"},
		{[]string{"-o", "client_io_mode=carrier-pigeon"}, "client_io_mode"},
		{[]string{"-o", "no_such_item=1"}, "no_such_item"},
		{[]string{"-o", "novalue"}, "novalue"},
		{[]string{"--no-such-flag"}, "no-such-flag"},
	} {
		dir := t.TempDir()
		_, errOut, code := runObgate(t, append(tc.args, "--config-dir", dir)...)
		if code == 0 || !strings.Contains(errOut, tc.want) {
			t.Errorf("%q: exit %d, stderr %q; want non-zero and a message naming %q", tc.args, code, errOut, tc.want)
		}
	}
}

// TestConfigPersists checks that a value given with -o is written to the
// config file and is still in force after a restart without it.
func TestConfigPersists(t *testing.T) {
	dir := t.TempDir()
	p := startObgate(t, dir, "-o", "client_max_connections=77")
	if got := proxyConfig(t, p, "client_max_connections"); got != "77" {
		t.Fatalf("first start: client_max_connections = %q, want 77", got)
	}
	if code := p.stop(30 * time.Second); code != 0 {
		t.Fatalf("obgate exited with %d, want 0", code)
	}
	p = startObgate(t, dir)
	if got := proxyConfig(t, p, "client_max_connections"); got != "77" {
		t.Fatalf("after a restart without -o: client_max_connections = %q, want 77", got)
	}
}

// proxyConfig reads one item with SHOW PROXYCONFIG as root@proxysys.
func proxyConfig(t *testing.T, p *obgateProc, name string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	c, err := mysqlproto.Dial(ctx, p.addr(), mysqlproto.ClientOptions{User: "root@proxysys"})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	res, err := c.Query("SHOW PROXYCONFIG LIKE '" + name + "'")
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Rows) != 1 || res.String(0, "name") != name {
		t.Fatalf("SHOW PROXYCONFIG LIKE '%s' answered %d rows: %q", name, len(res.Rows), res.Rows)
	}
	return res.String(0, "value")
}

// TestSIGTERMTransaction checks that the drain lets an open transaction
// finish: the session stays usable until COMMIT and is closed right
// after; new connections are refused meanwhile.
func TestSIGTERMTransaction(t *testing.T) {
	p := startObgate(t, "", "-o", "hot_upgrade_exit_timeout=30s")
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	c, err := mysqlproto.Dial(ctx, p.addr(), mysqlproto.ClientOptions{User: "root"})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Conn().Close()
	_ = c.Conn().SetDeadline(time.Now().Add(time.Minute))
	if _, err := c.Exec("BEGIN"); err != nil {
		t.Fatal(err)
	}
	stopped := time.Now()
	if err := p.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	// Wait until obgate stopped listening, then check the session is
	// still there inside its transaction.
	for {
		d := net.Dialer{Timeout: time.Second}
		nc, err := d.DialContext(ctx, "tcp", p.addr())
		if err != nil {
			break
		}
		nc.Close()
		if ctx.Err() != nil {
			t.Fatal("obgate kept accepting connections after SIGTERM")
		}
		time.Sleep(20 * time.Millisecond)
	}
	if err := memory.SelectOne(c); err != nil {
		t.Fatalf("a statement inside the open transaction after SIGTERM: %v", err)
	}
	if _, err := c.Exec("COMMIT"); err != nil {
		t.Fatalf("COMMIT after SIGTERM: %v", err)
	}
	if err := waitClosed(c.Conn(), 10*time.Second); err != nil {
		t.Errorf("session after COMMIT: %v", err)
	}
	if code := p.wait(30*time.Second - time.Since(stopped)); code != 0 {
		t.Fatalf("obgate exited with %d, want 0", code)
	}
}
