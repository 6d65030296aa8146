package health

import (
	"context"
	"net"
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

func TestProbeNeedsAHandshakeInTime(t *testing.T) {
	m, _ := testMonitor(t, "detect_server_timeout", "1s")
	cfg := m.cfg.Load()
	ok := listen(t, greet)
	if err := probe(context.Background(), Target{Addr: ok}, cfg); err != nil {
		t.Fatalf("server that greets: %v", err)
	}
	hung := listen(t, func(c net.Conn) { time.Sleep(3 * time.Second); c.Close() })
	if err := probe(context.Background(), Target{Addr: hung}, cfg); err == nil {
		t.Fatal("server that never greets passed the probe")
	}
	ln, _ := net.Listen("tcp", "127.0.0.1:0")
	refused := ln.Addr().String()
	ln.Close()
	if err := probe(context.Background(), Target{Addr: refused}, cfg); err == nil {
		t.Fatal("refused connection passed the probe")
	}
}

func TestDetectTaskListsHungServerAndLetsItBack(t *testing.T) {
	m, _ := testMonitor(t, "detect_server_timeout", "1s", "server_detect_refresh_interval", "100ms",
		"server_detect_mode", "2", "server_detect_fail_threshold", "2")
	m.now = time.Now
	hang := make(chan struct{})
	addr := listen(t, func(c net.Conn) {
		select {
		case <-hang:
			time.Sleep(2 * time.Second)
			c.Close()
		default:
			greet(c)
		}
	})
	dead := make(chan string, 4)
	m.OnDetectDead(func(_, a string) { dead <- a })
	m.Start(func() []Target { return []Target{{Addr: addr}} })
	time.Sleep(300 * time.Millisecond)
	if !m.Available(nil, addr) {
		t.Fatal("healthy server listed")
	}
	close(hang)
	select {
	case a := <-dead:
		if a != addr {
			t.Fatalf("dead = %s", a)
		}
	case <-time.After(6 * time.Second):
		t.Fatal("hung server never found dead")
	}
	if m.Available(nil, addr) {
		t.Fatal("server found dead is still available")
	}
}
