package reactor

import (
	"encoding/binary"
	"errors"
	"time"

	"obgate/mysqlproto"
)

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

// relayResponse streams the server's answer to cmd to the client. It reads
// the server into one pooled buffer, lets the ResponseScanner decide packet
// boundaries, and writes every decided byte to the client before reading
// more, so at most one buffer of data is in flight per session. LOCAL
// INFILE uploads and COM_CHANGE_USER auth rounds are relayed the other way
// in between. It returns the number of bytes written to the client.
func (s *Session) relayResponse(cmd mysqlproto.Command) (int64, error) {
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
	win := newRespWindow(s.backend, s.ob == nil)
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
		s.releaseKept() // part of the answer is the client's now
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
					s.st.heldERR = append(s.st.heldERR[:0], win.buf[:dec]...)
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
			s.notePrepared(sc.Packet())
		case mysqlproto.ScanLocalInfile:
			if err := flush(true); err != nil {
				return written, err
			}
			s.releaseKept()
			if win.end != 0 {
				return written, quit(QuitServerProto, errors.New("server sent data before the LOCAL INFILE upload"))
			}
			if err := s.relayUpload(); err != nil {
				return written, err
			}
		case mysqlproto.ScanAuthContinue:
			if err := flush(true); err != nil {
				return written, err
			}
			s.releaseKept()
			hdr, err := s.client.Peek(mysqlproto.HeaderLen)
			if err != nil {
				return written, quit(QuitClientNetwork, err)
			}
			n, _ := mysqlproto.ParseHeader(hdr)
			if _, err := s.relayPacket(n, false); err != nil {
				return written, err
			}
		case mysqlproto.ScanError:
			return written, quit(QuitServerProto, sc.Err())
		}
	}
}

// relayUpload forwards the client's LOCAL INFILE packets to the server up
// to and including the empty packet that ends the file.
func (s *Session) relayUpload() error {
	for {
		hdr, err := s.client.Peek(mysqlproto.HeaderLen)
		if err != nil {
			return quit(QuitClientNetwork, err)
		}
		n, _ := mysqlproto.ParseHeader(hdr)
		sent, err := s.relayPacket(n, false)
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
func (s *Session) onTerminator(sc *mysqlproto.ResponseScanner) {
	if sc.IsErr() {
		return
	}
	st := sc.Status()
	s.status = st
	if st.Has(mysqlproto.StatusSessionStateChange) {
		p := sc.Packet()
		if len(p) > 0 && (p[0] == mysqlproto.OKHeader || (p[0] == mysqlproto.EOFHeader && len(p) > 5)) {
			if ok, good := mysqlproto.ParseOK(p, s.caps); good {
				s.learnSessionState(ok.SessionState)
			}
		}
	}
}

// learnSessionState picks the current database out of session-state
// changes.
func (s *Session) learnSessionState(raw []byte) {
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
