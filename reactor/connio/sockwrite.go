package connio

import (
	"syscall"
	"unsafe"

	"golang.org/x/sys/unix"
)

// sendFlags make a socket write never wait (even on a descriptor that is
// not in non-blocking mode) and never raise SIGPIPE on a broken
// connection: the caller gets EPIPE instead.
const sendFlags = unix.MSG_DONTWAIT | unix.MSG_NOSIGNAL

// WriteNow writes p to the socket fd as far as the kernel takes it now
// and returns how much it took; a full socket buffer is 0 bytes and no
// error. Any goroutine that owns fd's writes, the poller included.
//
// It is the statement path's write, one per statement in each direction
// (the request to the server, the answer to the client), so it is a
// sendto(2) through RawSyscall: sendto goes straight to the socket layer,
// skipping write(2)'s file layer, and a call that never waits need not
// tell the scheduler it is in a system call (the entersyscall/exitsyscall
// pair of unix.Write); netpoll's own sends and reads skip it the same
// way. Every descriptor it is given is a socket (clients and servers
// are TCP or unix-domain connections).
func WriteNow(fd int, p []byte) (int, error) { return sendNow(fd, p, sendFlags) }

// WriteNowMore is WriteNow for bytes that the next write to fd follows at
// once: MSG_MORE has the kernel hold them (at most 200 ms) and send them
// with that write, in one segment and one wake-up of the peer.
func WriteNowMore(fd int, p []byte) (int, error) { return sendNow(fd, p, sendFlags|unix.MSG_MORE) }

func sendNow(fd int, p []byte, flags uintptr) (int, error) {
	if len(p) == 0 {
		return 0, nil
	}
	for {
		r, _, e := syscall.RawSyscall6(unix.SYS_SENDTO, uintptr(fd), uintptr(unsafe.Pointer(&p[0])), uintptr(len(p)), flags, 0, 0)
		switch e {
		case 0:
			return int(r), nil
		case unix.EINTR:
			continue
		case unix.EAGAIN:
			return 0, nil
		}
		return 0, e
	}
}
