package reactor

// The client connection's packet I/O (clientConn): a packet read whole,
// skipped or relayed to the server past the bytes the command path peeked
// at, each walking the logical packet across its 16 MiB continuation
// packets with eachPiece; obgate's own packets written; the transport's
// OB 2.0 layer, buffers and close.

import (
	"encoding/binary"
	"errors"

	"obgate/mysqlproto"
)

// pieceFunc is given each piece of a logical client packet (eachPiece):
// p is borrowed from the client buffer; starts says p begins with a
// physical packet's header; first and last say it is the logical packet's
// first or last piece. It reports whether it keeps p in the client buffer
// (released later by the caller) instead of letting it go now.
type pieceFunc func(p []byte, starts, first, last bool) (keep bool, err error)

// eachPiece walks one logical client packet whose header says n payload
// bytes in pieces of at most chunkSize, giving each to fn. A packet longer
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
			k := min(rem, chunkSize)
			p, err := c.client.Next(k)
			if err != nil {
				return quit(QuitClientNetwork, err)
			}
			last := k == rem && n < mysqlproto.MaxPayloadLen
			keep, err := fn(p, starts, first, last)
			if !keep {
				c.client.Release()
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
		hdr, err := c.client.Peek(mysqlproto.HeaderLen)
		if err != nil {
			return quit(QuitClientNetwork, err)
		}
		n, _ = mysqlproto.ParseHeader(hdr)
	}
}

// readPacket reads one whole logical packet from the client into a new
// buffer (header of the first physical packet included, continuation
// headers removed), bounded by max_packet_size.
func (s *Session) readPacket(n int) ([]byte, error) {
	return s.readPacketTo(nil, n, s.cfg.MaxPacketSize)
}

// readPacketTo is readPacket appending to dst[:0], whose memory it reuses
// when big enough, bounded by limit.
func (c *clientConn) readPacketTo(dst []byte, n int, limit int64) ([]byte, error) {
	out := dst[:0]
	if cap(out) < mysqlproto.HeaderLen+n {
		out = make([]byte, 0, mysqlproto.HeaderLen+n)
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

// relayPacket streams one logical client packet (whose header says n
// payload bytes, continuation packets included) to the server, in pieces of
// at most chunkSize, without holding it whole. It returns the number of
// bytes sent. Errors are sessionErrors: a client failure closes the
// session; a server failure gets the client an ERR (nothing was answered
// yet) and closes it too.
//
// In OceanBase mode each piece goes out as an OB20 frame when the server
// session speaks OB 2.0, a statement id set in patchID is written into the
// first piece, and a one-piece request whose write fails outside a
// transaction is sent to another server session instead: a server that
// refused the bytes cannot have run them.
//
// With keep, a one-piece request is not released after it went out: it
// stays in the client buffer as s.st.kept until the first byte of its answer
// reaches the client (releaseKept), so that it can be sent again to
// another server. Larger requests are streamed and cannot be resent.
func (s *Session) relayPacket(n int, keep bool) (int64, error) {
	var sent int64
	var broke error // the failed write of a one-piece request
	err := s.eachPiece(n, s.cfg.MaxPacketSize, func(p []byte, _, first, last bool) (bool, error) {
		if first && s.st.patchOn && len(p) >= mysqlproto.HeaderLen+5 {
			binary.LittleEndian.PutUint32(p[mysqlproto.HeaderLen+1:], s.st.patchID)
		}
		err := s.backend.writeRequest(p, first, last)
		if err != nil && first && last {
			err = s.side.refusedWrite(p, err)
		}
		if err != nil && first && last {
			broke = err
			return false, errPieceNotSent
		}
		if err != nil {
			return false, quitWith(QuitServerNetwork, err, lostServer(s.backend.addr))
		}
		sent += int64(len(p))
		if keep && first && last {
			s.st.kept = p
			return true, nil
		}
		return false, nil
	})
	if broke != nil {
		// Nothing of a one-piece request reached the server.
		return sent, s.side.brokeBeforeAnswer(broke)
	}
	return sent, err
}

// errPieceNotSent stops relayPacket's walk when a one-piece request could
// not be written.
var errPieceNotSent = errors.New("request not sent")

// writePacket sends one packet answering the current command, with the
// next sequence id.
func (c *clientConn) writePacket(payload []byte) error {
	var out []byte
	out, c.replySeq = mysqlproto.AppendPacket(make([]byte, 0, len(payload)+mysqlproto.HeaderLen), c.replySeq, payload)
	if err := c.client.Write(out); err != nil {
		return quit(QuitClientNetwork, err)
	}
	if err := c.client.Flush(); err != nil {
		return quit(QuitClientNetwork, err)
	}
	return nil
}

// closeTransport closes the client connection through whichever layer
// holds it now. Any goroutine may call it.
func (c *clientConn) closeTransport() {
	if cl := c.clientCloser.Load(); cl != nil {
		_ = cl.Close()
	}
}

// wrapClientOB20 puts OB 2.0 framing on the client transport when the
// login negotiated it.
func (c *clientConn) wrapClientOB20(id uint32) {
	if c.clientOBCaps.Has(mysqlproto.OBCapProtocolV2) {
		c.ob20Client = newOB20ClientIO(c.client, id)
		c.client = c.ob20Client
	}
}

// freeBuffers gives the transports' buffers back once the session is
// torn down.
func (c *clientConn) freeBuffers() {
	if c.netClient != nil {
		c.netClient.free()
	}
	if c.ob20Client != nil {
		c.ob20Client.free()
	}
}
