package reactor

import (
	"github.com/cloudwego/netpoll"
)

// netpollClientIO runs a session's command phase on a netpoll connection.
// netpoll reads ahead into its own buffers on the poller goroutine; Peek
// and Next are zero-copy when the bytes sit in one buffer node, and Write
// copies payloads up to 4 KiB and references larger ones until Flush.
// Because the poller keeps reading, a client that pipelines statements
// faster than the server answers them is buffered here without bound; the
// net transport (the default) stops reading instead.
//
// netpoll never runs the close callbacks while an OnRequest call is in
// progress, so buffers are not freed under a running command; Close from
// another goroutine makes pending reads and Flush fail instead.
type netpollClientIO struct {
	conn netpoll.Connection
}

func (c *netpollClientIO) Peek(n int) ([]byte, error) { return c.conn.Reader().Peek(n) }

func (c *netpollClientIO) Next(n int) ([]byte, error) { return c.conn.Reader().Next(n) }

func (c *netpollClientIO) Release() { _ = c.conn.Reader().Release() }

func (c *netpollClientIO) Buffered() int { return c.conn.Reader().Len() }

func (c *netpollClientIO) Write(p []byte) error {
	_, err := c.conn.Writer().WriteBinary(p)
	return err
}

func (c *netpollClientIO) Flush() error { return c.conn.Writer().Flush() }

func (c *netpollClientIO) FlushMore() error { return c.Flush() }

func (c *netpollClientIO) Close() error { return c.conn.Close() }

func (c *netpollClientIO) Transport() string { return "netpoll" }
