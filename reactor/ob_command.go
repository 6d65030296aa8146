package reactor

import (
	"context"
	"errors"
	"time"

	"obgate/mysqlproto"
	"obgate/route"
)

// obCommand runs the commands OceanBase mode handles itself: COM_PING
// (answered by obgate: a server session that broke is replaced anyway),
// COM_CHANGE_USER and COM_SET_OPTION (applied to every server session). It
// reports false for the others, which the common path routes and forwards.
func (s *Session) obCommand(cmd mysqlproto.Command, n int, body []byte, whole bool, start time.Time) (bool, error) {
	switch cmd {
	case mysqlproto.ComPing:
		if err := s.skipPacket(n); err != nil {
			return true, err
		}
		return true, s.writeOK(0, "")
	case mysqlproto.ComChangeUser:
		return true, s.obChangeUser(n, start)
	case mysqlproto.ComSetOption:
		return true, s.obSetOption(n, body, whole, start)
	}
	return false, nil
}

// routeStatement picks and prepares the server session for a statement and
// makes it current. A server session whose sync step fails is dropped and
// another one tried, its server put last (nothing of the statement was
// sent yet), up to three times.
func (s *Session) routeStatement(need routeNeed) (*serverConn, error) {
	// Each connection attempt has its own short_async_task_timeout (see
	// openServer), so one hung server does not use up the others' time.
	ctx := context.Background()
	var lastErr error
	for range 3 {
		be, err := s.pickServer(ctx, need)
		if err != nil {
			return nil, err
		}
		if err := s.syncServer(be); err != nil {
			inTrans, pinned := s.serverInTrans(), s.ob.pinned && be == s.ob.last
			lastErr = err
			s.st.tried = append(s.st.tried, be.addr)
			s.dropServer(be)
			switch {
			case inTrans:
				return nil, errTxnServerLost
			case pinned:
				s.ob.pinned, s.ob.trxSpecified = false, false
				return nil, errPinnedServerLost
			}
			continue
		}
		s.useServer(be)
		return be, nil
	}
	return nil, lastErr
}

// refuse answers a command that found no server: the session goes on,
// except when the server session of an open transaction is gone.
func (s *Session) refuse(n int, err error) error {
	if skipErr := s.skipPacket(n); skipErr != nil {
		return skipErr
	}
	return s.writeErrorFor(err)
}

// sendRequest writes a request obgate holds whole (not streamed from the
// client) to be.
//
// A write the server refused means nothing of the request ran there:
// outside a transaction the request goes to another server session
// (refusedWrite); otherwise the failure is what a server break before the
// answer is (brokeBeforeAnswer), which the caller answers with
// answerFailure.
func (s *Session) sendRequest(be *serverConn, pkt []byte) error {
	if err := be.writeRequest(pkt, true, true); err != nil {
		if err = s.side.refusedWrite(pkt, err); err != nil {
			return s.side.brokeBeforeAnswer(err)
		}
	}
	s.srv.metrics.bytesFromClient.Add(len(pkt))
	return nil
}

// answerFailure answers a statement that failed before its answer with
// the failure's ERR and goes on (a statementError), or ends the session
// (any other error).
func (s *Session) answerFailure(err error, kind route.StmtKind, start time.Time) error {
	var se *statementError
	if !errors.As(err, &se) {
		return err
	}
	if se.txnBroken {
		s.markTxnBroken()
	}
	s.countStatement(kind, true, start)
	return s.writeError(se.reply)
}

// writeErrorFor answers the current command with err as an ERR packet.
// Losing the server session of an open transaction ends the client
// session, as ODP does.
func (s *Session) writeErrorFor(err error) error {
	var se *mysqlproto.SQLError
	switch {
	case errors.As(err, &se):
		return s.writeError(se)
	case errors.Is(err, errTxnServerLost):
		if s.cfg.ServerBreakAction == "disconnect" {
			return quitWith(QuitServerNetwork, err, mysqlproto.NewSQLError(mysqlproto.CRServerLost,
				"Lost connection to the server of the open transaction"))
		}
		return s.txnServerLost()
	case errors.Is(err, errServerGone):
		// mysql mode: the client's connection is its server session.
		return quitWith(QuitServerNetwork, err, lostServer(s.backend.addr))
	case errors.Is(err, errPinnedServerLost):
		return s.writeError(mysqlproto.NewSQLError(mysqlproto.CRServerLost,
			"Lost connection to the server session that held this session's temporary tables, locks or last results; they are gone"))
	}
	s.srv.log.Debug("statement failed before it reached a server", "session", s.id, "err", err)
	return s.writeError(mysqlproto.NewSQLError(mysqlproto.CRConnHostError, "obgate: %v", err))
}

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
