package reactor

import (
	"encoding/binary"
	"errors"

	"obgate/mysqlproto"
	"obgate/reactor/backend"
)

// onTerminator learns from an OK, EOF or ERR that ended a result: the
// transaction state and the current database.
func (m *mysqlSide) onTerminator(sc *mysqlproto.ResponseScanner) {
	s := m.s
	if sc.IsErr() {
		return
	}
	st := sc.Status()
	s.status = st
	if st.Has(mysqlproto.StatusSessionStateChange) {
		p := sc.Packet()
		if len(p) > 0 && (p[0] == mysqlproto.OKHeader || (p[0] == mysqlproto.EOFHeader && len(p) > 5)) {
			if ok, good := mysqlproto.ParseOK(p, s.caps); good {
				m.learnSessionState(ok.SessionState)
			}
		}
	}
}

// learnSessionState picks the current database out of session-state
// changes.
func (m *mysqlSide) learnSessionState(raw []byte) {
	s := m.s
	it := mysqlproto.SessionStates(raw)
	for {
		typ, data, more := it.Next()
		if !more {
			return
		}
		if typ == mysqlproto.SessionTrackSchema {
			if db, _, ok := mysqlproto.ReadLenEncString(data, 0); ok {
				s.setDB(string(db))
			}
		}
	}
}

// sendRequest writes a request obgate holds whole (not streamed from the
// client) to be.
//
// A write the server refused means nothing of the request ran there:
// outside a transaction the request goes to another server session
// (refusedWrite); otherwise the failure is what a server break before the
// answer is (brokeBeforeAnswer), which the caller answers with
// answerFailure.
func (st *statement) sendRequest(be *backend.Conn, pkt []byte) error {
	s := st.s
	st.beforeRequest()
	if err := be.WriteRequest(pkt, true, true); err != nil {
		if err = s.side.refusedWrite(pkt, err); err != nil {
			return brokeBeforeAnswer(s, err)
		}
	}
	s.countIn(len(pkt))
	return nil
}

// tryRequest writes the one-piece request p to the current server
// session on the poller without waiting; what its socket did not take is
// left in then.unsent for a goroutine (sendUnsent). The caller keeps p
// until the command ends.
func (st *statement) tryRequest(p []byte) {
	if rest, owned, raw := st.s.servers.Current().TryRequest(p, false); rest != nil {
		st.then.unsent, st.then.partial, st.then.unsentChunk = rest, raw, owned
	}
}

// sendPolled is sendRequest on the poller, for a request obgate holds
// whole and that goes to the current server session: written as far as
// the socket takes it now (tryRequest), the rest by a goroutine. Whether
// the server refused it shows in the answer's outcome or in sendUnsent.
func (st *statement) sendPolled(pkt []byte) {
	st.beforeRequest()
	st.tryRequest(pkt)
	st.s.countIn(len(pkt))
}

// relayPacket streams one logical client packet (whose header says n
// payload bytes, continuation packets included) to the server, in pieces of
// at most connio.ChunkSize, without holding it whole. It returns the number of
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
func (st *statement) relayPacket(n int, keep bool) (int64, error) {
	s := st.s
	var sent int64
	var broke error // the failed write of a one-piece request
	err := s.client.eachPiece(n, s.cfg.MaxPacketSize, func(p []byte, _, first, last bool) (bool, error) {
		if first && st.patchOn && len(p) >= mysqlproto.HeaderLen+5 {
			binary.LittleEndian.PutUint32(p[mysqlproto.HeaderLen+1:], st.patchID)
		}
		if first && last {
			held, err := st.pace().sendOnePiece(st, p)
			if err != nil {
				broke = err
				return false, errPieceNotSent
			}
			if held {
				sent += int64(len(p))
				st.kept = p
				return true, nil
			}
		} else if err := s.servers.Current().WriteRequest(p, first, last); err != nil {
			return false, quitWith(QuitServerNetwork, err, lostServer(s.servers.Current().Addr))
		}
		sent += int64(len(p))
		if keep && first && last && !st.noteTunnel(p) {
			st.kept = p
			return true, nil
		}
		return false, nil
	})
	if broke != nil {
		// Nothing of a one-piece request reached the server.
		return sent, brokeBeforeAnswer(s, broke)
	}
	return sent, err
}

// noteTunnel marks a request longer than tunnel_request_size_threshold as
// tunnelled, as ODP calls a request it streams: it is never sent again to
// another server, whatever the outcome. It reports whether p is one.
func (st *statement) noteTunnel(p []byte) bool {
	st.tunneled = int64(len(p)-mysqlproto.HeaderLen) > st.s.cfg.TunnelRequestSizeThreshold
	return st.tunneled
}

// writeWhole writes a one-piece request to the current server session. A
// server that refused it may have it sent elsewhere by the side
// (refusedWrite); an error that stands means nothing of it ran.
func (st *statement) writeWhole(p []byte) error {
	s := st.s
	err := s.servers.Current().WriteRequest(p, true, true)
	if err != nil {
		err = s.side.refusedWrite(p, err)
	}
	return err
}

// errPieceNotSent stops relayPacket's walk when a one-piece request could
// not be written.
var errPieceNotSent = errors.New("request not sent")
