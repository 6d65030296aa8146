package reactor

import (
	"errors"
	"time"

	"obgate/mysqlproto"
	"obgate/reactor/backend"
)

// responseRelay is the relay of one server answer to the client in
// progress: the window on the answer and how far the response scanner
// decided it. It lives in the statement (st.rr) from relayBegin to
// relayEnd, so that the relay can stop where it would wait and go on
// later: on the poller when more of the answer arrives, or on a goroutine
// that may wait (statement path, poller.go). One loop (runRelay) serves
// both.
type responseRelay struct {
	be  *backend.Conn
	win backend.Window
	// win.buf[:dec] is decided and not yet written to the client.
	dec     int
	written int64 // bytes of the answer the client's connection took
	// pending is a scanner event the relay stopped at on the poller and
	// must act on first (when hasPending).
	pending    mysqlproto.ScanEvent
	hasPending bool
	// unsent says win.buf[:dec] must go to the client before anything
	// else: the poller's write was not taken whole.
	unsent bool
	// ended says the scanner saw the end of the answer and the relay
	// checked what follows it (finishResponse, a held ERR).
	ended bool
	open  bool
	// sentAt is when the request was about to go to the server
	// (statement.requestAt), or when the relay began where no send site
	// noted it; firstAt when the first byte of the answer was seen (zero
	// until then). They outlive the relay: countStatement reads them.
	sentAt, firstAt time.Time
}

// relayBegin opens the relay of the answer to cmd from the session's
// current server session and counts the statement into its server's
// health entry.
func (st *statement) relayBegin(cmd mysqlproto.Command) {
	s := st.s
	be := s.servers.Current()
	be.Health.Begin()
	sc := &s.scanner
	sc.Reset(cmd, s.caps, s.status)
	if be.OBCaps.Has(mysqlproto.OBCapExtraOKPacketForStatistics) {
		sc.ExpectExtraOK()
	}
	sentAt := st.requestAt
	st.requestAt = time.Time{}
	if sentAt.IsZero() {
		sentAt = time.Now()
	}
	if d := s.side.answerTimeout(); d > 0 {
		// The answer is due d after the request went out.
		_ = be.NetConn.SetReadDeadline(sentAt.Add(d))
		st.pace().answerDue(st, d)
	}
	// A view of the server connection's buffer when nothing rewrites the
	// answer in place (mysql routing mode), else a chunk. A prepare's
	// answer is rewritten too (notePrepared writes obgate's statement id
	// into its OK): a view over several of netpoll's buffer nodes is a
	// copy that the view's next extension (more) takes again from the
	// nodes, without the new id, so the client would get the server's.
	view := !s.side.rewritesAnswers() && cmd != mysqlproto.ComStmtPrepare
	st.rr = responseRelay{be: be, win: backend.NewWindow(be, view), open: true, sentAt: sentAt}
}

// close ends the relay's hold on its window, once (relayEnd, or
// afterCommand for a command that ended without it).
func (r *responseRelay) close() {
	if r.open {
		r.open = false
		r.win.Close()
	}
}

