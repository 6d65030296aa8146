package health

import (
	"context"
	"errors"
	"net"
	"sync/atomic"
	"testing"
	"time"

	"obgate/mysqlproto"
)

// listen serves each connection with serve on a loopback port.
func listen(t *testing.T, serve func(net.Conn)) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go serve(c)
		}
	}()
	return ln.Addr().String()
}

func greet(c net.Conn) {
	h := mysqlproto.Handshake{ServerVersion: "5.7.25", ConnectionID: 7,
		AuthData: make([]byte, 20), Capability: mysqlproto.ClientProtocol41 | mysqlproto.ClientSecureConnection | mysqlproto.ClientPluginAuth,
		AuthPlugin: mysqlproto.AuthNativePassword}
	pkt, _ := mysqlproto.AppendPacket(nil, 0, h.Append(nil))
	_, _ = c.Write(pkt)
	time.Sleep(100 * time.Millisecond)
	c.Close()
}

// waitUntil polls cond until it holds, failing the test after limit (a
// guard against hanging, not a statement about speed).
func waitUntil(t *testing.T, limit time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(limit)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("%s: not within %v", what, limit)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// viewFor returns the monitor's view of addr (mysql routing mode).
func viewFor(m *Monitor, addr string) (View, bool) {
	for _, v := range m.Views("", true) {
		if v.Addr == addr {
			return v, true
		}
	}
	return View{}, false
}

func TestProbeNeedsAHandshakeInTime(t *testing.T) {
	const timeout = time.Second
	m, _ := testMonitor(t, "detect_server_timeout", timeout.String())
	cfg := m.cfg.Load()
	ok := listen(t, greet)
	if err := probe(context.Background(), Target{Addr: ok}, cfg, nil); err != nil {
		t.Fatalf("server that greets: %v", err)
	}
	// A server that accepts the connection and never greets: the probe
	// must fail by detect_server_timeout. The connection stays open for the
	// whole test, so only the probe's own deadline can end it; ctx merely
	// keeps a broken deadline from hanging the test.
	release := make(chan struct{})
	t.Cleanup(func() { close(release) })
	hung := listen(t, func(c net.Conn) { <-release; c.Close() })
	ctx, cancel := context.WithTimeout(context.Background(), 10*timeout)
	defer cancel()
	start := time.Now()
	err := probe(ctx, Target{Addr: hung}, cfg, nil)
	took := time.Since(start)
	if err == nil {
		t.Fatal("server that never greets passed the probe")
	}
	var ne net.Error
	if !errors.As(err, &ne) || !ne.Timeout() {
		t.Errorf("probe of a server that never greets failed with %v, want a timeout", err)
	}
	if took >= 3*timeout {
		t.Errorf("probe of a server that never greets took %v, want it to fail by detect_server_timeout (%v)", took, timeout)
	}
	ln, _ := net.Listen("tcp", "127.0.0.1:0")
	refused := ln.Addr().String()
	ln.Close()
	if err := probe(context.Background(), Target{Addr: refused}, cfg, nil); err == nil {
		t.Fatal("refused connection passed the probe")
	}
}

func TestDetectTaskListsHungServerAndLetsItBack(t *testing.T) {
	m, _ := testMonitor(t, "detect_server_timeout", "1s", "server_detect_refresh_interval", "100ms",
		"server_detect_mode", "2", "server_detect_fail_threshold", "2")
	m.now = time.Now
	// While hung, the server accepts connections and greets none of them
	// until it answers again (unhang closed) or the test ends.
	var hung atomic.Bool
	var greeted atomic.Int64
	unhang, ended := make(chan struct{}), make(chan struct{})
	t.Cleanup(func() { close(ended) })
	addr := listen(t, func(c net.Conn) {
		if hung.Load() {
			select {
			case <-unhang:
			case <-ended:
				c.Close()
				return
			}
		}
		greeted.Add(1)
		greet(c)
	})
	dead := make(chan string, 1)
	m.OnDetectDead(func(_, a string) {
		select {
		case dead <- a:
		default: // later strikes of the same outage
		}
	})
	m.Start(func() []Target { return []Target{{Addr: addr}} })
	// Probes of one server run one at a time: once a second one was
	// greeted, the first one's success has been applied.
	waitUntil(t, 10*time.Second, "two probes of the healthy server", func() bool { return greeted.Load() >= 2 })
	if v, _ := viewFor(m, addr); !m.Available("", addr) || v.DetectCongested {
		t.Fatalf("healthy server listed: %+v", v)
	}
	hung.Store(true)
	select {
	case a := <-dead:
		if a != addr {
			t.Fatalf("dead = %s", a)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("hung server never found dead")
	}
	if v, _ := viewFor(m, addr); m.Available("", addr) || !v.DetectCongested {
		t.Fatalf("server found dead is still available: %+v", v)
	}

	// The server answers again: a probe finds it alive and the detect
	// list lets it back.
	hung.Store(false)
	close(unhang)
	waitUntil(t, 10*time.Second, "the server that answers again leaves the detect list", func() bool {
		v, ok := viewFor(m, addr)
		return ok && !v.DetectCongested && m.Available("", addr)
	})
	for _, v := range m.Views("", false) {
		if v.Addr == addr {
			t.Errorf("the server that answers again is still listed congested: %+v", v)
		}
	}
}
