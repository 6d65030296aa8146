package backend

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

// PolledConn is a server connection on netpoll, in the same pollers as
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
type PolledConn struct {
	netpoll.Connection
	Bound *npbound.Bound
	FD    int
	// busy counts Read and Write calls in progress; npClosing is set by
	// Close, npClosed by whoever closes the netpoll connection.
	busy   atomic.Int32
	onGone atomic.Pointer[func()]
	// watcher is told of every read of the connection and of its end,
	// on the poller (set by watchInput).
	watcher atomic.Pointer[watcherRef]
}

// InputWatcher is what awaits a server connection's answers on the
// poller: the client session's command driver. Neither method may block.
type InputWatcher interface {
	// ServerInput is told of every read of the connection, on the
	// poller.
	ServerInput()
	// ServerHungUp is told that the connection ended, closed by either
	// side (on the poller, or on the goroutine that closed it): an
	// answer it awaited will not come.
	ServerHungUp()
}

// watcherRef boxes an InputWatcher for an atomic pointer.
type watcherRef struct{ w InputWatcher }

// Input backlog bounds of a netpoll server connection: it stops being
// read once a response has high bytes waiting for a slow client, so TCP
// pushes back on the server, and reading resumes at low. Between the two,
// one read of the poller (at most netpoll's 8 MiB book) can land, so a
// paused connection holds well under high + 8 MiB.
const (
	InputHigh = 1 << 20
	InputLow  = 256 << 10
)

// MaxView bounds a view of a netpoll input buffer.
const MaxView = 4 * connio.ChunkSize

const (
	npClosing = 1 << 30
	npClosed  = 1 << 29
)

// attachServerNetpoll moves a dialed server socket onto netpoll. tc is
// closed when it returns without error (a duplicate of its descriptor
// lives on in the netpoll connection); on error tc is untouched.
func AttachNetpoll(tc *net.TCPConn) (*PolledConn, error) {
	conn, err := NetpollFromTCP(tc)
	if err != nil {
		return nil, err
	}
	rb, err := npbound.New(conn, InputHigh, InputLow)
	if err != nil {
		_ = conn.Close() // closes the duplicate only
		return nil, err
	}
	c := &PolledConn{Connection: conn, Bound: rb, FD: rb.FD()}
	if d, ok := conn.(interface {
		SetOnDisconnect(netpoll.OnDisconnect) error
	}); ok {
		_ = d.SetOnDisconnect(c.disconnected)
	}
	_ = tc.Close()
	return c, nil
}

