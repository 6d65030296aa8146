package connio

import (
	"io"

	"github.com/bytedance/gopkg/lang/mcache"

	"obgate/mysqlproto"
)

// OB20Client carries a session's command phase over OceanBase 2.0
// frames, for OceanBase drivers that asked for it when
// enable_ob_protocol_v2_with_client is on. It sits on the session's
// transport: requests are unframed (both checksums verified) into a
// buffer the command code peeks at as usual, and responses are framed
// with the request's id and the next sequence numbers, the final frame of
// each response flagged LAST.
//
// A request frame of up to ChunkSize bytes is unframed where the
// transport received it (unframeInPlace), so its packets are copied once,
// into in; larger ones go through the framer's reader. On netpoll the
// framer writes response frames straight into the connection's output
// buffer (npClientWriter).
//
// Like every ClientIO it is used by the goroutine running the command,
// except Close.
type OB20Client struct {
	raw  ClientIO
	fr   *mysqlproto.OB20Framer
	in   []byte // unframed request bytes; in[r:] not yet consumed
	r    int
	out  []byte // response bytes not yet framed
	sent bool   // a frame of the current response went out without LAST
}

func NewOB20Client(raw ClientIO, connID uint32) *OB20Client {
	c := &OB20Client{raw: raw}
	var w io.Writer = rawWriter{raw}
	if np, ok := raw.(*NetpollClient); ok {
		w = npClientWriter{np}
	}
	c.fr = mysqlproto.NewOB20Framer(rawReader{raw}, w, mysqlproto.FramerServer, connID)
	return c
}

// rawReader reads a transport's bytes as an io.Reader.
type rawReader struct{ c ClientIO }

func (rr rawReader) Read(p []byte) (int, error) {
	if _, err := rr.c.Peek(1); err != nil {
		return 0, err
	}
	n := min(len(p), rr.c.Buffered(), ChunkSize)
	b, err := rr.c.Next(n)
	if err != nil {
		return 0, err
	}
	copy(p, b)
	rr.c.Release()
	return n, nil
}

// rawWriter sends each write at once.
type rawWriter struct{ c ClientIO }

func (rw rawWriter) Write(p []byte) (int, error) {
	if err := rw.c.Write(p); err != nil {
		return 0, err
	}
	if err := rw.c.Flush(); err != nil {
		return 0, err
	}
	return len(p), nil
}

// npClientWriter lends a netpoll client's output buffer to the framer
// (mysqlproto.OutputLender). netpoll frees a connection's buffers only
// after the running command returned, so no guard is needed.
type npClientWriter struct{ c *NetpollClient }

func (w npClientWriter) Write(p []byte) (int, error) { return rawWriter{w.c}.Write(p) }

func (w npClientWriter) LendOutput(n int) ([]byte, error) { return w.c.conn.Writer().Malloc(n) }

func (w npClientWriter) SendLent() error { return w.c.Flush() }

func (c *OB20Client) fill(n int) error {
	for len(c.in)-c.r < n {
		if c.fr.Buffered() == 0 {
			if done, err := c.unframeInPlace(); done {
				if err != nil {
					return err
				}
				continue
			}
		}
		c.makeRoom(max(4096, n-(len(c.in)-c.r)))
		k, err := c.fr.Read(c.in[len(c.in):cap(c.in)])
		c.in = c.in[:len(c.in)+k]
		if err != nil && len(c.in)-c.r < n {
			return err
		}
	}
	return nil
}

// unframeInPlace appends the packets of the next frame to in, reading the
// frame where the transport buffered it. A frame over ChunkSize is left
// for the framer's reader (done false): the transports peek at most that
// much at once.
func (c *OB20Client) unframeInPlace() (done bool, err error) {
	hdr, err := c.raw.Peek(mysqlproto.OB20FrameHeaderLen)
	if err != nil {
		return true, err
	}
	size, _ := mysqlproto.OB20FrameLen(hdr)
	if size > ChunkSize {
		return false, nil
	}
	frame, err := c.raw.Peek(size)
	if err != nil {
		return true, err
	}
	_, _, packets, err := c.fr.AcceptFrame(frame)
	if err != nil {
		return true, err
	}
	c.makeRoom(len(packets))
	c.in = append(c.in, packets...)
	if _, err := c.raw.Next(size); err != nil {
		return true, err
	}
	c.raw.Release()
	return true, nil
}

// makeRoom moves the unconsumed bytes to the front of in and makes sure
// at least k more fit without growing it.
func (c *OB20Client) makeRoom(k int) {
	if c.r > 0 {
		c.in = c.in[:copy(c.in, c.in[c.r:])]
		c.r = 0
	}
	if cap(c.in)-len(c.in) < k {
		nb := mcache.Malloc(len(c.in), max(2*cap(c.in), len(c.in)+k, 16<<10))
		copy(nb, c.in)
		if cap(c.in) > 0 {
			mcache.Free(c.in)
		}
		c.in = nb
	}
}

func (c *OB20Client) Peek(n int) ([]byte, error) {
	if err := c.fill(n); err != nil {
		return nil, err
	}
	return c.in[c.r : c.r+n], nil
}

func (c *OB20Client) Next(n int) ([]byte, error) {
	p, err := c.Peek(n)
	if err == nil {
		c.r += n
	}
	return p, err
}

func (c *OB20Client) Release() {
	if c.r == len(c.in) {
		c.r = 0
		c.in = c.in[:0]
	}
}

func (c *OB20Client) Buffered() int { return len(c.in) - c.r + c.fr.Buffered() + c.raw.Buffered() }

func (c *OB20Client) Write(p []byte) error {
	c.out = append(c.out, p...)
	return nil
}

// FlushMore sends what is pending as a frame that the response continues.
func (c *OB20Client) FlushMore() error {
	if len(c.out) == 0 {
		return nil
	}
	err := c.fr.WriteFrame(c.out, nil, 0)
	c.out = c.out[:0]
	c.sent = true
	return err
}

// Flush ends the response: what is pending goes out as its LAST frame.
func (c *OB20Client) Flush() error {
	if len(c.out) == 0 && !c.sent {
		return nil
	}
	err := c.fr.WriteFrame(c.out, nil, mysqlproto.OB20LastPacket)
	if cap(c.out) > ChunkSize {
		c.out = nil
	} else {
		c.out = c.out[:0]
	}
	c.sent = false
	return err
}

func (c *OB20Client) Close() error { return c.raw.Close() }

func (c *OB20Client) Transport() string { return c.raw.Transport() + "+ob20" }

// Free returns the request buffer; called once at teardown.
func (c *OB20Client) Free() {
	if cap(c.in) > 0 {
		mcache.Free(c.in)
		c.in = nil
	}
}
