package reactor

import (
	"encoding/binary"
	"errors"
	"fmt"
	"time"

	"obgate/health"
	"obgate/internal/failure"
	"obgate/mysqlproto"
	"obgate/reactor/backend"
	"obgate/reactor/connio"
	"obgate/reactor/prepared"
	"obgate/route"
)

// Prepared statements, in both routing modes. The client sees obgate's
// own statement ids; each server session maps them to its own
// (backend.Conn.Stmts). A statement runs on any server session: where it is
// not prepared yet, obgate prepares it there first (from the text it
// kept), and an execute that did not carry its parameter types gets the
// types of an earlier one. So a session with prepared statements is not
// bound to one server: it moves (mysql mode) or runs elsewhere (OceanBase
// mode) as one without them would, unless a statement keeps long data or
// an open cursor on its server (prepared.Stmt.Home). A statement the client
// closes may stay prepared on the servers for its next prepare of the
// same text (prepared_keep.go, and the package prepared).

// preparedRun is the statement as it runs the prepared-statement
// commands: prepare (on the poller too, as a state of the command),
// execute and its kin on the server session where the statement is, or
// prepared there first, close, and a kept statement's reuse.
type preparedRun struct{ *statement }

// errStatementHomeLost: the server that held a statement's long data or
// open cursor is gone.
var errStatementHomeLost = mysqlproto.NewSQLError(mysqlproto.ERUnknownStmtHandler,
	"The server that held this statement's long data or open cursor is gone; send the data or execute it again")

// prepareStatement prepares a statement on a server session and gives the
// client obgate's own statement id, under which the statement may later
// run on other server sessions too.
//
// A whole request (body holds the whole payload, borrowed from the client
// buffer) is taken out of the client buffer only once its server session
// is decided, so that a pace that may not wait (mayWait, a server session
// not ready) leaves the command to be served again from its start; the
// statement stays pending until its answer (endPrepare).
func (st preparedRun) prepareStatement(n int, body []byte, whole bool, start time.Time) error {
	s := st.s
	var pkt []byte // the request, once taken out of the client buffer
	if !whole {
		if err := st.pace().mayWait(); err != nil {
			return err // the rest of the request is read first
		}
	}
	if refusal := s.stmts.Admit(n-1, s.cfg); refusal != nil {
		if err := st.pace().mayWait(); err != nil {
			return err
		}
		if err := s.client.skipPacket(n); err != nil {
			return err
		}
		s.countStatement(route.StmtOther, true, start)
		return s.writeError(refusal)
	}
	if !whole {
		var err error
		if pkt, err = s.client.readPacketTo(s.stmts.Request, n, heldCommandLimit(s.cfg)); err != nil {
			return err
		}
		s.stmts.Request = pkt
		body = pkt[mysqlproto.HeaderLen+1:]
	}
	if i, _ := s.stmts.KeptFor(body); i >= 0 {
		return st.reuseKept(n, i, pkt == nil, start)
	}
	p := s.stmts.New()
	p.SQL = append(p.SQL, body...)
	p.Facts = route.Lex(p.SQL)
	p.Kind = p.Facts.Kind
	kind := p.Kind
	s.side.routeBy(p, nil)
	be, err := s.side.serverFor(needAny)
	if err != nil {
		s.stmts.Recycle(p)
		if pkt == nil {
			return st.refuse(n, err)
		}
		return st.writeErrorFor(err)
	}
	if pkt == nil {
		// Everything that could stop the command has run: take the
		// request out of the client buffer, into obgate's own copy.
		if pkt, err = s.client.readPacketTo(s.stmts.Request, n, heldCommandLimit(s.cfg)); err != nil {
			return err
		}
		s.stmts.Request = pkt
	}
	s.stmts.Pending = p
	s.stmts.StartCapture(p, s.cfg.ClientPSKeepCount)
	st.resendable = true // preparing changes nothing on the server
	if err := st.pace().sendHeld(st.statement, be, pkt); err != nil {
		s.stmts.EndPrepare()
		return st.answerFailure(err, kind, start)
	}
	// The request is obgate's own copy: keep it, to send it again should
	// the server fail before it answers.
	st.kept, st.keptOwned = pkt, true
	_, err = st.answer(mysqlproto.ComStmtPrepare, kind, start, true)
	if err != errAwaiting { // else finishAwaited ends it
		s.stmts.EndPrepare()
	}
	return err
}

