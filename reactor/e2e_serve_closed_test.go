package reactor_test

import (
	"context"
	"errors"
	"net"
	"testing"

	"obgate/reactor"
)

// TestServeAfterShutdown: a Serve that starts after Shutdown began
// returns ErrServerClosed and closes its listener, which a caller (and
// testkit, whose quick tests can end before their Serve goroutine ran)
// tells from a failure.
func TestServeAfterShutdown(t *testing.T) {
	p := startProxy(t, "netpoll")
	if err := p.Server.Shutdown(context.Background()); err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	if err := p.Server.Serve(ln); !errors.Is(err, reactor.ErrServerClosed) {
		t.Fatalf("Serve after Shutdown: %v, want ErrServerClosed", err)
	}
	if _, err := ln.Accept(); !errors.Is(err, net.ErrClosed) {
		t.Fatalf("the listener is still open after Serve returned: Accept = %v", err)
	}
}
