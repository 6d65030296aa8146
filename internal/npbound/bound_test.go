package npbound

import (
	"net"
	"testing"
	"time"

	"github.com/cloudwego/netpoll"
	"golang.org/x/sys/unix"
)

// TestLayout fails when a netpoll upgrade changed the internals this
// package relies on.
func TestLayout(t *testing.T) {
	if !Probe() {
		t.Fatal("netpoll's layout is not recognised")
	}
	conn, peer := pair(t)
	defer unix.Close(peer)
	defer conn.Close()
	local := &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 1}
	remote := &net.TCPAddr{IP: net.IPv4(127, 0, 0, 2), Port: 2}
	if err := SetAddrs(conn, local, remote); err != nil {
		t.Fatal(err)
	}
	if conn.LocalAddr() != local || conn.RemoteAddr() != remote {
		t.Fatalf("addresses %v %v, want %v %v", conn.LocalAddr(), conn.RemoteAddr(), local, remote)
	}
}

// TestBoundPausesAndResumes: a peer writing far more than anyone reads
// fills the input only up to the bound plus one read of the poller; the
// connection reports itself paused, and consuming resumes it until all
// bytes arrived.
func TestBoundPausesAndResumes(t *testing.T) {
	conn, peer := pair(t)
	defer conn.Close()
	const high, low, total = 64 << 10, 16 << 10, 8 << 20
	rb, err := New(conn, high, low)
	if err != nil {
		t.Fatal(err)
	}
	if rb.FD() <= 0 {
		t.Fatalf("fd %d", rb.FD())
	}
	before := Pauses()
	done := make(chan error, 1)
	go func() {
		defer unix.Close(peer)
		buf := make([]byte, 64<<10)
		for sent := 0; sent < total; {
			n, err := unix.Write(peer, buf)
			if err != nil {
				done <- err
				return
			}
			sent += n
		}
		done <- nil
	}()
	r := conn.Reader()
	deadline := time.Now().Add(10 * time.Second)
	for !rb.Paused() {
		if time.Now().After(deadline) {
			t.Fatalf("not paused with %d bytes buffered", r.Len())
		}
		time.Sleep(time.Millisecond)
	}
	if Pauses() == before {
		t.Fatal("pause not counted")
	}
	if n := r.Len(); n > high+8<<20 {
		t.Fatalf("%d bytes buffered while paused; bound %d", n, high)
	}
	got := 0
	for got < total {
		want := r.Len()
		if want == 0 {
			want = 1
		}
		if want > total-got {
			want = total - got
		}
		rb.BeforeWait(want)
		p, err := r.Next(want)
		if err != nil {
			t.Fatalf("after %d bytes: %v", got, err)
		}
		got += len(p)
		_ = r.Release()
		rb.AfterConsume()
	}
	if err := <-done; err != nil {
		t.Fatalf("writer: %v", err)
	}
}

// TestNewOnClosedConnection: a connection closed before the bound joins
// it is refused, not touched.
func TestNewOnClosedConnection(t *testing.T) {
	conn, peer := pair(t)
	defer unix.Close(peer)
	_ = conn.Close()
	deadline := time.Now().Add(5 * time.Second)
	for conn.IsActive() && time.Now().Before(deadline) {
		time.Sleep(time.Millisecond)
	}
	if _, err := New(conn, 1, 1); err == nil {
		t.Fatal("bound installed on a closed connection")
	}
}

// pair is a netpoll connection over loopback TCP and the descriptor of
// its peer. (A socket pair would not do: when its peer closes, epoll
// reports a hang-up even while reading is paused, and netpoll closes the
// connection with data still unread; TCP reports only the read side's
// end, which a paused connection does not ask for.)
func pair(t *testing.T) (netpoll.Connection, int) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	dialed, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	accepted, err := ln.Accept()
	if err != nil {
		t.Fatal(err)
	}
	conn, err := netpoll.NewFDConnection(dupFD(t, dialed.(*net.TCPConn)))
	if err != nil {
		t.Fatal(err)
	}
	_ = dialed.Close()
	peer := dupFD(t, accepted.(*net.TCPConn))
	_ = accepted.Close()
	if err := unix.SetNonblock(peer, false); err != nil {
		t.Fatal(err)
	}
	return conn, peer
}

func dupFD(t *testing.T, c *net.TCPConn) int {
	t.Helper()
	rc, err := c.SyscallConn()
	if err != nil {
		t.Fatal(err)
	}
	fd := -1
	var derr error
	if err := rc.Control(func(f uintptr) { fd, derr = unix.Dup(int(f)) }); err != nil || derr != nil {
		t.Fatal(err, derr)
	}
	return fd
}

// watchedPair is a bounded connection, its peer's descriptor (both
// closed when the test ends) and a channel that gets the buffered length
// after each read (SetOnInput).
func watchedPair(t *testing.T) (netpoll.Connection, int, chan int) {
	t.Helper()
	conn, peer := pair(t)
	t.Cleanup(func() {
		_ = conn.Close()
		_ = unix.Close(peer)
	})
	rb, err := New(conn, 1<<20, 256<<10)
	if err != nil {
		t.Fatal(err)
	}
	seen := make(chan int, 16)
	rb.SetOnInput(func() { seen <- conn.Reader().Len() })
	return conn, peer, seen
}

