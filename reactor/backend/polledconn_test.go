package backend

import (
	"errors"
	"net"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"obgate/internal/npbound"
	"obgate/internal/testkit"
)

// TestNetpollLayout fails when a netpoll upgrade changed the internals
// that read bounds rely on (internal/npbound).
func TestNetpollLayout(t *testing.T) {
	a, b := tcpPair(t)
	defer b.Close()
	nc, err := AttachNetpoll(a.(*net.TCPConn))
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
	// Wait until obgate stopped reading: the bound paused the connection,
	// netpoll no longer polls it for input, and bytes wait in the kernel.
	// From then on its buffer cannot grow; it must be within the bound.
	tooMuch := func() {
		if got := nc.Buffered(); got > InputHigh+8<<20 {
			t.Fatalf("buffered %d bytes while nobody read; bound is %d", got, InputHigh)
		}
	}
	testkit.Eventually(t, hangLimitUnit, func() bool {
		tooMuch()
		if !nc.Bound.Paused() || testkit.EpollWatchesInput(t, nc.FD) {
			return false
		}
		queued, err := unix.IoctlGetInt(nc.FD, unix.SIOCINQ)
		return err == nil && queued > 0
	}, "reading paused with input left in TCP")
	tooMuch()
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
	// Close once the Read is in progress (it counts in busy), so that
	// Close takes the path that wakes a reader instead of closing at once.
	testkit.Eventually(t, hangLimitUnit, func() bool { return nc.busy.Load() == 1 }, "the Read to begin")
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
func attachedPair(t *testing.T) (*PolledConn, net.Conn) {
	t.Helper()
	a, b := tcpPair(t)
	nc, err := AttachNetpoll(a.(*net.TCPConn))
	if err != nil {
		t.Fatal(err)
	}
	return nc, b
}