// notePrepared runs when a prepare OK passes through: it records the
// statement under a new client id and writes that id into the packet.
func (st preparedRun) notePrepared(pkt []byte) {
	s := st.s
	p := s.stmts.Pending
	if p == nil || len(pkt) < 9 {
		return
	}
	serverID := binary.LittleEndian.Uint32(pkt[1:])
	p.Columns = binary.LittleEndian.Uint16(pkt[5:])
	p.Params = binary.LittleEndian.Uint16(pkt[7:])
	id := s.stmts.Add(p)
	s.servers.Current().StmtSet(id, serverID)
	binary.LittleEndian.PutUint32(pkt[1:], id)
}

// runStatement runs COM_STMT_EXECUTE, _SEND_LONG_DATA, _RESET or _FETCH:
// on the server session that holds the statement's long data or cursor,
// else (outside a transaction) where it is prepared, else anywhere after
// preparing it again; the statement id is rewritten to the server's.
func (st preparedRun) runStatement(cmd mysqlproto.Command, n int, body []byte, start time.Time) (err error) {
	s := st.s
	if len(body) < 4 {
		if err := st.pace().mayWait(); err != nil {
			return err
		}
		if err := s.client.skipPacket(n); err != nil {
			return err
		}
		return s.writeError(mysqlproto.NewSQLError(mysqlproto.ERNetPacketsOutOfOrder, "Malformed %s", cmd))
	}
	id := binary.LittleEndian.Uint32(body)
	ps, ok := s.stmts.ByID[id]
	if ok && cmd == mysqlproto.ComStmtExecute && !prepared.KeepsParse(&ps.Facts) {
		s.stmts.StateChanged()
	}
	if !ok {
		if err := st.pace().mayWait(); err != nil {
			return err
		}
		if err := s.client.skipPacket(n); err != nil {
			return err
		}
		if cmd == mysqlproto.ComStmtSendLongData {
			return nil // no answer, as a server would give none
		}
		return s.writeError(mysqlproto.NewSQLError(mysqlproto.ERUnknownStmtHandler,
			"Unknown prepared statement handler (%d) given to %s", id, cmd))
	}
	if cmd == mysqlproto.ComStmtExecute {
		s.side.routeBy(ps, body)
		// An execute of a statement that only reads is a read: it may go
		// again after its server broke, as the text would.
		st.resendable = !ps.Facts.Incomplete && ps.Facts.ReadOnly
	}
	be, sid, bound, err := st.preparedServer(ps, id)
	if err != nil {
		if stopped(err) {
			return err // the statement's prepare on be went out first, or waits
		}
		return st.refuse(n, err)
	}
	st.patchID, st.patchOn = sid, true
	defer func() {
		if err != errAwaiting { // finishAwaited does this then
			st.patchOn, st.retryPS = false, nil
		}
	}()
	if cmd == mysqlproto.ComStmtExecute && ps.Params == 0 {
		st.retryPS, st.retryPSID = ps, id
	}
	if cmd == mysqlproto.ComStmtExecute && ps.Params > 0 {
		nb := (int(ps.Params) + 7) / 8
		boundAt := 9 + nb // in body: id(4) flags(1) iterations(4) null bitmap
		if len(body) > boundAt {
			switch {
			case body[boundAt] == 1 && len(body) >= boundAt+1+2*int(ps.Params):
				ps.Types = append(ps.Types[:0], body[boundAt+1:boundAt+1+2*int(ps.Params)]...)
				be.StmtBound(id)
				// It carries its parameter types: any server session
				// where the statement is prepared can run it.
				st.retryPS, st.retryPSID = ps, id
			case body[boundAt] == 0 && !bound && ps.Types != nil:
				// This server session never saw the parameter types.
				if err := st.pace().mayWait(); err != nil {
					return err
				}
				return st.executeWithTypes(n, ps, be, boundAt, start)
			}
		}
	}
	err = st.forward(cmd, n, ps.Kind, start)
	if err == errAwaiting {
		st.then.ps, st.then.psServer = ps, be
		return err
	}
	if err != nil {
		return err
	}
	st.ranStatement(cmd, ps, be)
	return nil
}