// TestOnInputRunsAfterEachRead: the function set with SetOnInput runs on
// the poller after netpoll published the bytes of a read, so it sees
// them buffered.
func TestOnInputRunsAfterEachRead(t *testing.T) {
	conn, peer, seen := watchedPair(t)
	for i, msg := range []string{"one", "three"} {
		if _, err := unix.Write(peer, []byte(msg)); err != nil {
			t.Fatal(err)
		}
		select {
		case n := <-seen:
			if want := len(msg); i == 0 && n != want {
				t.Fatalf("after the first read %d bytes buffered, want %d", n, want)
			}
			if n == 0 {
				t.Fatal("onInput ran before the bytes were published")
			}
		case <-time.After(10 * time.Second):
			t.Fatalf("onInput did not run after write %d", i)
		}
		if _, err := conn.Reader().Next(conn.Reader().Len()); err != nil {
			t.Fatal(err)
		}
		_ = conn.Reader().Release()
	}
}

// TestFullReadIsFollowedAtOnce: a message that straddles the end of
// netpoll's buffer node, which a first read fills, is read whole within
// the same event, so the consumer is told once, with all of it. The
// consumer keeps one byte back each time, so that netpoll keeps filling
// the same node, and messages of 300 bytes cross its end every few dozen.
func TestFullReadIsFollowedAtOnce(t *testing.T) {
	again := ReadsAgain()
	sendMessages(t, 1)
	if ReadsAgain() == again {
		t.Fatal("no read filled its buffer: the messages never crossed a node's end")
	}
}

// TestConsumedInputStartsFreshNode: once the consumer took everything,
// netpoll gives the connection's input node back (an idle connection
// holds none), and the next message is read into a fresh node, whole, by
// one read.
func TestConsumedInputStartsFreshNode(t *testing.T) {
	again := ReadsAgain()
	sendMessages(t, 0)
	if n := ReadsAgain() - again; n != 0 {
		t.Fatalf("%d reads filled their buffer: input nodes were kept after they were consumed", n)
	}
}

// sendMessages writes 100 messages of 300 bytes to a bounded connection,
// one at a time; after each the consumer is told once, of all of it,
// and consumes all but keep bytes.
func sendMessages(t *testing.T, keep int) {
	t.Helper()
	conn, peer, seen := watchedPair(t)
	msg := make([]byte, 300)
	kept := 0
	for i := range 100 {
		if _, err := unix.Write(peer, msg); err != nil {
			t.Fatal(err)
		}
		select {
		case n := <-seen:
			if n != kept+len(msg) {
				t.Fatalf("message %d: told of %d bytes, want all %d at once", i, n, kept+len(msg))
			}
		case <-time.After(10 * time.Second):
			t.Fatalf("onInput did not run for message %d", i)
		}
		if _, err := conn.Reader().Next(kept + len(msg) - keep); err != nil {
			t.Fatal(err)
		}
		_ = conn.Reader().Release()
		kept = keep
	}
}

// TestFreezeLeavesInputInKernel: bytes that arrive while a connection is
// frozen stay in the kernel for whoever reads the descriptor next (a
// process the session was handed to), and Thaw lets netpoll read again.
func TestFreezeLeavesInputInKernel(t *testing.T) {
	conn, peer := pair(t)
	defer conn.Close()
	defer unix.Close(peer)
	rb, err := New(conn, 64<<10, 16<<10)
	if err != nil {
		t.Fatal(err)
	}
	r := conn.Reader()
	waitLen := func(n int) {
		t.Helper()
		deadline := time.Now().Add(10 * time.Second)
		for r.Len() < n {
			if time.Now().After(deadline) {
				t.Fatalf("%d bytes buffered, want %d", r.Len(), n)
			}
			time.Sleep(time.Millisecond)
		}
	}
	if _, err := unix.Write(peer, []byte("abc")); err != nil {
		t.Fatal(err)
	}
	waitLen(3)
	if !rb.Freeze() {
		t.Fatal("Freeze failed")
	}
	if rb.Freeze() {
		t.Fatal("a second Freeze succeeded")
	}
	if _, err := unix.Write(peer, []byte("def")); err != nil {
		t.Fatal(err)
	}
	fds := []unix.PollFd{{Fd: int32(rb.FD()), Events: unix.POLLIN}}
	if n, err := unix.Poll(fds, 10_000); err != nil || n != 1 {
		t.Fatalf("poll: %d %v", n, err)
	}
	got := make([]byte, 16)
	n, err := unix.Read(rb.FD(), got)
	if err != nil || string(got[:n]) != "def" {
		t.Fatalf("the kernel held %q (%v), want the bytes sent while frozen", got[:n], err)
	}
	if r.Len() != 3 {
		t.Fatalf("netpoll read while frozen: %d bytes buffered", r.Len())
	}
	rb.Thaw()
	if _, err := unix.Write(peer, []byte("ghi")); err != nil {
		t.Fatal(err)
	}
	waitLen(6)
	if b, _ := r.Next(6); string(b) != "abcghi" {
		t.Fatalf("read %q after Thaw", b)
	}
}
