package reactor

// Reading a client's packet past the bytes the command path peeked at:
// relayed to the server, skipped, or read whole. Each follows a logical
// packet across its 16 MiB continuation packets.

import (
	"encoding/binary"

	"obgate/mysqlproto"
)

// readPacket reads one whole logical packet from the client into a new
// buffer (header of the first physical packet included, continuation
// headers removed), bounded by max_packet_size.
func (s *Session) readPacket(n int) ([]byte, error) {
	return s.readPacketTo(nil, n)
}

// readPacketTo is readPacket appending to dst[:0], whose memory it reuses
// when big enough.
func (s *Session) readPacketTo(dst []byte, n int) ([]byte, error) {
	out := dst[:0]
	if cap(out) < mysqlproto.HeaderLen+n {
		out = make([]byte, 0, mysqlproto.HeaderLen+n)
	}
	hdr, err := s.client.Next(mysqlproto.HeaderLen)
	if err != nil {
		return nil, quit(QuitClientNetwork, err)
	}
	out = append(out, hdr...)
	s.client.Release()
	total := 0
	for {
		total += n
		if int64(total) > s.cfg.MaxPacketSize {
			return nil, quitWith(QuitClientProto, mysqlproto.ErrPacketTooLarge,
				mysqlproto.NewSQLError(mysqlproto.ERNetPacketTooLarge, "Got a packet bigger than 'max_packet_size' bytes"))
		}
		for rem := n; rem > 0; {
			k := min(rem, chunkSize)
			p, err := s.client.Next(k)
			if err != nil {
				return nil, quit(QuitClientNetwork, err)
			}
			out = append(out, p...)
			s.client.Release()
			rem -= k
		}
		if n < mysqlproto.MaxPayloadLen {
			break
		}
		h, err := s.client.Next(mysqlproto.HeaderLen)
		if err != nil {
			return nil, quit(QuitClientNetwork, err)
		}
		n, _ = mysqlproto.ParseHeader(h)
		s.client.Release()
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
func (s *Session) skipPacket(n int) error {
	for {
		for rem := mysqlproto.HeaderLen + n; rem > 0; {
			k := min(rem, chunkSize)
			if _, err := s.client.Next(k); err != nil {
				return quit(QuitClientNetwork, err)
			}
			s.client.Release()
			rem -= k
		}
		if n < mysqlproto.MaxPayloadLen {
			return nil
		}
		hdr, err := s.client.Peek(mysqlproto.HeaderLen)
		if err != nil {
			return quit(QuitClientNetwork, err)
		}
		n, _ = mysqlproto.ParseHeader(hdr)
	}
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
	total := 0
	first := true
	for {
		total += n
		if int64(total) > s.cfg.MaxPacketSize {
			return sent, quitWith(QuitClientProto, mysqlproto.ErrPacketTooLarge,
				mysqlproto.NewSQLError(mysqlproto.ERNetPacketTooLarge, "Got a packet bigger than 'max_packet_size' bytes"))
		}
		for rem := mysqlproto.HeaderLen + n; rem > 0; {
			k := min(rem, chunkSize)
			p, err := s.client.Next(k)
			if err != nil {
				return sent, quit(QuitClientNetwork, err)
			}
			if first && s.st.patchOn && len(p) >= mysqlproto.HeaderLen+5 {
				binary.LittleEndian.PutUint32(p[mysqlproto.HeaderLen+1:], s.st.patchID)
			}
			last := k == rem && n < mysqlproto.MaxPayloadLen
			err = s.backend.writeRequest(p, first, last)
			if err != nil && first && last {
				err = s.side.refusedWrite(p, err)
			}
			if keep && first && last && err == nil {
				s.st.kept = p
			} else {
				s.client.Release()
			}
			if err != nil && first && last {
				// Nothing of a one-piece request reached the server.
				return sent, s.side.brokeBeforeAnswer(err)
			}
			if err != nil {
				return sent, quitWith(QuitServerNetwork, err, lostServer(s.backend.addr))
			}
			first = false
			sent += int64(k)
			rem -= k
		}
		if n < mysqlproto.MaxPayloadLen {
			return sent, nil
		}
		hdr, err := s.client.Peek(mysqlproto.HeaderLen)
		if err != nil {
			return sent, quit(QuitClientNetwork, err)
		}
		n, _ = mysqlproto.ParseHeader(hdr)
	}
}