// runRelay relays the answer from where it stands: the ResponseScanner
// decides packet boundaries in the window, and every decided byte goes to
// the client before more is read, so at most one window of data is in
// flight per session. LOCAL INFILE uploads and COM_CHANGE_USER auth rounds
// are relayed the other way in between. With block it waits for the
// server and the client as needed; without (on the poller) it writes to
// the client only what the kernel takes at once and returns errWouldBlock
// or errHandOff where it would wait. It returns the bytes written to the
// client so far.
func (st *statement) runRelay(block bool) (int64, error) {
	s := st.s
	r := &st.rr
	sc := &s.scanner
	var pio backend.PollIO // reads a chunk on the poller
	if !block && r.win.Viewed == nil {
		if pio = r.be.PollIO(); pio == nil {
			return r.written, backend.ErrHandOff // a chunk this serverIO fills by waiting reads
		}
	}
	serverFail := func(err error) error {
		if r.written == 0 {
			return brokeBeforeAnswer(s, err)
		}
		if s.drv.clientLeft() {
			return leftDuringCommand(err)
		}
		return quit(QuitServerNetwork, err)
	}
	if r.unsent {
		r.unsent = false
		if err := st.flushDecided(false, block); err != nil {
			return r.written, err
		}
	}
	for {
		if r.firstAt.IsZero() && r.win.End > 0 {
			r.firstAt = time.Now()
		}
		var ev mysqlproto.ScanEvent
		if r.hasPending {
			ev, r.hasPending = r.pending, false
		} else {
			n, e := sc.Scan(r.win.Buf[r.dec:r.win.End])
			r.dec += n
			ev = e
		}
		if !block && (ev == mysqlproto.ScanLocalInfile || ev == mysqlproto.ScanAuthContinue) {
			r.pending, r.hasPending = ev, true
			return r.written, backend.ErrHandOff
		}
		switch ev {
		case mysqlproto.ScanNeedMore:
			if sc.Done() {
				if !r.ended {
					if r.dec != r.win.End {
						return r.written, quit(QuitServerProto, errors.New("server sent bytes after its response"))
					}
					var err error
					if pio != nil {
						// The final frame may still be on its way.
						if err = pio.TryFinish(); err == backend.ErrWouldBlock || err == backend.ErrHandOff {
							return r.written, err
						}
					} else {
						err = r.be.FinishResponse()
					}
					r.ended = true
					if err != nil {
						// The answer is whole; the server session is out of
						// step and is not used again.
						s.srv.log.Warn("server session out of step after a response", "session", s.id, "server", r.be.Addr, "err", err)
						r.be.Close()
					}
					if r.written == 0 && sc.IsErr() && s.side.holdsERR(sc.ErrCode()) {
						st.heldERR = append(st.heldERR[:0], r.win.Buf[:r.dec]...)
						return 0, errRetryableERR
					}
				}
				return r.written, st.flushDecided(true, block)
			}
			if k, ok := r.win.More(); ok {
				s.srv.metrics.bytesFromServer.Add(k)
				continue
			}
			if err := st.flushDecided(false, block); err != nil {
				return r.written, err
			}
			if pio != nil {
				k, err := r.win.TryFill(pio, sc.Want())
				if k == 0 {
					if err == nil || err == backend.ErrWouldBlock {
						return r.written, backend.ErrWouldBlock
					}
					return r.written, backend.ErrHandOff // answered off the poller
				}
				s.srv.metrics.bytesFromServer.Add(k)
				continue
			}
			if !block && !r.win.Ready(sc.Want()) {
				if !r.win.Viewed.Connection.IsActive() {
					return r.written, backend.ErrHandOff // the failure is answered off the poller
				}
				return r.written, backend.ErrWouldBlock
			}
			k, err := r.win.Fill(r.be, sc.Want())
			if k == 0 && err != nil {
				return r.written, serverFail(err)
			}
			s.srv.metrics.bytesFromServer.Add(k)
		case mysqlproto.ScanTerminator:
			if r.win.Viewed == nil {
				r.win.Buf, r.dec, r.win.End = s.side.terminator(r.win.Buf, r.dec, r.win.End)
			} else {
				s.side.terminator(r.win.Buf, r.dec, r.win.End) // mysql side: reads only
			}
		case mysqlproto.ScanPrepared:
			preparedRun{st}.notePrepared(sc.Packet())
		case mysqlproto.ScanLocalInfile:
			if !s.caps.Has(mysqlproto.ClientLocalFiles) {
				// The client never offered its files: a server that asks
				// anyway is broken or hostile, and some clients would
				// answer. The request never reaches the client.
				r.be.Close()
				return r.written, quitWith(QuitServerProto, errLocalInfileNotOffered,
					mysqlproto.NewSQLError(mysqlproto.ERNotAllowedCommand,
						"The used command is not allowed: the server asked for a local file, and this client did not enable LOCAL INFILE"))
			}
			if err := st.flushDecided(true, true); err != nil {
				return r.written, err
			}
			st.releaseKept()
			if r.win.End != 0 {
				return r.written, quit(QuitServerProto, errors.New("server sent data before the LOCAL INFILE upload"))
			}
			if err := st.relayUpload(); err != nil {
				return r.written, err
			}
		case mysqlproto.ScanAuthContinue:
			if perr := s.passwordGuard(r.be, sc.Packet()); perr != nil {
				r.be.Close()
				return r.written, quitWith(QuitAuthFailed, perr, perr.reply)
			}
			if err := st.flushDecided(true, true); err != nil {
				return r.written, err
			}
			st.releaseKept()
			hdr, err := s.client.io.Peek(mysqlproto.HeaderLen)
			if err != nil {
				return r.written, quit(QuitClientNetwork, err)
			}
			n, _ := mysqlproto.ParseHeader(hdr)
			if _, err := st.relayPacket(n, false); err != nil {
				return r.written, err
			}
		case mysqlproto.ScanError:
			return r.written, quit(QuitServerProto, sc.Err())
		}
	}
}

