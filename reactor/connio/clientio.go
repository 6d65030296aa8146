package connio

import (
	"errors"
	"io"
	"net"
	"time"

	"github.com/bytedance/gopkg/lang/mcache"
)

// ClientIO is the client side of a session during the command phase. Only
// the goroutine running the session's current command calls its methods,
// except Close, which any goroutine may call to interrupt it.
//
// Slices returned by Peek and Next are borrowed: they stay valid until
// Release or the next call of any other method.
type ClientIO interface {
	// Peek returns the next n bytes without consuming them, waiting until
	// they arrive.
	Peek(n int) ([]byte, error)
	// Next returns and consumes the next n bytes, waiting until they arrive.
	Next(n int) ([]byte, error)
	// Release ends the use of consumed bytes.
	Release()
	// Buffered is the number of bytes received and not yet consumed.
	Buffered() int
	// Write queues p; p must stay unchanged until Flush returns.
	Write(p []byte) error
	// Flush sends everything queued, as the end of a response, and waits
	// until the kernel took it.
	Flush() error
	// FlushMore sends everything queued as part of a response that goes
	// on (for OB 2.0 framing: without the LAST flag).
	FlushMore() error
	// Close closes the connection; blocked calls return an error.
	Close() error
	// Transport names the implementation ("netpoll", "net", "tls").
	Transport() string
}

// ClientReadTimeout bounds the wait for the rest of a packet once its first
// byte arrived (MySQL's net_read_timeout). Idle waits are not bounded.
const ClientReadTimeout = 30 * time.Second

// ClientWriteTimeout bounds a write to a client that does not read (MySQL's
// net_write_timeout).
const ClientWriteTimeout = 60 * time.Second

// NetClient runs a session's command phase on a net.Conn (TLS clients,
// client_io_mode=net, tests). Its read buffer comes from the pool and grows
// up to ChunkSize; bigger packets are read by the caller in pieces.
type NetClient struct {
	conn      net.Conn
	buf       []byte // buf[r:w] holds unconsumed bytes
	r, w      int
	out       net.Buffers
	outBacker [][]byte
	name      string
}

func NewNetClient(conn net.Conn, name string) *NetClient {
	return &NetClient{conn: conn, name: name, buf: mcache.Malloc(16 << 10)}
}

var errPeekTooLarge = errors.New("reactor: peek larger than the read buffer")

func (c *NetClient) fill(n int) error {
	if c.w-c.r >= n {
		return nil
	}
	if n > ChunkSize {
		return errPeekTooLarge
	}
	if n > len(c.buf)-c.r {
		if n > len(c.buf) {
			nb := mcache.Malloc(max(n, 2*len(c.buf)))
			copy(nb, c.buf[c.r:c.w])
			mcache.Free(c.buf)
			c.buf = nb
		} else {
			copy(c.buf, c.buf[c.r:c.w])
		}
		c.w -= c.r
		c.r = 0
	}
	waiting := c.w > c.r
	for c.w-c.r < n {
		if waiting {
			_ = c.conn.SetReadDeadline(time.Now().Add(ClientReadTimeout))
		}
		k, err := c.conn.Read(c.buf[c.w:])
		c.w += k
		if err != nil {
			if waiting && c.w-c.r < n {
				_ = c.conn.SetReadDeadline(time.Time{})
			}
			if err == io.EOF && c.w-c.r > 0 {
				err = io.ErrUnexpectedEOF
			}
			return err
		}
		if !waiting && c.w-c.r < n {
			waiting = true
		}
	}
	if waiting {
		_ = c.conn.SetReadDeadline(time.Time{})
	}
	return nil
}

func (c *NetClient) Peek(n int) ([]byte, error) {
	if err := c.fill(n); err != nil {
		return nil, err
	}
	return c.buf[c.r : c.r+n], nil
}

func (c *NetClient) Next(n int) ([]byte, error) {
	p, err := c.Peek(n)
	if err == nil {
		c.r += n
	}
	return p, err
}

func (c *NetClient) Release() {
	if c.r == c.w {
		c.r, c.w = 0, 0
	}
}

func (c *NetClient) Buffered() int { return c.w - c.r }

func (c *NetClient) Write(p []byte) error {
	c.out = append(c.out, p)
	return nil
}

func (c *NetClient) Flush() error {
	if len(c.out) == 0 {
		return nil
	}
	c.outBacker = c.out[:0]
	_ = c.conn.SetWriteDeadline(time.Now().Add(ClientWriteTimeout))
	_, err := c.out.WriteTo(c.conn)
	for i := range c.outBacker[:cap(c.outBacker)] {
		c.outBacker[:cap(c.outBacker)][i] = nil
	}
	c.out = c.outBacker[:0]
	return err
}

func (c *NetClient) FlushMore() error { return c.Flush() }

func (c *NetClient) Close() error { return c.conn.Close() }

func (c *NetClient) Transport() string { return c.name }

// Free returns the read buffer; called once when the session is torn down.
func (c *NetClient) Free() {
	if c.buf != nil {
		mcache.Free(c.buf)
		c.buf = nil
	}
}
