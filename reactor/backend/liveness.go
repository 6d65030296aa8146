package backend

import (
	"net"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// PeekIdleAfter is how long a server session must have been idle before
// alive peeks at its socket. A server closes a session on its own
// schedule (wait_timeout, a restart, a KILL), so a session used moments
// ago is all but certainly still there, and peeking before every
// statement would cost a system call per statement for nothing. The rare
// break inside this window is caught by the relay instead: nothing of the
// answer has reached the client, so the statement fails with an ERR
// (outcome unknown), the broken server session is dropped and the client
// session goes on with another one.
const PeekIdleAfter = 100 * time.Millisecond

// Alive reports whether an idle server session may carry the next
// request (flash-break avoidance): it is not closed, the server has not
// closed it (the server watch says so without a system call), nothing
// arrived outside a response (out of step), and, for a connection the
// watch does not cover that has been idle for peekIdleAfter or more, a
// non-blocking peek finds it standing. The goroutine running the session's
// command calls it.
func (b *Conn) Alive() bool { return b.aliveAt(time.Now()) }

// aliveAt is alive at time now.
func (b *Conn) aliveAt(now time.Time) bool {
	if b.Closed.Load() || b.PeerGone.Load() {
		return false
	}
	sio := b.serverIO()
	if sio.buffered() > 0 {
		return false // bytes outside a response: out of step
	}
	if b.watchToken != 0 || b.usedWithin(now, PeekIdleAfter) {
		return true
	}
	return !sio.peerClosed()
}

// usedWithin reports whether the session finished a response (or its
// login) less than d before now.
func (b *Conn) usedWithin(now time.Time, d time.Duration) bool {
	at := b.LastUsed.Load()
	return at != 0 && now.UnixNano()-at < int64(d)
}

// peeker looks at a TCP connection without consuming or waiting: a
// recvfrom with MSG_PEEK|MSG_DONTWAIT. Its fields carry the result out of
// the RawConn callback, which is bound once so that a peek allocates
// nothing. Used by the goroutine running the session's command.
type peeker struct {
	rc  syscall.RawConn
	fn  func(uintptr)
	n   int
	err error
	buf [1]byte
}

// peerClosed reports whether conn's peer closed or reset it, or sent
// bytes (which nobody asked for while the session is idle).
func (p *peeker) peerClosed(conn net.Conn) bool {
	if nc, ok := conn.(*PolledConn); ok {
		return nc.peerClosed()
	}
	if p.rc == nil {
		sc, ok := socketOf(conn).(syscall.Conn)
		if !ok {
			return false // not a socket (tests): nothing to peek at
		}
		rc, err := sc.SyscallConn()
		if err != nil {
			return true
		}
		p.rc = rc
		p.fn = p.peek
	}
	if err := p.rc.Control(p.fn); err != nil {
		return true
	}
	switch {
	case p.err == unix.EAGAIN:
		return false
	case p.err != nil, p.n == 0:
		return true // reset, or EOF
	}
	return true // the server sent something unasked: an error before closing
}

func (p *peeker) peek(fd uintptr) {
	p.n, _, p.err = unix.Recvfrom(int(fd), p.buf[:], unix.MSG_PEEK|unix.MSG_DONTWAIT)
}
