package reactor

import (
	"bytes"
	"errors"
	"testing"

	"golang.org/x/sys/unix"
)

// TestWriteNowSocket: writeNow sends to a socket, reports a full socket
// buffer as 0 bytes without error even on a blocking descriptor, and a
// peer that is gone as EPIPE (without SIGPIPE, which would end the test
// binary).
func TestWriteNowSocket(t *testing.T) {
	fds, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_STREAM, 0)
	if err != nil {
		t.Fatal(err)
	}
	a, b := fds[0], fds[1]
	defer unix.Close(a)
	msg := []byte("a statement's answer")
	if n, err := writeNow(a, msg); n != len(msg) || err != nil {
		t.Fatalf("writeNow = %d, %v; want %d, nil", n, err, len(msg))
	}
	got := make([]byte, 64)
	if n, err := unix.Read(b, got); err != nil || !bytes.Equal(got[:n], msg) {
		t.Fatalf("peer read %q, %v", got[:n], err)
	}
	if n, err := writeNow(a, nil); n != 0 || err != nil {
		t.Fatalf("writeNow(nil) = %d, %v", n, err)
	}
	// a is blocking: fill its buffer, then one more write must not wait.
	big := make([]byte, 1<<20)
	total := 0
	for {
		n, err := writeNow(a, big)
		if err != nil {
			t.Fatal(err)
		}
		if n == 0 {
			break
		}
		total += n
		if total > 64<<20 {
			t.Fatal("the socket buffer never filled")
		}
	}
	unix.Close(b)
	if _, err := writeNow(a, msg); !errors.Is(err, unix.EPIPE) && !errors.Is(err, unix.ECONNRESET) {
		t.Fatalf("writeNow to a closed peer: %v, want EPIPE", err)
	}
}