// NetpollFromTCP duplicates tc's descriptor into a new netpoll connection
// that knows its addresses; tc stays open.
func NetpollFromTCP(tc *net.TCPConn) (netpoll.Connection, error) {
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
func (c *PolledConn) setOnGone(f func()) { c.onGone.Store(&f) }

func (c *PolledConn) disconnected(context.Context, netpoll.Connection) {
	if r := c.watcher.Load(); r != nil {
		r.w.ServerHungUp()
	}
	if f := c.onGone.Load(); f != nil {
		(*f)()
	}
}

// WatchInput has the poller tell w of every read of the connection and
// of its end. Only the goroutine running the owning session's command
// calls it.
func (c *PolledConn) WatchInput(w InputWatcher) {
	if r := c.watcher.Load(); r != nil && r.w == w {
		return
	}
	c.watcher.Store(&watcherRef{w: w})
	c.Bound.SetOnInput(c.inputArrived)
}

func (c *PolledConn) inputArrived() {
	if r := c.watcher.Load(); r != nil {
		r.w.ServerInput()
	}
}

// tryWrite writes p straight to the socket without waiting and returns
// how much the kernel took. The caller is the connection's only writer and
// netpoll's output buffer is empty (every other write waits until it
// drained), so nothing is reordered.
//
// With more, the kernel holds what it took until the next write
// (connio.WriteNowMore).
func (c *PolledConn) tryWrite(p []byte, more bool) (int, error) {
	if !c.Enter() {
		return 0, net.ErrClosed
	}
	defer c.Exit()
	if room := WriteRoom.Load(); room != 0 && int64(len(p)) > max(room, 0) {
		if room < 0 {
			return 0, nil
		}
		p = p[:room]
	}
	if more {
		return connio.WriteNowMore(c.FD, p)
	}
	return connio.WriteNow(c.FD, p)
}

// serverWriteRoom, when not zero, is how many bytes tryWrite lets a server
// socket take at once (-1: none), as a socket with that little room in its
// buffer would: tests set it to run the paths that hand the rest of a
// request to a goroutine. It is zero outside tests.
var WriteRoom atomic.Int64

// Enter counts a use of the connection's buffers in progress (a Read, a
// Write, a view of its input) and reports whether the connection is still
// open; a Close meanwhile only shuts the socket down, and the last Exit
// closes the netpoll connection. Each Enter that returned true is paired
// with one Exit.
func (c *PolledConn) Enter() bool {
	if c.busy.Add(1)&(npClosing|npClosed) != 0 {
		c.Exit()
		return false
	}
	return true
}

// Exit ends a use Enter counted.
func (c *PolledConn) Exit() {
	if c.busy.Add(-1) == npClosing {
		c.closeNetpoll()
	}
}

// closeNetpoll closes the netpoll connection once; from inside the
// connection's own read hook (on the poller, where netpoll's Close would
// wait for the hook to end) a pooled goroutine closes it.
func (c *PolledConn) closeNetpoll() {
	if c.busy.CompareAndSwap(npClosing, npClosing|npClosed) {
		if c.Bound.InInput() {
			connio.Tasks.Run(nil, func() { _ = c.Connection.Close() })
			return
		}
		_ = c.Connection.Close()
	}
}

func (c *PolledConn) Read(p []byte) (int, error) {
	if !c.Enter() {
		return 0, net.ErrClosed
	}
	defer c.Exit()
	if c.Connection.Reader().Len() == 0 {
		c.Bound.BeforeWait(1)
	}
	n, err := c.Connection.Read(p)
	c.Bound.AfterConsume()
	return n, err
}

// Write sends p, straight to the socket when the kernel takes it at once
// (netpoll's output buffer is empty between writes: each Write and
// SendLent waits until its bytes are out), else the rest through
// netpoll, waiting. So a connection that only ever wrote small requests
// (a login, then statements on the poller) holds no output buffer node
// while idle.
func (c *PolledConn) Write(p []byte) (int, error) {
	if !c.Enter() {
		return 0, net.ErrClosed
	}
	defer c.Exit()
	n, err := connio.WriteNow(c.FD, p)
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
func (c *PolledConn) peekInput(n int) ([]byte, error) {
	in := c.Connection.Reader()
	if in.Len() < n {
		c.Bound.BeforeWait(n)
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
func (c *PolledConn) LendOutput(n int) ([]byte, error) {
	if !c.Enter() {
		return nil, net.ErrClosed
	}
	b, err := c.Connection.Writer().Malloc(n)
	if err != nil {
		c.Exit()
	}
	return b, err
}

// SendLent flushes what LendOutput lent; it must follow each LendOutput
// that returned no error, once.
func (c *PolledConn) SendLent() error {
	defer c.Exit()
	return c.Bound.Flush()
}

// SetDeadline sets netpoll's deadlines; clearing them (the end of a
// login, on the goroutine that read it) also lets go of the read timer
// netpoll would otherwise keep for the connection's life.
func (c *PolledConn) SetDeadline(t time.Time) error {
	err := c.Connection.SetDeadline(t)
	if t.IsZero() {
		npbound.DropReadTimer(c.Connection)
	}
	return err
}

// Close shuts the socket down and closes the netpoll connection now, or
// when the Read or Write in progress returns. Any goroutine.
func (c *PolledConn) Close() error {
	for {
		old := c.busy.Load()
		if old&npClosing != 0 {
			return nil
		}
		if c.busy.CompareAndSwap(old, old|npClosing) {
			if old == 0 {
				c.closeNetpoll()
			} else {
				_ = unix.Shutdown(c.FD, unix.SHUT_RDWR)
			}
			if r := c.watcher.Load(); r != nil {
				r.w.ServerHungUp()
			}
			return nil
		}
	}
}

// peerClosed reports, without a system call, whether the server hung up
// or sent bytes outside a response.
func (c *PolledConn) peerClosed() bool {
	return !c.Connection.IsActive() || c.Connection.Reader().Len() > 0
}

// Buffered is what the server sent that nobody read yet.
func (c *PolledConn) Buffered() int { return c.Connection.Reader().Len() }
