package reactor

import (
	"errors"
	"fmt"
	"sync/atomic"
	"time"

	"obgate/mysqlproto"
	"obgate/reactor/backend"
	"obgate/reactor/connio"
	"obgate/reactor/prepared"
)

// Preparing a statement again on the poller.
//
// An execute whose route picks a server session that never prepared the
// statement (in OceanBase mode, the leader of the execute's partition is
// often not the server the client's prepare went to) first prepares it
// there, as ODP does. On a goroutine that is one more round trip inside
// preparedServer (prepareOn). On the poller it is a short state of its
// own, between the client's execute, still unread in the client buffer,
// and its re-serving:
//
//  1. preparePolled sends COM_STMT_PREPARE with the statement's text to
//     the chosen server session without waiting and the command stops
//     with errAwaiting; st.prep says what awaits.
//  2. Each read of the server connection (stepPolled → stepPrepare)
//     consumes what arrived of the answer, which the client never sees.
//  3. Once it is whole, the server's statement id is recorded on that
//     server session and the execute is served again from its start, on
//     the poller: its route now finds the statement prepared.
//
// Whatever goes wrong after the prepare went out goes to a goroutine
// (resumePrepare), which reads the rest of the answer where it may wait;
// a server session whose answer did not end cleanly is out of step and
// closed. The execute is then served from its start there, and the usual
// path (preparedServer) decides: it prepares again elsewhere, or answers
// the failure. An execute is prepared again on the poller once at most
// (driver.rePrepared); a route that moves meanwhile sends it to a
// goroutine.

// polledPrepare is a prepare obgate sent on the poller for the execute in
// progress. The command's owner (the poller, then a goroutine it hands
// the command to) uses it; be is nil when none is in progress.
type polledPrepare struct {
	be  *backend.Conn
	ps  *prepared.Stmt
	id  uint32         // the client's statement id
	win backend.Window // a chunk holding what arrived of the answer
	dec int            // bytes of win the scanner has consumed
	at  time.Time      // when the prepare went out
}

// polledPrepares counts the statements prepared again on the poller;
// preparesOffPoller the prepares the poller sent whose answer a
// goroutine read (tests read them).
var polledPrepares, preparesOffPoller atomic.Uint64

// errPrepareMismatch: the statement prepared again has another shape
// than the client's (the table changed in between).
var errPrepareMismatch = errors.New("statement prepared again has another shape")

// preparePolled sends the prepare of ps to be on the poller, the first
// step above. It returns errAwaiting once the request went out whole,
// errWouldWait when the command is better served on a goroutine from its
// start (nothing was sent; or be took part of the request and is closed,
// being out of step).
func (st preparedRun) preparePolled(be *backend.Conn, ps *prepared.Stmt, id uint32) error {
	s := st.s
	n := 1 + len(ps.SQL)
	if s.drv.rePrepared || n > classifyLen || be.PollIO() == nil {
		return errWouldWait
	}
	pkt := connio.GetChunk(mysqlproto.HeaderLen + n)
	pkt = pkt[:mysqlproto.HeaderLen+n]
	mysqlproto.PutHeader(pkt, n, 0)
	pkt[mysqlproto.HeaderLen] = byte(mysqlproto.ComStmtPrepare)
	copy(pkt[mysqlproto.HeaderLen+1:], ps.SQL)
	rest, owned, raw := be.TryRequest(pkt, false)
	if owned != nil {
		connio.PutChunk(owned)
	}
	connio.PutChunk(pkt)
	if rest != nil {
		if raw {
			be.Close() // part of a request went out: out of step
		}
		return errWouldWait
	}
	st.prep = polledPrepare{be: be, ps: ps, id: id, win: backend.Window{Buf: connio.GetChunk(4096)}, at: time.Now()}
	s.scanner.Reset(mysqlproto.ComStmtPrepare, s.caps, be.Status)
	if timeout := s.cfg.ShortAsyncTaskTimeout; timeout > 0 {
		_ = be.NetConn.SetReadDeadline(st.prep.at.Add(timeout)) // for a goroutine's reads
		s.drv.armAnswerTimer(timeout)
	}
	return errAwaiting
}

