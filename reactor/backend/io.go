package backend

import (
	"net"

	"obgate/mysqlproto"
	"obgate/reactor/connio"
)

// serverIO moves a logged-in server session's bytes: requests out,
// response bytes in, and what liveness asks between statements. The
// implementations below run on the session's net.Conn: a plain socket
// read in bounded pieces, so that TCP pushes back on a server whose client
// is slow, or a netpoll connection (PolledConn), which keeps that bound
// by pausing its reads and answers peerClosed from its close events.
//
// Only the goroutine running the owning client session's command calls
// these methods. Closing the connection (Conn.Close, any goroutine)
// makes blocked calls return an error.
type serverIO interface {
	// writeRequest sends one piece of a request; first starts a new
	// request, last ends it. p is not kept.
	writeRequest(p []byte, first, last bool) error
	// read copies response bytes (MySQL packets, unframed and verified)
	// into p, waiting until some arrive.
	read(p []byte) (int, error)
	// buffered is the number of bytes received and not yet returned by
	// read. Between responses anything buffered means the session is out
	// of step with the server.
	buffered() int
	// peerClosed reports, without waiting, whether the server closed or
	// reset the connection, or sent bytes nobody asked for (an error
	// before it closes): either way the session cannot carry a request.
	peerClosed() bool
}

var (
	_ serverIO = (*plainServerIO)(nil)
	_ serverIO = (*ob20ServerIO)(nil)
	_ serverIO = (*compServerIO)(nil)
)

// plainServerIO speaks MySQL packets as they are (mysql routing mode, and
// OceanBase servers without OB 2.0 or compression).
type plainServerIO struct {
	conn net.Conn
	peek peeker
}

func (p *plainServerIO) writeRequest(b []byte, _, _ bool) error {
	_, err := p.conn.Write(b)
	return err
}

func (p *plainServerIO) read(b []byte) (int, error) { return p.conn.Read(b) }
func (p *plainServerIO) buffered() int              { return connBuffered(p.conn) }
func (p *plainServerIO) peerClosed() bool           { return p.peek.peerClosed(p.conn) }

// ob20ServerIO frames requests as OB 2.0 (the first frame of each request
// carries the trace info) and unframes responses. On a netpoll connection
// the framer encodes requests straight into the connection's output
// buffer (PolledConn lends it), and read unframes a response frame from
// the connection's input buffer where the poller put it (readInPlace),
// copying its packets only into the caller's p. Otherwise the framer reads
// ahead at most one pooled chunk (see mysqlproto.OB20Framer.SetReadBuffer):
// a small response arrives, header and payload, with one read.
type ob20ServerIO struct {
	conn  net.Conn
	np    *PolledConn // conn, when it is on netpoll
	fr    *mysqlproto.OB20Framer
	extra []byte               // extra info sent with the first frame of each request
	flags mysqlproto.OB20Flags // flags of every request frame but LAST
	peek  peeker
}

func newOB20ServerIO(conn net.Conn, fr *mysqlproto.OB20Framer, extra []byte, caps mysqlproto.OBCapability) *ob20ServerIO {
	fr.SetReadBuffer(connio.ChunkSize, chunkPool{})
	var flags mysqlproto.OB20Flags
	if caps.Has(mysqlproto.OBCapProxyNewExtraInfo) {
		flags = mysqlproto.OB20NewExtraInfo
	}
	o := &ob20ServerIO{conn: conn, fr: fr, extra: extra, flags: flags}
	o.np, _ = conn.(*PolledConn)
	return o
}

func (o *ob20ServerIO) writeRequest(p []byte, first, last bool) error {
	var extra []byte
	if first {
		o.fr.BeginRequest()
		extra = o.extra
	}
	flags := o.flags
	if last {
		flags |= mysqlproto.OB20LastPacket
	}
	return o.fr.WriteFrame(p, extra, flags)
}

func (o *ob20ServerIO) read(p []byte) (int, error) {
	if o.np != nil && o.fr.Buffered() == 0 {
		if n, done, err := o.readInPlace(p); done {
			return n, err
		}
	}
	return o.fr.Read(p)
}

// readInPlace unframes the next frames from the netpoll connection's input
// buffer until one carries packet bytes, and copies them into p. A frame
// whose payload could overflow p, or that netpoll would have to gather
// from many buffer nodes (over maxView bytes), is left where it is for the
// framer's own reader (done false): what cannot be handed out at once
// would otherwise have to stay pinned in netpoll's buffer between calls.
func (o *ob20ServerIO) readInPlace(p []byte) (n int, done bool, err error) {
	c := o.np
	if !c.Enter() {
		return 0, true, net.ErrClosed
	}
	defer c.Exit()
	in := c.Connection.Reader()
	for {
		hdr, err := c.peekInput(mysqlproto.OB20FrameHeaderLen)
		if err != nil {
			return 0, true, err
		}
		size, _ := mysqlproto.OB20FrameLen(hdr)
		if size-mysqlproto.OB20FrameOverhead > len(p) || size > MaxView {
			return 0, false, nil
		}
		frame, err := c.peekInput(size)
		if err != nil {
			return 0, true, err
		}
		_, _, packets, err := o.fr.AcceptFrame(frame)
		if err != nil {
			return 0, true, err
		}
		n = copy(p, packets)
		_ = in.Skip(size)
		_ = in.Release()
		c.Bound.AfterConsume()
		if n > 0 {
			return n, true, nil
		}
	}
}

func (o *ob20ServerIO) buffered() int    { return o.fr.Buffered() + connBuffered(o.conn) }
func (o *ob20ServerIO) peerClosed() bool { return o.peek.peerClosed(o.conn) }

// compServerIO speaks the MySQL compressed protocol (OceanBase servers
// that granted CHECKSUM instead of OB 2.0).
type compServerIO struct {
	conn net.Conn
	fr   *mysqlproto.CompressedFramer
	peek peeker
}

func (c *compServerIO) writeRequest(p []byte, first, _ bool) error {
	if first {
		c.fr.BeginRequest()
	}
	_, err := c.fr.Write(p)
	return err
}

func (c *compServerIO) read(p []byte) (int, error) { return c.fr.Read(p) }
func (c *compServerIO) buffered() int              { return c.fr.Buffered() + connBuffered(c.conn) }
func (c *compServerIO) peerClosed() bool           { return c.peek.peerClosed(c.conn) }

// connBuffered is what conn received and nobody read yet: what a netpoll
// connection holds in its input buffer (a net.Conn holds nothing).
func connBuffered(conn net.Conn) int {
	if c, ok := conn.(*PolledConn); ok {
		return c.Buffered()
	}
	return 0
}

// chunkPool lends framers the pooled response chunks (connio.GetChunk/connio.PutChunk).
type chunkPool struct{}

func (chunkPool) Get(n int) []byte { return connio.GetChunk(n) }
func (chunkPool) Put(b []byte)     { connio.PutChunk(b) }
