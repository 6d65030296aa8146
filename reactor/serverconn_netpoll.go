package reactor

import (
	"context"
	"io"
	"net"
	"sync/atomic"
	"time"

	"github.com/cloudwego/netpoll"
	"golang.org/x/sys/unix"

	"obgate/internal/npbound"
	"obgate/reactor/connio"
)

// npServerConn is a server connection on netpoll, in the same pollers as
// the clients: the poller reads the server's answer into the connection's
// buffer and wakes the command waiting for it, so one event loop serves a
// statement end to end, and a server that closes an idle session is known
// from the hang-up event (onGone), with no system call per statement. Its
// input is bounded (internal/npbound): with a slow client the server is paused
// through TCP.
//
// It is a net.Conn, so the login, the framers and the relay use it as
// they use a plain socket. Read and Write belong to the goroutine running
// the owning session's command. Close may come from any goroutine (KILL,
// a client that hung up, the idle sweeper) while that goroutine is inside
// Read or Write: netpoll v0.7.2 frees a connection's buffers at Close, so
// Close only shuts the socket down, which wakes the reader and the writer
// with an error, and the last of them to leave closes the netpoll
// connection (busy counts them).
type npServerConn struct {
	netpoll.Connection
	rb *npbound.Bound
	fd int
	// busy counts Read and Write calls in progress; npClosing is set by
	// Close, npClosed by whoever closes the netpoll connection.
	busy   atomic.Int32
	onGone atomic.Pointer[func()]
	// session is the client session whose commands may await this
	// connection's answers on the poller (set by watchInput): it is told
	// of every read (onServerInput) and of the connection's end
	// (kickPolled).
	session atomic.Pointer[Session]
}

const (
	npClosing = 1 << 30
	npClosed  = 1 << 29
)

// attachServerNetpoll moves a dialed server socket onto netpoll. tc is
// closed when it returns without error (a duplicate of its descriptor
// lives on in the netpoll connection); on error tc is untouched.
func attachServerNetpoll(tc *net.TCPConn) (*npServerConn, error) {
	conn, err := netpollFromTCP(tc)
	if err != nil {
		return nil, err
	}
	rb, err := npbound.New(conn, serverInputHigh, serverInputLow)
	if err != nil {
		_ = conn.Close() // closes the duplicate only
		return nil, err
	}
	c := &npServerConn{Connection: conn, rb: rb, fd: rb.FD()}
	if d, ok := conn.(interface {
		SetOnDisconnect(netpoll.OnDisconnect) error
	}); ok {
		_ = d.SetOnDisconnect(c.disconnected)
	}
	_ = tc.Close()
	return c, nil
}

// netpollFromTCP duplicates tc's descriptor into a new netpoll connection
// that knows its addresses; tc stays open.
func netpollFromTCP(tc *net.TCPConn) (netpoll.Connection, error) {
	rc, err := tc.SyscallConn()
	if err != nil {
		return nil, err
	}
	fd, derr := -1, error(nil)
	if err := rc.Control(func(f uintptr) { fd, derr = unix.FcntlInt(f, unix.F_DUPFD_CLOEXEC, 0) }); err != nil {
		return nil, err
	}
	if derr != nil {
		return nil, derr
	}
	conn, err := netpoll.NewFDConnection(fd)
	if err != nil {
		_ = unix.Close(fd)
		return nil, err
	}
	if err := npbound.SetAddrs(conn, tc.LocalAddr(), tc.RemoteAddr()); err != nil {
		_ = conn.Close()
		return nil, err
	}
	return conn, nil
}

// setOnGone sets what runs when the server hangs up (on the poller
// goroutine: it must not block).
func (c *npServerConn) setOnGone(f func()) { c.onGone.Store(&f) }

func (c *npServerConn) disconnected(context.Context, netpoll.Connection) {
	if s := c.session.Load(); s != nil {
		s.drv.kickPolled()
	}
	if f := c.onGone.Load(); f != nil {
		(*f)()
	}
}

// watchInput has the poller tell s of every read of the connection, once.
func (c *npServerConn) watchInput(s *Session) {
	if c.session.Load() == s {
		return
	}
	c.session.Store(s)
	c.rb.SetOnInput(c.inputArrived)
}

func (c *npServerConn) inputArrived() {
	if s := c.session.Load(); s != nil {
		s.drv.onServerInput()
	}
}

// tryWrite writes p straight to the socket without waiting and returns
// how much the kernel took. The caller is the connection's only writer and
// netpoll's output buffer is empty (every other write waits until it
// drained), so nothing is reordered.
//
// With more, the kernel holds what it took until the next write
// (connio.WriteNowMore).
func (c *npServerConn) tryWrite(p []byte, more bool) (int, error) {
	if !c.enter() {
		return 0, net.ErrClosed
	}
	defer c.exit()
	if room := serverWriteRoom.Load(); room != 0 && int64(len(p)) > max(room, 0) {
		if room < 0 {
			return 0, nil
		}
		p = p[:room]
	}
	if more {
		return connio.WriteNowMore(c.fd, p)
	}
	return connio.WriteNow(c.fd, p)
}

