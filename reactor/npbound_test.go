package reactor

import (
	"errors"
	"net"
	"testing"
	"time"

	"obgate/internal/npbound"
)

// TestNetpollLayout fails when a netpoll upgrade changed the internals
// that read bounds rely on (internal/npbound).
func TestNetpollLayout(t *testing.T) {
	if _, err := newPollerSet(1); err != nil {
		t.Fatal(err)
	}
	a, b := tcpPair(t)
	defer b.Close()
	nc, err := attachServerNetpoll(a.(*net.TCPConn))
	if err != nil {
		t.Fatalf("attach: %v", err)
	}
	defer nc.Close()
	if !npbound.Probe() {
		t.Fatal("layout not recognised")
	}
}

// TestServerConnBounded: a peer that sends far more than anyone reads
// fills obgate's input buffer up to the bound only; the rest waits in
// TCP, and reading on resumes the flow until everything arrived.
func TestServerConnBounded(t *testing.T) {
	nc, b := attachedPair(t)
	defer nc.Close()
	const total = 64 << 20
	done := make(chan error, 1)
	go func() {
		buf := make([]byte, 1<<20)
		var err error
		for sent := 0; sent < total && err == nil; sent += len(buf) {
			_, err = b.Write(buf)
		}
		done <- err
		b.Close()
	}()
	time.Sleep(300 * time.Millisecond)
	if got := nc.buffered(); got > serverInputHigh+8<<20 {
		t.Fatalf("buffered %d bytes while nobody read; bound is %d", got, serverInputHigh)
	}
	if !nc.rb.Paused() {
		t.Fatalf("not paused with %d bytes buffered", nc.buffered())
	}
	p := make([]byte, 256<<10)
	var n int
	for n < total {
		k, err := nc.Read(p)
		if err != nil {
			t.Fatalf("read after %d bytes: %v", n, err)
		}
		n += k
	}
	if err := <-done; err != nil {
		t.Fatalf("writer: %v", err)
	}
}

// TestServerConnCloseDuringRead: Close from another goroutine wakes a
// blocked Read with an error and closes the connection once.
func TestServerConnCloseDuringRead(t *testing.T) {
	nc, _ := attachedPair(t)
	errc := make(chan error, 1)
	go func() {
		_, err := nc.Read(make([]byte, 10))
		errc <- err
	}()
	time.Sleep(50 * time.Millisecond)
	_ = nc.Close()
	select {
	case err := <-errc:
		if err == nil {
			t.Fatal("read after close returned no error")
		}
	case <-time.After(5 * time.Second):
		t.Fatal("read still blocked after close")
	}
	if _, err := nc.Write([]byte("x")); err == nil {
		t.Fatal("write after close succeeded")
	}
	if nc.busy.Load()&npClosed == 0 {
		t.Fatal("netpoll connection not closed")
	}
}

// TestServerConnReadTimeout: a read deadline on a netpoll connection made
// from a descriptor ends the read with a timeout (netpoll formats the
// remote address into that error; without one it panicked).
func TestServerConnReadTimeout(t *testing.T) {
	nc, b := attachedPair(t)
	defer nc.Close()
	_ = nc.SetReadDeadline(time.Now().Add(20 * time.Millisecond))
	_, err := nc.Read(make([]byte, 8))
	var ne net.Error
	if !errors.As(err, &ne) || !ne.Timeout() {
		t.Fatalf("read past its deadline: %v, want a timeout", err)
	}
	if nc.RemoteAddr().String() != b.LocalAddr().String() {
		t.Fatalf("remote address %v, want %v", nc.RemoteAddr(), b.LocalAddr())
	}
}

// attachedPair returns a loopback connection whose first end is on
// netpoll as a server connection, and its plain other end.
func attachedPair(t *testing.T) (*npServerConn, net.Conn) {
	t.Helper()
	if _, err := newPollerSet(1); err != nil {
		t.Fatal(err)
	}
	a, b := tcpPair(t)
	nc, err := attachServerNetpoll(a.(*net.TCPConn))
	if err != nil {
		t.Fatal(err)
	}
	return nc, b
}
