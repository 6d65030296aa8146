package reactor

import (
	"encoding/binary"
	"errors"
	"time"

	"obgate/mysqlproto"
)

// relayResponse streams the server's answer to cmd to the client. It reads
// the server into one pooled buffer, lets the ResponseScanner decide packet
// boundaries, and writes every decided byte to the client before reading
// more, so at most one buffer of data is in flight per session. LOCAL
// INFILE uploads and COM_CHANGE_USER auth rounds are relayed the other way
// in between. It returns the number of bytes written to the client.
func (st *statement) relayResponse(cmd mysqlproto.Command) (int64, error) {
	s := st.s
	sc := &s.scanner
	sc.Reset(cmd, s.caps, s.status)
	if s.backend.obCaps.Has(mysqlproto.OBCapExtraOKPacketForStatistics) {
		sc.ExpectExtraOK()
	}
	if d := s.side.answerTimeout(); d > 0 {
		_ = s.backend.conn.SetReadDeadline(time.Now().Add(d))
	}
	// A view of the server connection's buffer when nothing rewrites the
	// answer in place (mysql routing mode), else a chunk.
	win := newRespWindow(s.backend, !s.side.rewritesAnswers())
	defer func() { win.close() }()
	var written int64
	dec := 0 // win.buf[:dec] decided
	serverFail := func(err error) error {
		if written == 0 {
			return s.side.brokeBeforeAnswer(err)
		}
		return quit(QuitServerNetwork, err)
	}
	// flush sends the decided bytes; final marks the end of what the
	// client gets before it must act (the whole response, or a request of
	// the server's such as LOCAL INFILE).
	flush := func(final bool) error {
		if dec == 0 {
			if final {
				return wrapClient(s.client.Flush())
			}
			return nil
		}
		if err := s.client.Write(win.buf[:dec]); err != nil {
			return quit(QuitClientNetwork, err)
		}
		flushFn := s.client.FlushMore
		if final {
			flushFn = s.client.Flush
		}
		if err := flushFn(); err != nil {
			return quit(QuitClientNetwork, err)
		}
		st.releaseKept() // part of the answer is the client's now
		written += int64(dec)
		win.consumed(dec)
		dec = 0
		return nil
	}
	for {
		n, ev := sc.Scan(win.buf[dec:win.end])
		dec += n
		switch ev {
		case mysqlproto.ScanNeedMore:
			if sc.Done() {
				if dec != win.end {
					return written, quit(QuitServerProto, errors.New("server sent bytes after its response"))
				}
				if err := s.backend.finishResponse(); err != nil {
					// The answer is whole; the server session is out of
					// step and is not used again.
					s.srv.log.Warn("server session out of step after a response", "session", s.id, "server", s.backend.addr, "err", err)
					s.backend.close()
				}
				if written == 0 && sc.IsErr() && s.side.holdsERR(sc.ErrCode()) {
					st.heldERR = append(st.heldERR[:0], win.buf[:dec]...)
					return 0, errRetryableERR
				}
				return written, flush(true)
			}
			if k, ok := win.more(); ok {
				s.srv.metrics.bytesFromServer.Add(k)
				continue
			}
			if err := flush(false); err != nil {
				return written, err
			}
			k, err := win.fill(s.backend, sc.Want())
			if k == 0 && err != nil {
				return written, serverFail(err)
			}
			s.srv.metrics.bytesFromServer.Add(k)
		case mysqlproto.ScanTerminator:
			if win.np == nil {
				win.buf, dec, win.end = s.side.terminator(win.buf, dec, win.end)
			} else {
				s.side.terminator(win.buf, dec, win.end) // mysql side: reads only
			}
		case mysqlproto.ScanPrepared:
			st.notePrepared(sc.Packet())
		case mysqlproto.ScanLocalInfile:
			if err := flush(true); err != nil {
				return written, err
			}
			st.releaseKept()
			if win.end != 0 {
				return written, quit(QuitServerProto, errors.New("server sent data before the LOCAL INFILE upload"))
			}
			if err := st.relayUpload(); err != nil {
				return written, err
			}
		case mysqlproto.ScanAuthContinue:
			if err := flush(true); err != nil {
				return written, err
			}
			st.releaseKept()
			hdr, err := s.client.Peek(mysqlproto.HeaderLen)
			if err != nil {
				return written, quit(QuitClientNetwork, err)
			}
			n, _ := mysqlproto.ParseHeader(hdr)
			if _, err := st.relayPacket(n, false); err != nil {
				return written, err
			}
		case mysqlproto.ScanError:
			return written, quit(QuitServerProto, sc.Err())
		}
	}
}

// relayUpload forwards the client's LOCAL INFILE packets to the server up
// to and including the empty packet that ends the file.
func (st *statement) relayUpload() error {
	s := st.s
	for {
		hdr, err := s.client.Peek(mysqlproto.HeaderLen)
		if err != nil {
			return quit(QuitClientNetwork, err)
		}
		n, _ := mysqlproto.ParseHeader(hdr)
		sent, err := st.relayPacket(n, false)
		s.srv.metrics.bytesFromClient.Add(int(sent))
		if err != nil {
			return err
		}
		if n == 0 {
			return nil
		}
	}
}

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
func (st *statement) sendRequest(be *serverConn, pkt []byte) error {
	s := st.s
	if err := be.writeRequest(pkt, true, true); err != nil {
		if err = s.side.refusedWrite(pkt, err); err != nil {
			return s.side.brokeBeforeAnswer(err)
		}
	}
	s.srv.metrics.bytesFromClient.Add(len(pkt))
	return nil
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
func (st *statement) relayPacket(n int, keep bool) (int64, error) {
	s := st.s
	var sent int64
	var broke error // the failed write of a one-piece request
	err := s.eachPiece(n, s.cfg.MaxPacketSize, func(p []byte, _, first, last bool) (bool, error) {
		if first && st.patchOn && len(p) >= mysqlproto.HeaderLen+5 {
			binary.LittleEndian.PutUint32(p[mysqlproto.HeaderLen+1:], st.patchID)
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
			st.kept = p
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
