package npbound

import (
	"bytes"
	"testing"
	"time"

	"obgate/internal/testkit"

	"github.com/cloudwego/netpoll"
	"golang.org/x/sys/unix"
)

// pendingFlush makes a bounded connection whose peer reads nothing
// (small socket buffers), starts a Flush of out on it and returns once
// netpoll waits for the socket to drain; the Flush's result comes on the
// channel. The connection and peer are closed when the test ends.
func pendingFlush(t *testing.T, out []byte) (*Bound, netpoll.Connection, int, <-chan error) {
	t.Helper()
	conn, peer := pair(t)
	t.Cleanup(func() {
		_ = conn.Close()
		_ = unix.Close(peer)
	})
	rb, err := New(conn, 64<<10, 16<<10)
	if err != nil {
		t.Fatal(err)
	}
	_ = unix.SetsockoptInt(rb.FD(), unix.SOL_SOCKET, unix.SO_SNDBUF, 64<<10)
	_ = unix.SetsockoptInt(peer, unix.SOL_SOCKET, unix.SO_RCVBUF, 64<<10)
	flushed := make(chan error, 1)
	go func() {
		w := conn.Writer()
		if _, err := w.WriteBinary(out); err != nil {
			flushed <- err
			return
		}
		flushed <- w.Flush()
	}()
	testkit.Eventually(t, 10*time.Second, func() bool {
		rb.mu.Lock()
		defer rb.mu.Unlock()
		return rb.writing
	}, "netpoll to wait for the socket to drain")
	return rb, conn, peer, flushed
}

// expectDelivered reads out from peer while the pending Flush completes;
// a Flush that never does fails the test with why.
func expectDelivered(t *testing.T, peer int, out []byte, flushed <-chan error, why string) {
	t.Helper()
	got := readAll(peer, len(out))
	select {
	case err := <-flushed:
		if err != nil {
			t.Fatalf("Flush: %v", err)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("the Flush never completed: " + why)
	}
	if b := <-got; !bytes.Equal(b, out) {
		t.Fatalf("the peer got %d of %d bytes, or other bytes", len(b), len(out))
	}
}

// TestPauseKeepsPendingWrite: a Flush the kernel could not take whole
// waits for netpoll's poller to send the rest when the socket drains
// (netpoll arms write interest for it). Reads paused in the meantime
// (the peer sent more than the bound) must not drop that interest: the
// Flush completes and the peer gets every byte once it reads. And
// netpoll's own change of the mask when the output is sent must not
// resume the paused reads. This is what netpoll's meaning must stay for
// the bound to work; it fails if netpoll arms write interest another
// way than through its operator's poll, or if the bound writes its mask
// without the write interest (a client of obgate then saw a large result
// stop until netpoll's write timeout).
func TestPauseKeepsPendingWrite(t *testing.T) {
	const high = 64 << 10
	out := bytes.Repeat([]byte("0123456789abcdef"), 256<<10) // 4 MiB
	rb, conn, peer, flushed := pendingFlush(t, out)
	// The peer sends more than the bound: reads pause while the write
	// waits.
	in := make([]byte, 4*high)
	sent := make(chan error, 1)
	go func() {
		_, err := unix.Write(peer, in)
		sent <- err
	}()
	testkit.Eventually(t, 10*time.Second, rb.Paused, "reads to pause")

	expectDelivered(t, peer, out, flushed, "pausing reads dropped netpoll's write interest")
	// netpoll dropped its write interest once the output was sent; the
	// reads it did not ask for must still be paused.
	testkit.Eventually(t, 10*time.Second, func() bool {
		rb.mu.Lock()
		defer rb.mu.Unlock()
		return !rb.writing
	}, "netpoll to drop write interest")
	// What the kernel watches, not what the bound believes: a mask that
	// asks for input would have the poller read on.
	if !rb.Paused() || testkit.EpollWatchesInput(t, rb.FD()) || conn.Reader().Len() > high+(1<<20) {
		t.Fatalf("paused %v, epoll watching input %v, %d bytes buffered after the write: netpoll's mask resumed reads",
			rb.Paused(), testkit.EpollWatchesInput(t, rb.FD()), conn.Reader().Len())
	}
	// Consuming resumes reading, and everything the peer sent arrives.
	r := conn.Reader()
	for total := 0; total < len(in); {
		rb.BeforeWait(1)
		testkit.Eventually(t, 10*time.Second, func() bool { return r.Len() > 0 }, "input")
		n := r.Len()
		if _, err := r.Next(n); err != nil {
			t.Fatal(err)
		}
		_ = r.Release()
		rb.AfterConsume()
		total += n
	}
	if err := <-sent; err != nil {
		t.Fatal(err)
	}
	// Reading again, the kernel watches the socket for input: the
	// epoll check above looks at the right descriptor.
	if !testkit.EpollWatchesInput(t, rb.FD()) {
		t.Fatal("reads resumed, yet no epoll instance watches the socket for input")
	}
}

// TestFreezeKeepsPendingWrite: Freeze (a session's hand-over) stops reads
// and Thaw restores them without touching a write netpoll still waits
// to send.
func TestFreezeKeepsPendingWrite(t *testing.T) {
	out := bytes.Repeat([]byte("z"), 4<<20)
	rb, _, peer, flushed := pendingFlush(t, out)
	if !rb.Freeze() {
		t.Fatal("Freeze failed")
	}
	rb.Thaw()
	if !rb.Freeze() {
		t.Fatal("Freeze after Thaw failed")
	}
	expectDelivered(t, peer, out, flushed, "Freeze or Thaw dropped netpoll's write interest")
	rb.Thaw()
}
