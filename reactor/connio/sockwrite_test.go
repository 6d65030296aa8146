package connio

import (
	"bytes"
	"errors"
	"net"
	"testing"

	"golang.org/x/sys/unix"
)

// TestWriteNowSocket: WriteNow sends to a socket, reports a full socket
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
	if n, err := WriteNow(a, msg); n != len(msg) || err != nil {
		t.Fatalf("WriteNow = %d, %v; want %d, nil", n, err, len(msg))
	}
	got := make([]byte, 64)
	if n, err := unix.Read(b, got); err != nil || !bytes.Equal(got[:n], msg) {
		t.Fatalf("peer read %q, %v", got[:n], err)
	}
	if n, err := WriteNow(a, nil); n != 0 || err != nil {
		t.Fatalf("WriteNow(nil) = %d, %v", n, err)
	}
	// a is blocking: fill its buffer, then one more write must not wait.
	big := make([]byte, 1<<20)
	total := 0
	for {
		n, err := WriteNow(a, big)
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
	if _, err := WriteNow(a, msg); !errors.Is(err, unix.EPIPE) && !errors.Is(err, unix.ECONNRESET) {
		t.Fatalf("WriteNow to a closed peer: %v, want EPIPE", err)
	}
}

// TestWriteNowMoreJoinsTheNextWrite: bytes written with WriteNowMore go out
// with the next write, in one TCP segment; two plain writes are two. The
// kernel sends held bytes after 200 ms by itself, so a try that was
// descheduled that long between the two writes is made again.
func TestWriteNowMoreJoinsTheNextWrite(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	client, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer client.Close()
	peer, err := ln.Accept()
	if err != nil {
		t.Fatal(err)
	}
	defer peer.Close()
	raw, err := client.(*net.TCPConn).SyscallConn()
	if err != nil {
		t.Fatal(err)
	}
	// segments writes first and then second and returns how many data
	// segments they took; the peer reads both.
	segments := func(first func(int, []byte) (int, error)) uint32 {
		var before, after uint32
		var werr error
		if err := raw.Control(func(fd uintptr) {
			info, err := unix.GetsockoptTCPInfo(int(fd), unix.IPPROTO_TCP, unix.TCP_INFO)
			if err != nil {
				werr = err
				return
			}
			before = info.Data_segs_out
			if _, werr = first(int(fd), []byte("close\n")); werr != nil {
				return
			}
			if _, werr = WriteNow(int(fd), []byte("prepare\n")); werr != nil {
				return
			}
			if info, werr = unix.GetsockoptTCPInfo(int(fd), unix.IPPROTO_TCP, unix.TCP_INFO); werr == nil {
				after = info.Data_segs_out
			}
		}); err != nil {
			t.Fatal(err)
		}
		if werr != nil {
			t.Fatal(werr)
		}
		got := make([]byte, 0, 14)
		for len(got) < 14 {
			buf := make([]byte, 14)
			n, err := peer.Read(buf)
			if err != nil {
				t.Fatal(err)
			}
			got = append(got, buf[:n]...)
		}
		if string(got) != "close\nprepare\n" {
			t.Fatalf("the peer read %q", got)
		}
		return after - before
	}
	if n := segments(WriteNow); n != 2 {
		t.Fatalf("two plain writes took %d segments, want 2", n)
	}
	for try := range 3 {
		n := segments(WriteNowMore)
		if n == 1 {
			return
		}
		t.Logf("try %d: WriteNowMore and the next write took %d segments", try, n)
	}
	t.Error("WriteNowMore's bytes never went out with the next write")
}
