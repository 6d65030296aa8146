package main_test

import (
	"bufio"
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"obgate/mysqlproto"
)

// adminExec runs statements as root@proxysys (no password: obgate's
// default, from loopback) and fails the test on an error.
func adminExec(t *testing.T, p *obgateProc, stmts ...string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	c, err := mysqlproto.Dial(ctx, p.addr(), mysqlproto.ClientOptions{User: "root@proxysys"})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	for _, s := range stmts {
		if _, err := c.Exec(s); err != nil {
			t.Fatalf("%s: %v", s, err)
		}
	}
}

// httpStatus asks url and returns the status, or 0 and the error when
// nothing answered.
func httpStatus(url string) (int, error) {
	c := http.Client{Timeout: 30 * time.Second}
	resp, err := c.Get(url)
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	_, _ = io.Copy(io.Discard, resp.Body)
	return resp.StatusCode, nil
}

// TestPprofOffByDefault checks that the metrics port serves no pprof
// unless enable_pprof is on, and that ALTER PROXYCONFIG turns it on and
// off at once, a CPU profile included, while /metrics serves throughout.
func TestPprofOffByDefault(t *testing.T) {
	p := startObgate(t, "")
	base := p.probeURL("")
	expect := func(when string, want int, paths ...string) {
		t.Helper()
		for _, path := range paths {
			if code, err := httpStatus(base + path); code != want {
				t.Errorf("%s: %s answered %d (%v), want %d", when, path, code, err, want)
			}
		}
	}
	pprofPaths := []string{"/debug/pprof/", "/debug/pprof/goroutine?debug=2", "/debug/pprof/heap"}
	expect("by default", 404, pprofPaths...)
	expect("by default", 200, "/metrics", "/healthz")
	adminExec(t, p, "ALTER PROXYCONFIG SET enable_pprof = true")
	expect("after ALTER PROXYCONFIG SET enable_pprof = true", 200, append(pprofPaths, "/debug/pprof/profile?seconds=1")...)
	adminExec(t, p, "ALTER PROXYCONFIG SET enable_pprof = false")
	expect("after ALTER PROXYCONFIG SET enable_pprof = false", 404, pprofPaths...)
	expect("throughout", 200, "/metrics")
}

// TestMetricsPortBoundIP checks that prometheus_bound_ip is where the
// metrics port listens: on 127.0.0.2 it answers there and refuses
// 127.0.0.1; and that enable_pprof given at startup serves pprof.
func TestMetricsPortBoundIP(t *testing.T) {
	p := startObgate(t, "", "-o", "prometheus_bound_ip=127.0.0.2", "-o", "enable_pprof=true")
	port := strconv.Itoa(p.mport)
	for _, path := range []string{"/healthz", "/debug/pprof/"} {
		if code, err := httpStatus("http://" + net.JoinHostPort("127.0.0.2", port) + path); code != 200 {
			t.Errorf("127.0.0.2:%s%s answered %d (%v), want 200", port, path, code, err)
		}
	}
	c, err := net.DialTimeout("tcp", net.JoinHostPort("127.0.0.1", port), 10*time.Second)
	if err == nil {
		c.Close()
		t.Fatalf("127.0.0.1:%s accepted a connection; the metrics port should be bound to 127.0.0.2 only", port)
	}
	if !errors.Is(err, syscall.ECONNREFUSED) {
		t.Errorf("connecting to 127.0.0.1:%s: %v, want connection refused", port, err)
	}
}

// TestMetricsPortDropsSlowClients checks, against the real binary, that a
// client sending its request headers a line every half second (slowloris)
// and an idle keep-alive connection are disconnected by the metrics port
// instead of being held open. The bound is generous: it only has to come.
func TestMetricsPortDropsSlowClients(t *testing.T) {
	p := startObgate(t, "")
	addr := net.JoinHostPort("127.0.0.1", strconv.Itoa(p.mport))
	dial := func() net.Conn {
		c, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.Close() })
		return c
	}
	// closed reports whether the server closes c within d while feed (if
	// any) writes a little every half second.
	closed := func(c net.Conn, d time.Duration, feed func() error) bool {
		deadline := time.Now().Add(d)
		buf := make([]byte, 4096)
		for time.Now().Before(deadline) {
			if feed != nil && feed() != nil {
				return true
			}
			_ = c.SetReadDeadline(time.Now().Add(500 * time.Millisecond))
			for {
				_, err := c.Read(buf)
				if err == nil {
					continue
				}
				var ne net.Error
				if errors.As(err, &ne) && ne.Timeout() {
					break
				}
				return true
			}
		}
		return false
	}
	slow, idle := dial(), dial()
	if _, err := io.WriteString(slow, "GET /metrics HTTP/1.1\r\nHost: obgate\r\n"); err != nil {
		t.Fatal(err)
	}
	if _, err := io.WriteString(idle, "GET /healthz HTTP/1.1\r\nHost: obgate\r\n\r\n"); err != nil {
		t.Fatal(err)
	}
	resp, err := http.ReadResponse(bufio.NewReader(idle), nil)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	done := make(chan string, 2)
	go func() {
		n := 0
		if !closed(slow, 90*time.Second, func() error {
			n++
			_, err := io.WriteString(slow, "X-Slow-"+strings.Repeat("a", n%16+1)+": b\r\n")
			return err
		}) {
			done <- "a client sending its headers slowly was not disconnected within 90s"
			return
		}
		done <- ""
	}()
	go func() {
		if !closed(idle, 90*time.Second, nil) {
			done <- "an idle keep-alive connection was not closed within 90s"
			return
		}
		done <- ""
	}()
	for range 2 {
		if msg := <-done; msg != "" {
			t.Error(msg)
		}
	}
}
