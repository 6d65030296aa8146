package connio

import (
	"context"
	"net"
	"strconv"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"obgate/config"
)

// userTimeoutMillis reads TCP_USER_TIMEOUT back from a connection's socket.
func userTimeoutMillis(t *testing.T, c net.Conn) int {
	t.Helper()
	rc, err := c.(*net.TCPConn).SyscallConn()
	if err != nil {
		t.Fatal(err)
	}
	var v int
	var gerr error
	if err := rc.Control(func(fd uintptr) {
		v, gerr = unix.GetsockoptInt(int(fd), unix.IPPROTO_TCP, unix.TCP_USER_TIMEOUT)
	}); err != nil || gerr != nil {
		t.Fatal(err, gerr)
	}
	return v
}

func TestTCPUserTimeouts(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	accepted := make(chan net.Conn, 2)
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			accepted <- c
		}
	}()
	for _, secs := range []int64{0, 7} {
		cfg, err := config.Default().With("server_tcp_user_timeout", strconv.FormatInt(secs, 10))
		if err == nil {
			cfg, err = cfg.With("client_tcp_user_timeout", strconv.FormatInt(secs+1, 10))
		}
		if err != nil {
			t.Fatal(err)
		}
		d := ServerDialer(cfg, time.Second)
		out, err := d.DialContext(context.Background(), "tcp", ln.Addr().String())
		if err != nil {
			t.Fatal(err)
		}
		if got := userTimeoutMillis(t, out); got != int(secs)*1000 {
			t.Errorf("server_tcp_user_timeout=%d: socket has TCP_USER_TIMEOUT %d ms", secs, got)
		}
		in := <-accepted
		TuneClientConn(in.(*net.TCPConn), cfg)
		if got := userTimeoutMillis(t, in); got != int(secs+1)*1000 {
			t.Errorf("client_tcp_user_timeout=%d: socket has TCP_USER_TIMEOUT %d ms", secs+1, got)
		}
		out.Close()
		in.Close()
	}
}
