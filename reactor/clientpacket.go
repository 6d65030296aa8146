package reactor

// The client connection's packet I/O (clientConn): a packet read whole,
// skipped, or relayed to the server (statement.relayPacket) past the bytes
// the command path peeked at, each walking the logical packet across its
// 16 MiB continuation packets with eachPiece; obgate's own packets
// written; the transport's OB 2.0 layer, buffers and close.

import (
	"obgate/config"
	"obgate/mysqlproto"
	"obgate/reactor/connio"
)

// pieceFunc is given each piece of a logical client packet (eachPiece):
// p is borrowed from the client buffer; starts says p begins with a
// physical packet's header; first and last say it is the logical packet's
// first or last piece. It reports whether it keeps p in the client buffer
// (released later by the caller) instead of letting it go now.
type pieceFunc func(p []byte, starts, first, last bool) (keep bool, err error)

// eachPiece walks one logical client packet whose header says n payload
// bytes in pieces of at most connio.ChunkSize, giving each to fn. A packet longer
// than limit bytes (max_packet_size; 0 for no limit) ends the session with
// ERR 1153 before that part of it is read. A client failure ends the
// session; fn's error is returned as it is, after its piece was released
// (unless kept). Only the goroutine running the session's command calls
// it, as every method of clientConn that reads or writes.
func (c *clientConn) eachPiece(n int, limit int64, fn pieceFunc) error {
	total := 0
	first := true
	for {
		total += n
		if limit > 0 && int64(total) > limit {
			return quitWith(QuitClientProto, mysqlproto.ErrPacketTooLarge,
				mysqlproto.NewSQLError(mysqlproto.ERNetPacketTooLarge, "Got a packet bigger than 'max_packet_size' bytes"))
		}
		starts := true
		for rem := mysqlproto.HeaderLen + n; rem > 0; {
			k := min(rem, connio.ChunkSize)
			p, err := c.io.Next(k)
			if err != nil {
				return quit(QuitClientNetwork, err)
			}
			last := k == rem && n < mysqlproto.MaxPayloadLen
			keep, err := fn(p, starts, first, last)
			if !keep {
				c.io.Release()
			}
			if err != nil {
				return err
			}
			first, starts = false, false
			rem -= k
		}
		if n < mysqlproto.MaxPayloadLen {
			return nil
		}
		hdr, err := c.io.Peek(mysqlproto.HeaderLen)
		if err != nil {
			return quit(QuitClientNetwork, err)
		}
		n, _ = mysqlproto.ParseHeader(hdr)
	}
}

// readPacket reads one whole logical packet from the client into a new
// buffer (header of the first physical packet included, continuation
// headers removed), bounded by heldCommandLimit.
func (s *Session) readPacket(n int) ([]byte, error) {
	return s.client.readPacketTo(nil, n, heldCommandLimit(s.cfg))
}

// heldCommandLimit is the largest command obgate holds in memory whole:
// client_max_memory_size, or max_packet_size when that is smaller. Only
// the goroutine serving the session's command calls it.
func heldCommandLimit(cfg *config.Config) int64 {
	return min(cfg.ClientMaxMemorySize, cfg.MaxPacketSize)
}

// firstReadCap bounds the memory readPacketTo sets aside before the
// packet's bytes arrive: the announced length is the client's claim, and
// the buffer grows as the bytes come.
const firstReadCap = 64 << 10

// readPacketTo is readPacket appending to dst[:0], whose memory it reuses
// when big enough, bounded by limit.
func (c *clientConn) readPacketTo(dst []byte, n int, limit int64) ([]byte, error) {
	out := dst[:0]
	if want := mysqlproto.HeaderLen + min(n, firstReadCap); cap(out) < want {
		out = make([]byte, 0, want)
	}
	err := c.eachPiece(n, limit, func(p []byte, starts, first, _ bool) (bool, error) {
		if starts && !first {
			p = p[mysqlproto.HeaderLen:] // a continuation's header
		}
		out = append(out, p...)
		return false, nil
	})
	if err != nil {
		return nil, err
	}
	payloadLen := len(out) - mysqlproto.HeaderLen
	if payloadLen >= mysqlproto.MaxPayloadLen {
		// Re-frame: the caller sends it as one logical packet.
		framed, _ := mysqlproto.AppendPacket(nil, 0, out[mysqlproto.HeaderLen:])
		return framed, nil
	}
	return out, nil
}

// skipPacket consumes one logical packet of n payload bytes (continuations
// included) from the client without forwarding it.
func (c *clientConn) skipPacket(n int) error {
	return c.eachPiece(n, 0, func([]byte, bool, bool, bool) (bool, error) { return false, nil })
}

// writePacket sends one packet answering the current command, with the
// next sequence id.
func (c *clientConn) writePacket(payload []byte) error {
	var out []byte
	out, c.replySeq = mysqlproto.AppendPacket(make([]byte, 0, len(payload)+mysqlproto.HeaderLen), c.replySeq, payload)
	if err := c.io.Write(out); err != nil {
		return quit(QuitClientNetwork, err)
	}
	if err := c.io.Flush(); err != nil {
		return quit(QuitClientNetwork, err)
	}
	return nil
}

// closeTransport closes the client connection through whichever layer
// holds it now. Any goroutine may call it.
func (c *clientConn) closeTransport() {
	if cl := c.closer.Load(); cl != nil {
		_ = cl.Close()
	}
}

// wrapClientOB20 puts OB 2.0 framing on the client transport when the
// login negotiated it.
func (c *clientConn) wrapClientOB20(id uint32) {
	if c.obCaps.Has(mysqlproto.OBCapProtocolV2) {
		c.ob20Client = connio.NewOB20Client(c.io, id)
		c.io = c.ob20Client
	}
}

// freeBuffers gives the transports' buffers back once the session is
// torn down.
func (c *clientConn) freeBuffers() {
	if c.netClient != nil {
		c.netClient.Free()
	}
	if c.ob20Client != nil {
		c.ob20Client.Free()
	}
}
