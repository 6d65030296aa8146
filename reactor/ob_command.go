package reactor

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"time"

	"obgate/health"
	"obgate/mysqlproto"
	"obgate/route"
)

// obCommand runs the commands OceanBase mode handles itself: COM_PING
// (answered by obgate: a server session that broke is replaced anyway),
// prepared statements (obgate's own ids, prepared again where needed),
// COM_CHANGE_USER and COM_SET_OPTION (applied to every server session). It
// reports false for the others, which the common path routes and forwards.
func (s *Session) obCommand(cmd mysqlproto.Command, n int, body []byte, whole bool, start time.Time) (bool, error) {
	switch cmd {
	case mysqlproto.ComPing:
		if err := s.skipPacket(n); err != nil {
			return true, err
		}
		return true, s.writeOK(0, "")
	case mysqlproto.ComStmtPrepare:
		return true, s.obPrepare(n, start)
	case mysqlproto.ComStmtExecute, mysqlproto.ComStmtSendLongData, mysqlproto.ComStmtReset, mysqlproto.ComStmtFetch:
		return true, s.obStatement(cmd, n, body, start)
	case mysqlproto.ComStmtClose:
		return true, s.obStatementClose(n, body)
	case mysqlproto.ComChangeUser:
		return true, s.obChangeUser(n, start)
	case mysqlproto.ComSetOption:
		return true, s.obSetOption(n, body, whole, start)
	}
	return false, nil
}