// serverWriteRoom, when not zero, is how many bytes tryWrite lets a server
// socket take at once (-1: none), as a socket with that little room in its
// buffer would: tests set it to run the paths that hand the rest of a
// request to a goroutine. It is zero outside tests.
var serverWriteRoom atomic.Int64

func (c *npServerConn) enter() bool {
	if c.busy.Add(1)&(npClosing|npClosed) != 0 {
		c.exit()
		return false
	}
	return true
}

func (c *npServerConn) exit() {
	if c.busy.Add(-1) == npClosing {
		c.closeNetpoll()
	}
}

// closeNetpoll closes the netpoll connection once; from inside the
// connection's own read hook (on the poller, where netpoll's Close would
// wait for the hook to end) a pooled goroutine closes it.
func (c *npServerConn) closeNetpoll() {
	if c.busy.CompareAndSwap(npClosing, npClosing|npClosed) {
		if c.rb.InInput() {
			connio.Tasks.Run(nil, func() { _ = c.Connection.Close() })
			return
		}
		_ = c.Connection.Close()
	}
}

func (c *npServerConn) Read(p []byte) (int, error) {
	if !c.enter() {
		return 0, net.ErrClosed
	}
	defer c.exit()
	if c.Connection.Reader().Len() == 0 {
		c.rb.BeforeWait(1)
	}
	n, err := c.Connection.Read(p)
	c.rb.AfterConsume()
	return n, err
}

// Write sends p, straight to the socket when the kernel takes it at once
// (netpoll's output buffer is empty between writes: each Write and
// SendLent waits until its bytes are out), else the rest through
// netpoll, waiting. So a connection that only ever wrote small requests
// (a login, then statements on the poller) holds no output buffer node
// while idle.
func (c *npServerConn) Write(p []byte) (int, error) {
	if !c.enter() {
		return 0, net.ErrClosed
	}
	defer c.exit()
	n, err := connio.WriteNow(c.fd, p)
	if err != nil || n == len(p) {
		return n, err
	}
	m, err := c.Connection.Write(p[n:])
	return n + m, err
}

// peekInput returns the next n bytes of the input buffer, waiting (with
// the read bound lifted) until they arrive; the caller holds the
// connection (enter) and releases what it consumed. A connection that
// ends inside the n bytes reports io.ErrUnexpectedEOF.
func (c *npServerConn) peekInput(n int) ([]byte, error) {
	in := c.Connection.Reader()
	if in.Len() < n {
		c.rb.BeforeWait(n)
		b, err := in.Peek(n)
		if err != nil && in.Len() > 0 {
			err = io.ErrUnexpectedEOF
		}
		return b, err
	}
	return in.Peek(n)
}

// LendOutput lends n bytes of the connection's output buffer, which an
// OB 2.0 framer encodes its frames into (mysqlproto.OutputLender); SendLent
// sends them. In between the connection counts as busy, as in a Write.
func (c *npServerConn) LendOutput(n int) ([]byte, error) {
	if !c.enter() {
		return nil, net.ErrClosed
	}
	b, err := c.Connection.Writer().Malloc(n)
	if err != nil {
		c.exit()
	}
	return b, err
}

// SendLent flushes what LendOutput lent; it must follow each LendOutput
// that returned no error, once.
func (c *npServerConn) SendLent() error {
	defer c.exit()
	return c.rb.Flush()
}

// SetDeadline sets netpoll's deadlines; clearing them (the end of a
// login, on the goroutine that read it) also lets go of the read timer
// netpoll would otherwise keep for the connection's life.
func (c *npServerConn) SetDeadline(t time.Time) error {
	err := c.Connection.SetDeadline(t)
	if t.IsZero() {
		npbound.DropReadTimer(c.Connection)
	}
	return err
}

// Close shuts the socket down and closes the netpoll connection now, or
// when the Read or Write in progress returns. Any goroutine.
func (c *npServerConn) Close() error {
	for {
		old := c.busy.Load()
		if old&npClosing != 0 {
			return nil
		}
		if c.busy.CompareAndSwap(old, old|npClosing) {
			if old == 0 {
				c.closeNetpoll()
			} else {
				_ = unix.Shutdown(c.fd, unix.SHUT_RDWR)
			}
			if s := c.session.Load(); s != nil {
				s.drv.kickPolled()
			}
			return nil
		}
	}
}

// peerClosed reports, without a system call, whether the server hung up
// or sent bytes outside a response.
func (c *npServerConn) peerClosed() bool {
	return !c.Connection.IsActive() || c.Connection.Reader().Len() > 0
}

// buffered is what the server sent that nobody read yet.
func (c *npServerConn) buffered() int { return c.Connection.Reader().Len() }
