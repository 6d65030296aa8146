package connio

import (
	"net"
	"sync/atomic"

	"github.com/cloudwego/netpoll"
	"golang.org/x/sys/unix"

	"obgate/internal/npbound"
)

// NetpollClient runs a session's command phase on a netpoll connection.
// netpoll reads ahead into its own buffers on the poller goroutine; Peek
// and Next are zero-copy when the bytes sit in one buffer node, and Write
// copies payloads up to 4 KiB and references larger ones until Flush. A
// client that pipelines statements faster than its server answers them
// is not read further once clientInputHigh bytes wait (rb), until its
// session consumed them.
//
// netpoll never runs the close callbacks while an OnRequest call is in
// progress, so buffers are not freed under a running command; Close from
// another goroutine makes pending reads and Flush fail instead.
type NetpollClient struct {
	conn netpoll.Connection
	rb   *npbound.Bound // nil when netpoll's layout is not the expected one
}

// PollerSafeCloser closes a client connection the poller drives: from
// inside the connection's own read hook (where netpoll's Close would wait
// for the hook to end) on a pooled goroutine, else at once.
type PollerSafeCloser struct {
	conn netpoll.Connection
	rb   *npbound.Bound
}

// NewNetpollClient serves a client connection on netpoll; rb bounds its
// input (nil when netpoll's layout is not the one npbound knows).
func NewNetpollClient(conn netpoll.Connection, rb *npbound.Bound) *NetpollClient {
	return &NetpollClient{conn: conn, rb: rb}
}

// Conn is the netpoll connection.
func (c *NetpollClient) Conn() netpoll.Connection { return c.conn }

// Bound is the connection's input bound; nil without one.
func (c *NetpollClient) Bound() *npbound.Bound { return c.rb }

// NewPollerSafeCloser closes conn, whose input rb bounds, safely from its
// own read hook.
func NewPollerSafeCloser(conn netpoll.Connection, rb *npbound.Bound) *PollerSafeCloser {
	return &PollerSafeCloser{conn: conn, rb: rb}
}

// Conn is the connection it closes.
func (c *PollerSafeCloser) Conn() netpoll.Connection { return c.conn }

func (c *PollerSafeCloser) Close() error {
	if c.rb.InInput() {
		Tasks.Run(nil, func() { _ = c.conn.Close() })
		return nil
	}
	return c.conn.Close()
}

// TryWrite writes p straight to the client's socket without waiting (the
// poller's writes) and returns how much the kernel took. The session's
// command owner is the only writer, and netpoll's output buffer is empty
// whenever it calls this (every other write waits until it drained).
func (c *NetpollClient) TryWrite(p []byte) (int, error) {
	if !c.conn.IsActive() {
		return 0, net.ErrClosed
	}
	if room := ClientWriteRoom.Load(); room != 0 && int64(len(p)) > max(room, 0) {
		if room < 0 {
			return 0, nil
		}
		p = p[:room]
	}
	return WriteNow(c.rb.FD(), p)
}

// ClientWriteRoom, when not zero, is how many bytes TryWrite lets a client
// socket take at once (-1: none), as reactor's serverWriteRoom does for
// servers: tests set it (reactor's SetClientWriteRoom) to run the paths
// that hand the rest of an answer to a goroutine. It is zero outside
// tests.
var ClientWriteRoom atomic.Int64

// Shutdown shuts the socket down, which fails the owner's reads and
// writes and tells the poller the client is gone, without freeing what
// the owner may be using (netpoll frees buffers at Close). Any goroutine.
func (c *NetpollClient) Shutdown() {
	if c.conn.IsActive() {
		_ = unix.Shutdown(c.rb.FD(), unix.SHUT_RDWR)
	}
}

func (c *NetpollClient) Peek(n int) ([]byte, error) {
	r := c.conn.Reader()
	if c.rb != nil && r.Len() < n {
		c.rb.BeforeWait(n)
	}
	return r.Peek(n)
}

func (c *NetpollClient) Next(n int) ([]byte, error) {
	r := c.conn.Reader()
	if c.rb != nil && r.Len() < n {
		c.rb.BeforeWait(n)
	}
	return r.Next(n)
}

func (c *NetpollClient) Release() {
	_ = c.conn.Reader().Release()
	if c.rb != nil {
		c.rb.AfterConsume()
	}
}

func (c *NetpollClient) Buffered() int { return c.conn.Reader().Len() }

func (c *NetpollClient) Write(p []byte) error {
	_, err := c.conn.Writer().WriteBinary(p)
	return err
}

// Flush sends the output; through the bound, which lends the connection
// a full set of write vectors for the call only (npbound's barrier.go).
func (c *NetpollClient) Flush() error {
	if c.rb != nil {
		return c.rb.Flush()
	}
	return c.conn.Writer().Flush()
}

func (c *NetpollClient) FlushMore() error { return c.Flush() }

func (c *NetpollClient) Close() error { return c.conn.Close() }

func (c *NetpollClient) Transport() string { return "netpoll" }