// routeStatement picks and prepares the server session for a statement and
// makes it current. A server session whose sync step fails is dropped and
// another one tried, once.
func (s *Session) routeStatement(need routeNeed) (*serverConn, error) {
	// Each connection attempt has its own short_async_task_timeout (see
	// openServer), so one hung server does not use up the others' time.
	ctx := context.Background()
	var lastErr error
	for range 2 {
		be, err := s.pickServer(ctx, need)
		if err != nil {
			return nil, err
		}
		if err := s.syncServer(be); err != nil {
			inTrans, pinned := s.serverInTrans(), s.ob.pinned && be == s.ob.last
			lastErr = err
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

// obPrepare prepares a statement on a server session and gives the client
// obgate's own statement id, under which the statement may later run on
// any server session (prepared again there when needed).
func (s *Session) obPrepare(n int, start time.Time) error {
	ob := s.ob
	pkt, err := s.readPacket(n)
	if err != nil {
		return err
	}
	sql := pkt[mysqlproto.HeaderLen+1:]
	p := &prepared{sql: append([]byte(nil), sql...)}
	p.facts = route.Lex(p.sql)
	p.kind = p.facts.Kind
	kind := p.kind
	ob.route.routeBy(p.sql, &p.facts, nil)
	be, err := s.routeStatement(needAny)
	if err != nil {
		return s.writeErrorFor(err)
	}
	ob.pendingPrepare = p
	s.resendable = true // preparing changes nothing on the server
	if err := s.sendRequest(be, pkt); err != nil {
		ob.pendingPrepare = nil
		return s.answerFailure(err, kind, start)
	}
	// The request is obgate's own copy: keep it, in case the server
	// refuses it with an error another server would not give.
	s.kept, s.keptOwned = pkt, true
	_, err = s.answer(mysqlproto.ComStmtPrepare, kind, start, true)
	ob.pendingPrepare = nil
	return err
}

// obPrepared runs when a prepare OK passes through: it records the
// statement under a new client id and writes that id into the packet.
func (s *Session) obPrepared(pkt []byte) {
	ob := s.ob
	p := ob.pendingPrepare
	if p == nil || len(pkt) < 9 {
		return
	}
	serverID := binary.LittleEndian.Uint32(pkt[1:])
	p.columns = binary.LittleEndian.Uint16(pkt[5:])
	p.params = binary.LittleEndian.Uint16(pkt[7:])
	ob.nextPS++
	if ob.nextPS == 0 {
		ob.nextPS = 1
	}
	id := ob.nextPS
	if ob.ps == nil {
		ob.ps = make(map[uint32]*prepared)
	}
	ob.ps[id] = p
	s.backend.stmtSet(id, serverID)
	binary.LittleEndian.PutUint32(pkt[1:], id)
}

// obStatement runs COM_STMT_EXECUTE, _SEND_LONG_DATA, _RESET or _FETCH:
// on the server session that holds the statement's long data or cursor,
// else (outside a transaction) where it is prepared, else anywhere after
// preparing it again; the statement id is rewritten to the server's.
func (s *Session) obStatement(cmd mysqlproto.Command, n int, body []byte, start time.Time) error {
	ob := s.ob
	if len(body) < 4 {
		if err := s.skipPacket(n); err != nil {
			return err
		}
		return s.writeError(mysqlproto.NewSQLError(mysqlproto.ERNetPacketsOutOfOrder, "Malformed %s", cmd))
	}
	id := binary.LittleEndian.Uint32(body)
	ps, ok := ob.ps[id]
	if !ok {
		if err := s.skipPacket(n); err != nil {
			return err
		}
		if cmd == mysqlproto.ComStmtSendLongData {
			return nil // no answer, as a server would give none
		}
		return s.writeError(mysqlproto.NewSQLError(mysqlproto.ERUnknownStmtHandler,
			"Unknown prepared statement handler (%d) given to %s", id, cmd))
	}
	if cmd == mysqlproto.ComStmtExecute {
		ob.route.exec.Reset(body, int(ps.params), ps.types)
		ob.route.routeBy(ps.sql, &ps.facts, &ob.route.exec)
		// An execute of a statement that only reads is a read: it may go
		// again after its server broke, as the text would.
		s.resendable = !ps.facts.Incomplete && ps.facts.ReadOnly
	}
	be, sid, bound, err := s.preparedServer(ps, id)
	if err != nil {
		return s.refuse(n, err)
	}
	s.patchID, s.patchOn = sid, true
	defer func() { s.patchOn, s.retryPS = false, nil }()
	if cmd == mysqlproto.ComStmtExecute && ps.params == 0 {
		s.retryPS, s.retryPSID = ps, id
	}
	if cmd == mysqlproto.ComStmtExecute && ps.params > 0 {
		nb := (int(ps.params) + 7) / 8
		boundAt := 9 + nb // in body: id(4) flags(1) iterations(4) null bitmap
		if len(body) > boundAt {
			switch {
			case body[boundAt] == 1 && len(body) >= boundAt+1+2*int(ps.params):
				ps.types = append(ps.types[:0], body[boundAt+1:boundAt+1+2*int(ps.params)]...)
				be.stmtBound(id)
				// It carries its parameter types: any server session
				// where the statement is prepared can run it.
				s.retryPS, s.retryPSID = ps, id
			case body[boundAt] == 0 && !bound && ps.types != nil:
				// This server session never saw the parameter types.
				return s.executeWithTypes(n, ps, be, boundAt, start)
			}
		}
	}
	err = s.forward(cmd, n, ps.kind, start)
	if err != nil {
		return err
	}
	switch cmd {
	case mysqlproto.ComStmtSendLongData:
		ps.home = be
	case mysqlproto.ComStmtExecute:
		ps.home = nil
		if s.status.Has(mysqlproto.StatusCursorExists) {
			ps.home = s.backend // where it ran, after any retry
		}
	case mysqlproto.ComStmtReset:
		ps.home = nil
	}
	return nil
}

// preparedServer picks the server session for a prepared statement and
// prepares it there when it is not yet: a server that refuses the prepare
// with an error another server would not give (8001, 8002, ...) is
// dropped and the next one tried, within the retry budget, unless the
// session is bound to it.
func (s *Session) preparedServer(ps *prepared, id uint32) (*serverConn, uint32, bool, error) {
	for {
		be, err := s.statementServer(ps)
		if err != nil {
			return nil, 0, false, err
		}
		sid, bound, ok := be.stmtGet(id)
		if ok {
			return be, sid, bound, nil
		}
		sid, err = s.prepareOn(be, ps)
		if err == nil {
			be.stmtSet(id, sid)
			return be, sid, false, nil
		}
		var se *mysqlproto.SQLError
		if !errors.As(err, &se) || !route.ResendableERR(se.Code) || s.txnBefore || s.ob.pinned || s.routeBound ||
			s.resends >= s.retryBudget() {
			return nil, 0, false, err
		}
		if health.AliveFailureERR(se.Code) {
			be.health.AliveFailed(health.ERRReason(se.Code))
		}
		s.resends++
		s.tried = append(s.tried, be.addr)
		s.dropServer(be)
		s.srv.metrics.retried(se.Code)
	}
}

// statementServer picks the server session for a prepared statement.
func (s *Session) statementServer(ps *prepared) (*serverConn, error) {
	ob := s.ob
	if !s.serverInTrans() && !ob.pinned {
		if ps.home != nil && ps.home.alive() {
			if err := s.syncServer(ps.home); err == nil {
				s.useServer(ps.home)
				return ps.home, nil
			}
			s.dropServer(ps.home)
		}
	}
	return s.routeStatement(needAny)
}

// prepareOn prepares ps on be, where the client never prepared it, and
// returns be's statement id.
func (s *Session) prepareOn(be *serverConn, ps *prepared) (uint32, error) {
	payload := append([]byte{byte(mysqlproto.ComStmtPrepare)}, ps.sql...)
	sid, params, columns, err := s.internalPrepare(be, payload)
	if err != nil {
		return 0, err
	}
	if params != ps.params || columns != ps.columns {
		return 0, fmt.Errorf("statement prepared again on %s has %d parameters and %d columns, not %d and %d",
			be.addr, params, columns, ps.params, ps.columns)
	}
	return sid, nil
}

// executeWithTypes sends a COM_STMT_EXECUTE that did not carry parameter
// types to a server session that never saw them, with the types of the
// client's earlier execute put in.
func (s *Session) executeWithTypes(n int, ps *prepared, be *serverConn, boundAt int, start time.Time) error {
	pkt, err := s.readPacket(n)
	if err != nil {
		return err
	}
	body := pkt[mysqlproto.HeaderLen+1:]
	payload := make([]byte, 0, len(body)+1+len(ps.types))
	payload = append(payload, byte(mysqlproto.ComStmtExecute))
	payload = binary.LittleEndian.AppendUint32(payload, s.patchID)
	payload = append(payload, body[4:boundAt]...)
	payload = append(payload, 1)
	payload = append(payload, ps.types...)
	payload = append(payload, body[boundAt+1:]...)
	out, _ := mysqlproto.AppendPacket(nil, 0, payload)
	s.patchOn = false
	if err := s.sendRequest(be, out); err != nil {
		return s.answerFailure(err, ps.kind, start)
	}
	be.stmtBound(binary.LittleEndian.Uint32(body))
	if ok, err := s.answer(mysqlproto.ComStmtExecute, ps.kind, start, true); !ok {
		return err
	}
	ps.home = nil
	if s.status.Has(mysqlproto.StatusCursorExists) {
		ps.home = be
	}
	return nil
}

// obStatementClose closes the statement on every server session that
// prepared it. COM_STMT_CLOSE has no answer.
func (s *Session) obStatementClose(n int, body []byte) error {
	ob := s.ob
	var id uint32
	if len(body) >= 4 {
		id = binary.LittleEndian.Uint32(body)
	}
	if err := s.skipPacket(n); err != nil {
		return err
	}
	if _, ok := ob.ps[id]; !ok {
		return nil
	}
	delete(ob.ps, id)
	for _, be := range ob.servers {
		if sid, _, ok := be.stmtGet(id); ok {
			be.stmtDelete(id)
			payload := binary.LittleEndian.AppendUint32([]byte{byte(mysqlproto.ComStmtClose)}, sid)
			pkt, _ := mysqlproto.AppendPacket(nil, 0, payload)
			if err := be.writeRequest(pkt, true, true); err != nil {
				s.dropBrokenServer(be)
			}
		}
	}
	return nil
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
	return s.writeError(mysqlproto.NewSQLError(mysqlproto.CRConnHostError, "obgate: %v", err))
}

// readPacket reads one whole logical packet from the client into a new
// buffer (header of the first physical packet included, continuation
// headers removed), bounded by max_packet_size.
func (s *Session) readPacket(n int) ([]byte, error) {
	out := make([]byte, 0, mysqlproto.HeaderLen+n)
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