// ranStatement notes where ps's long data or cursor is after cmd ran on
// be.
func (st preparedRun) ranStatement(cmd mysqlproto.Command, ps *prepared.Stmt, be *backend.Conn) {
	s := st.s
	switch cmd {
	case mysqlproto.ComStmtSendLongData:
		ps.Home = be
	case mysqlproto.ComStmtExecute:
		ps.Home = nil
		if s.status.Has(mysqlproto.StatusCursorExists) {
			ps.Home = s.servers.Current() // where it ran, after any retry
		}
	case mysqlproto.ComStmtReset:
		ps.Home = nil
	}
}

// preparedServer picks the server session for a prepared statement and
// prepares it there when it is not yet. A server that refuses the prepare
// with an error another server would not give (8001, 8002, ...), or whose
// connection breaks under it, is dropped and the next one tried, within
// the retry budget, unless the session is bound to it: the client's
// request was not sent yet, so trying elsewhere is safe for any
// statement.
func (st preparedRun) preparedServer(ps *prepared.Stmt, id uint32) (*backend.Conn, uint32, bool, error) {
	s := st.s
	for {
		be, err := s.side.statementServer(ps)
		if err != nil {
			return nil, 0, false, err
		}
		sid, bound, ok := be.StmtGet(id)
		if ok {
			return be, sid, bound, nil
		}
		sid, err = st.pace().prepareOn(st.statement, be, ps, id)
		if stopped(err) {
			return nil, 0, false, err // the prepare's answer comes later, or it waits
		}
		if err == nil {
			be.StmtSet(id, sid)
			return be, sid, false, nil
		}
		var se *mysqlproto.SQLError
		isERR := errors.As(err, &se)
		if isERR && !route.ResendableERR(se.Code) {
			return nil, 0, false, err
		}
		// Held like an ERR that says nothing ran: the prepare is obgate's
		// own, and the client's request is not sent yet.
		try := st.try(outcome{fail: failure.HeldERR})
		try.Kept = true
		if !route.MayResend(try) {
			if !isERR && s.activity.inTrans.Load() {
				return nil, 0, false, errTxnServerLost
			}
			return nil, 0, false, err
		}
		st.resends++
		st.tried = append(st.tried, be.Addr)
		s.side.drop(be)
		if isERR {
			if health.AliveFailureERR(se.Code) {
				be.Health.AliveFailed(health.ERRReason(se.Code))
			}
			s.srv.metrics.retried(se.Code)
		}
	}
}

// prepareOn prepares ps on be, where the client never prepared it, and
// returns be's statement id.
func (st preparedRun) prepareOn(be *backend.Conn, ps *prepared.Stmt) (uint32, error) {
	s := st.s
	payload := append([]byte{byte(mysqlproto.ComStmtPrepare)}, ps.SQL...)
	sid, params, columns, err := prepareOn(be, payload, s.st.commandOptions())
	if err != nil {
		return 0, err
	}
	if params != ps.Params || columns != ps.Columns {
		return 0, fmt.Errorf("statement prepared again on %s has %d parameters and %d columns, not %d and %d",
			be.Addr, params, columns, ps.Params, ps.Columns)
	}
	return sid, nil
}

