package main

import (
	"bufio"
	"errors"
	"io"
	"math"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"obgate/metrics"
)

// TestPprofGate checks that pprof answers 404 while enable_pprof is off
// and serves while it is on, asked per request, and that the rest of the
// port does not depend on it.
func TestPprofGate(t *testing.T) {
	var on atomic.Bool
	mux := metricsMux(metrics.New(), probes{}, on.Load)
	get := func(path string) int {
		rec := httptest.NewRecorder()
		mux.ServeHTTP(rec, httptest.NewRequest("GET", path, nil))
		return rec.Code
	}
	paths := []string{"/debug/pprof/", "/debug/pprof/goroutine", "/debug/pprof/heap", "/debug/pprof/symbol"}
	for _, p := range paths {
		if code := get(p); code != http.StatusNotFound {
			t.Errorf("pprof off: %s answered %d, want 404", p, code)
		}
	}
	on.Store(true)
	for _, p := range paths {
		if code := get(p); code != http.StatusOK {
			t.Errorf("pprof on: %s answered %d, want 200", p, code)
		}
	}
	// cmdline would print the command line, which may hold a password.
	if code := get("/debug/pprof/cmdline"); code == http.StatusOK {
		t.Error("/debug/pprof/cmdline is served")
	}
	on.Store(false)
	if code := get("/debug/pprof/"); code != http.StatusNotFound {
		t.Errorf("pprof turned off again: %d, want 404", code)
	}
	if code := get("/metrics"); code != http.StatusOK {
		t.Errorf("/metrics answered %d", code)
	}
}

// shortLimits are metricsLimits scaled down so that a test sees each one
// act.
var shortLimits = httpLimits{
	readHeader: 300 * time.Millisecond,
	read:       600 * time.Millisecond,
	write:      300 * time.Millisecond,
	idle:       600 * time.Millisecond,
	maxHeader:  4 << 10,
	maxProfile: time.Minute,
}

// startMetricsServer serves h under lim on a loopback port.
func startMetricsServer(t *testing.T, h http.Handler, lim httpLimits) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := newMetricsServer(h, lim)
	go srv.Serve(ln)
	t.Cleanup(func() { srv.Close() })
	return ln.Addr().String()
}

// closedWithin reports whether the server closes c within d while the
// client keeps doing what feed does every 100ms (nil: nothing).
func closedWithin(c net.Conn, d time.Duration, feed func() error) bool {
	deadline := time.Now().Add(d)
	buf := make([]byte, 4096)
	for time.Now().Before(deadline) {
		if feed != nil && feed() != nil {
			return true // a write failing means the server closed
		}
		_ = c.SetReadDeadline(time.Now().Add(100 * time.Millisecond))
		for {
			_, err := c.Read(buf)
			if err == nil {
				continue // an answer (a 400 or the response): read on to the close
			}
			var ne net.Error
			if errors.As(err, &ne) && ne.Timeout() {
				break
			}
			return true // EOF or reset
		}
	}
	return false
}

// TestMetricsServerCutsSlowClients checks the metrics port's limits, each
// scaled down: a client that sends its headers a byte at a time
// (slowloris), one that sends a body a byte at a time, and an idle
// keep-alive connection are all closed by the server.
func TestMetricsServerCutsSlowClients(t *testing.T) {
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "ok\n") })
	addr := startMetricsServer(t, h, shortLimits)
	dial := func() net.Conn {
		c, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.Close() })
		return c
	}
	t.Run("slow headers", func(t *testing.T) {
		t.Parallel()
		c := dial()
		io.WriteString(c, "GET /metrics HTTP/1.1\r\nHost: x\r\n")
		n := 0
		if !closedWithin(c, 10*time.Second, func() error {
			n++
			_, err := io.WriteString(c, "X-Slow-"+strings.Repeat("a", n%8)+": b\r\n")
			return err
		}) {
			t.Error("a client sending its headers slowly was not disconnected within 10s")
		}
	})
	t.Run("slow body", func(t *testing.T) {
		t.Parallel()
		c := dial()
		io.WriteString(c, "POST /metrics HTTP/1.1\r\nHost: x\r\nContent-Length: 100000\r\n\r\n")
		if !closedWithin(c, 10*time.Second, func() error { _, err := c.Write([]byte("a")); return err }) {
			t.Error("a client sending its body slowly was not disconnected within 10s")
		}
	})
	t.Run("idle keep-alive", func(t *testing.T) {
		t.Parallel()
		c := dial()
		io.WriteString(c, "GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n")
		resp, err := http.ReadResponse(bufio.NewReader(c), nil)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if !closedWithin(c, 10*time.Second, nil) {
			t.Error("an idle keep-alive connection was not closed within 10s")
		}
	})
	t.Run("large headers", func(t *testing.T) {
		t.Parallel()
		c := dial()
		io.WriteString(c, "GET /metrics HTTP/1.1\r\nHost: x\r\nX-Big: "+strings.Repeat("a", 64<<10)+"\r\n\r\n")
		resp, err := http.ReadResponse(bufio.NewReader(c), nil)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusRequestHeaderFieldsTooLarge {
			t.Errorf("64 KiB of headers answered %d, want 431", resp.StatusCode)
		}
	})
}

// TestMetricsServerLetsProfilesRun checks that a pprof CPU profile runs
// for its ?seconds= although that is longer than an ordinary request may
// take to be read or answered, and that one longer than maxProfile is
// refused.
func TestMetricsServerLetsProfilesRun(t *testing.T) {
	mux := metricsMux(metrics.New(), probes{}, func() bool { return true })
	lim := shortLimits
	lim.write, lim.read, lim.maxProfile = 200*time.Millisecond, 200*time.Millisecond, 5*time.Second
	addr := startMetricsServer(t, mux, lim)
	c := http.Client{Timeout: 30 * time.Second}
	get := func(url string) (int, []byte) {
		t.Helper()
		resp, err := c.Get("http://" + addr + url)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		body, err := io.ReadAll(resp.Body)
		if err != nil {
			t.Fatalf("%s: reading the answer: %v", url, err)
		}
		return resp.StatusCode, body
	}
	if code, body := get("/debug/pprof/profile?seconds=1"); code != http.StatusOK || len(body) == 0 {
		t.Fatalf("a 1s profile with 200ms limits: status %d, %d bytes; want 200 and a profile", code, len(body))
	}
	if code, _ := get("/debug/pprof/trace?seconds=10"); code != http.StatusBadRequest {
		t.Errorf("a trace over maxProfile answered %d, want 400", code)
	}
}

func TestProfileDuration(t *testing.T) {
	for _, tc := range []struct {
		url  string
		want time.Duration
		long bool
	}{
		{"/metrics", 0, false},
		{"/debug/pprof/heap?seconds=5", 0, false},
		{"/debug/pprof/profile", 30 * time.Second, true},
		{"/debug/pprof/profile?seconds=5", 5 * time.Second, true},
		{"/debug/pprof/trace", time.Second, true},
		{"/debug/pprof/trace?seconds=0.5", 500 * time.Millisecond, true},
		{"/debug/pprof/trace?seconds=nonsense", time.Second, true},
		{"/debug/pprof/profile?seconds=1e300", math.MaxInt64, true},
	} {
		d, long := profileDuration(httptest.NewRequest("GET", tc.url, nil))
		if d != tc.want || long != tc.long {
			t.Errorf("profileDuration(%s) = %v, %v; want %v, %v", tc.url, d, long, tc.want, tc.long)
		}
	}
}