// errLocalInfileNotOffered: a server asked for a local file the client
// never offered (CLIENT_LOCAL_FILES).
var errLocalInfileNotOffered = errors.New("the server asked for a local file, and the client did not enable LOCAL INFILE")

// flushDecided sends the decided bytes of the answer to the client; final
// marks the end of what the client gets before it must act (the whole
// answer, or a request of the server's such as LOCAL INFILE). Without
// block (on the poller) the bytes go straight to the client's socket, as
// far as the kernel takes them at once; what it did not take is left for
// a goroutine (errHandOff).
func (st *statement) flushDecided(final, block bool) error {
	s := st.s
	r := &st.rr
	if r.dec == 0 {
		if final && block {
			return wrapClient(s.client.io.Flush())
		}
		return nil
	}
	if !block {
		k, err := s.drv.clientNP.TryWrite(r.win.Buf[:r.dec])
		if k > 0 {
			if p := s.stmts.Pending; p != nil && p.Capture {
				p.CaptureAnswer(r.win.Buf[:k])
			}
			st.releaseKept() // part of the answer is the client's now
			r.written += int64(k)
			r.win.Consumed(k)
			r.dec -= k
		}
		if err != nil {
			return quit(QuitClientNetwork, err)
		}
		if r.dec > 0 {
			r.unsent = true
			return backend.ErrHandOff
		}
		return nil
	}
	if err := s.client.io.Write(r.win.Buf[:r.dec]); err != nil {
		return quit(QuitClientNetwork, err)
	}
	flushFn := s.client.io.FlushMore
	if final {
		flushFn = s.client.io.Flush
	}
	if err := flushFn(); err != nil {
		return quit(QuitClientNetwork, err)
	}
	if p := s.stmts.Pending; p != nil && p.Capture {
		p.CaptureAnswer(r.win.Buf[:r.dec])
	}
	st.releaseKept() // part of the answer is the client's now
	r.written += int64(r.dec)
	r.win.Consumed(r.dec)
	r.dec = 0
	return nil
}

// relayUpload forwards the client's LOCAL INFILE packets to the server up
// to and including the empty packet that ends the file.
func (st *statement) relayUpload() error {
	s := st.s
	for {
		hdr, err := s.client.io.Peek(mysqlproto.HeaderLen)
		if err != nil {
			return quit(QuitClientNetwork, err)
		}
		n, _ := mysqlproto.ParseHeader(hdr)
		sent, err := st.relayPacket(n, false)
		s.countIn(int(sent))
		if err != nil {
			return err
		}
		if n == 0 {
			return nil
		}
	}
}