// executeWithTypes sends a COM_STMT_EXECUTE that did not carry parameter
// types to a server session that never saw them, with the types of the
// client's earlier execute put in.
func (st preparedRun) executeWithTypes(n int, ps *prepared.Stmt, be *backend.Conn, boundAt int, start time.Time) error {
	s := st.s
	pkt, err := s.readPacket(n)
	if err != nil {
		return err
	}
	body := pkt[mysqlproto.HeaderLen+1:]
	payload := make([]byte, 0, len(body)+1+len(ps.Types))
	payload = append(payload, byte(mysqlproto.ComStmtExecute))
	payload = binary.LittleEndian.AppendUint32(payload, st.patchID)
	payload = append(payload, body[4:boundAt]...)
	payload = append(payload, 1)
	payload = append(payload, ps.Types...)
	payload = append(payload, body[boundAt+1:]...)
	out, _ := mysqlproto.AppendPacket(nil, 0, payload)
	st.patchOn = false
	if err := st.sendRequest(be, out); err != nil {
		return st.answerFailure(err, ps.Kind, start)
	}
	be.StmtBound(binary.LittleEndian.Uint32(body))
	if ok, err := st.answer(mysqlproto.ComStmtExecute, ps.Kind, start, true); !ok {
		return err
	}
	ps.Home = nil
	if s.status.Has(mysqlproto.StatusCursorExists) {
		ps.Home = be
	}
	return nil
}

// closeStatement closes the statement on every server session that
// prepared it. COM_STMT_CLOSE has no answer.
//
// On the poller each COM_STMT_CLOSE goes out without waiting; at the first
// one a socket does not take whole, the command stops with errCloseRest
// and a goroutine sends the rest and closes the statement on the server
// sessions left (finishClose).
func (st preparedRun) closeStatement(n int, body []byte) error {
	s := st.s
	var id uint32
	if len(body) >= 4 {
		id = binary.LittleEndian.Uint32(body)
	}
	if err := s.client.skipPacket(n); err != nil {
		return err
	}
	p, ok := s.stmts.ByID[id]
	if !ok {
		return nil
	}
	if evict, kept := s.stmts.Keep(id, p, s.cfg.ClientPSKeepCount); kept {
		if evict == 0 {
			return nil
		}
		id = evict // the close the client's would have been
	} else {
		s.stmts.Close(id)
	}
	return st.closeOn(id, len(s.side.serverSessions())-1)
}

// closeOn sends COM_STMT_CLOSE for the client's statement id to each
// server session from servers[from] down to servers[0] that prepared it.
// It goes backwards: dropBroken takes a server session out of the list,
// which moves only the ones after it.
func (st preparedRun) closeOn(id uint32, from int) error {
	s := st.s
	servers := s.side.serverSessions()
	for i := from; i >= 0; i-- {
		be := servers[i]
		sid, _, ok := be.StmtGet(id)
		if !ok {
			continue
		}
		be.StmtDelete(id)
		pkt := &s.stmts.Closing
		pkt[0] = 5 // payload length; sequence 0
		pkt[mysqlproto.HeaderLen] = byte(mysqlproto.ComStmtClose)
		binary.LittleEndian.PutUint32(pkt[mysqlproto.HeaderLen+1:], sid)
		if err := st.pace().closeOn(st.statement, be, pkt[:], id, i); err != nil {
			return err
		}
	}
	return nil
}

// finishClose goes on, on a goroutine, with the COM_STMT_CLOSE the poller
// began: the rest of the one a server's socket did not take, then the
// server sessions after it.
func (st preparedRun) finishClose() error {
	s := st.s
	w := &st.then
	be := s.side.serverSessions()[w.closeAt]
	p, chunk := w.unsent, w.unsentChunk
	w.unsent, w.unsentChunk = nil, nil
	var err error
	if w.partial {
		err = be.WriteRaw(p)
	} else {
		err = be.WriteRequest(p, true, true)
	}
	if chunk != nil {
		connio.PutChunk(chunk)
	}
	if err != nil {
		s.side.dropBroken(be)
	}
	return st.closeOn(w.closeID, w.closeAt-1)
}

// errCloseRest stops a COM_STMT_CLOSE on the poller where a server's
// socket did not take it whole: a goroutine finishes it (finishClose).
var errCloseRest = errors.New("statement close goes on off the poller")