// readPrepare consumes what arrived of the answer to the prepare in
// progress; with block it waits for the rest (a goroutine). It returns
// nil once the answer was whole and the statement is recorded on its
// server session; errWouldBlock or errHandOff on the poller where it
// would wait; backend.ErrServerState wrapping the server's ERR (the answer was
// whole: the server session is in step); another error when the server
// session is out of step.
func (st preparedRun) readPrepare(block bool) error {
	s := st.s
	p := &st.prep
	be := p.be
	sc := &s.scanner
	var pio backend.PollIO
	if !block {
		if pio = be.PollIO(); pio == nil {
			return backend.ErrHandOff
		}
	}
	for {
		k, ev := sc.Scan(p.win.Buf[p.dec:p.win.End])
		p.dec += k
		switch ev {
		case mysqlproto.ScanTerminator:
			if !sc.IsErr() {
				be.Status = sc.Status()
			}
			continue
		case mysqlproto.ScanPrepared:
			continue
		case mysqlproto.ScanError:
			return sc.Err()
		case mysqlproto.ScanNeedMore:
		default:
			return fmt.Errorf("%w to %s", backend.ErrUnexpectedAnswer, mysqlproto.ComStmtPrepare)
		}
		if sc.Done() {
			if p.dec != p.win.End {
				return errors.New("server sent bytes after its response")
			}
			if block {
				if err := be.FinishResponse(); err != nil {
					return err
				}
			} else if err := pio.TryFinish(); err != nil {
				return err // errWouldBlock: its final frame is on its way
			}
			return st.notePrepare()
		}
		p.win.Consumed(p.dec)
		p.dec = 0
		var err error
		if block {
			k, err = p.win.Fill(be, sc.Want())
		} else {
			k, err = p.win.TryFill(pio, sc.Want())
		}
		if k == 0 {
			if err == nil {
				err = backend.ErrWouldBlock
			}
			return err
		}
	}
}

// notePrepare records the statement the whole answer prepared, or
// returns the server's ERR.
func (st preparedRun) notePrepare() error {
	s := st.s
	p := &st.prep
	sc := &s.scanner
	if sc.IsErr() {
		e, _ := mysqlproto.ParseERR(sc.Packet())
		return fmt.Errorf("%w: %w", backend.ErrServerState, mysqlproto.SQLErrorFromERR(e))
	}
	sid, columns, params := sc.Prepared()
	if params != p.ps.Params || columns != p.ps.Columns {
		return fmt.Errorf("%w on %s: %d parameters and %d columns, not %d and %d",
			errPrepareMismatch, p.be.Addr, params, columns, p.ps.Params, p.ps.Columns)
	}
	p.be.StmtSet(p.id, sid)
	return nil
}

// endPolledPrepare ends the prepare in progress after readPrepare returned
// err (not errWouldBlock): the window goes back and the read deadline is
// lifted; a server session whose answer did not end cleanly is closed.
func (st preparedRun) endPolledPrepare(err error) {
	p := &st.prep
	be := p.be
	var se *mysqlproto.SQLError
	if err != nil && !errors.As(err, &se) && !errors.Is(err, errPrepareMismatch) {
		if !st.s.drv.clientLeft() { // else obgate cut the answer short itself
			st.s.srv.log.Warn("server session out of step after a prepare", "session", st.s.id, "server", be.Addr, "err", err)
		}
		be.Close()
	}
	if err == nil {
		polledPrepares.Add(1)
	}
	_ = be.NetConn.SetReadDeadline(time.Time{})
	connio.PutChunk(p.win.Buf)
	*p = polledPrepare{}
}

// stepPrepare is stepPolled for a prepare in progress (the second step
// above): it consumes what arrived and, once the answer is whole, serves
// the execute again on the poller. It reports whether the command ended
// there and the session is idle again.
func (d *driver) stepPrepare() bool {
	s := d.s
	st := s.st
	err := preparedRun{st}.readPrepare(false)
	if err == backend.ErrWouldBlock {
		d.poll.Store(pollAwaiting)
		if d.kicked.Load() && d.poll.CompareAndSwap(pollAwaiting, pollNone) {
			d.handOff(resumePrepare)
		}
		return false
	}
	d.poll.Store(pollNone)
	if err != nil {
		d.handOff(resumePrepare) // the goroutine reads on, or answers
		return false
	}
	preparedRun{st}.endPolledPrepare(nil)
	if d.answerTimer != nil {
		d.answerTimer.Stop()
	}
	s.activity.stmtCount.Add(^uint64(0)) // less one: counted again when it is served
	d.rePrepared = true
	return d.runPolled()
}

// finishPrepare ends on a goroutine the prepare the poller began: it reads
// the rest of its answer; the command is then served from its start.
func (st preparedRun) finishPrepare() {
	preparesOffPoller.Add(1)
	st.endPolledPrepare(st.readPrepare(true))
	st.s.activity.stmtCount.Add(^uint64(0)) // less one: counted again when it is served
}
