package obsim

import (
	"encoding/binary"
	"time"

	"obgate/mysqlproto"
)

// Prepared statements: the session keeps the text of each statement it
// prepared, lexed once, and locates every COM_STMT_EXECUTE with the
// parameter values it binds (execparams.go), as the text form with those
// literals would be located.

// prepared is a statement prepared on the session's MariaDB connection.
// Only the session's goroutine uses it.
type prepared struct {
	sql     string
	lx      lexResult
	nparams int
	// types are the parameter types (2 bytes each) the last execute that
	// bound them sent, for executes that do not.
	types []byte
	// longData marks the parameters given with COM_STMT_SEND_LONG_DATA
	// since the last execute (their values are not in the execute packet).
	longData []bool
}

// lastStmtID is the statement id MariaDB reads as "the statement prepared
// last on this connection".
const lastStmtID = 0xffffffff

// preparedFor returns the statement a COM_STMT_* packet names, or nil.
func (s *session) preparedFor(pkt []byte) *prepared {
	id, ok := stmtIDOf(pkt)
	if !ok {
		return nil
	}
	if id == lastStmtID {
		id = s.lastStmt
	}
	return s.stmts[id]
}

// prepare handles COM_STMT_PREPARE.
//
// Called by the session's goroutine, as the handlers below.
func (s *session) prepare(pkt []byte, start time.Time) error {
	sqlText := string(pkt[1:])
	entry := LogEntry{Command: "prepare", SQL: sqlText, Local: true}
	if e := s.c.faults.match(s.n.name, sqlText, false); e != nil {
		entry.Result, entry.Code, entry.Injected = "error", e.Code, true
		s.record(entry, start)
		return s.sendErr(e)
	}
	// What MariaDB cannot evaluate as an OBServer would (CONNECTION_ID(),
	// which OceanBase evaluates as the session's id whatever the protocol,
	// ObExprConnectionId::eval_connection_id; @@ob_* variables;
	// ob_version()) is rewritten as for a text query.
	lx := lex(sqlText)
	if rewritten, changed := s.rewriteRefs(sqlText, lx.toks); changed {
		pkt = append([]byte{byte(mysqlproto.ComStmtPrepare)}, rewritten...)
	}
	res, err := s.relay(mysqlproto.ComStmtPrepare, pkt, nil, false)
	if err == nil && !res.isErr {
		id, _, nparams := s.scanner.Prepared()
		s.stmts[id] = &prepared{sql: sqlText, lx: lx, nparams: int(nparams), longData: make([]bool, nparams)}
		s.lastStmt = id
	}
	s.finishEntry(&entry, res, start)
	return s.finish(err)
}

// longData notes a COM_STMT_SEND_LONG_DATA (statement id, parameter
// number, data): that parameter's value is not in the next execute.
func (s *session) longData(pkt []byte) {
	ps := s.preparedFor(pkt)
	if ps == nil || len(pkt) < 7 {
		return
	}
	if p := int(binary.LittleEndian.Uint16(pkt[5:])); p < len(ps.longData) {
		ps.longData[p] = true
	}
}

// execute handles COM_STMT_EXECUTE: the statement is located with its
// bound parameters, pays the remote-plan cost when remote, and is relayed.
func (s *session) execute(pkt []byte, start time.Time) error {
	ps := s.preparedFor(pkt)
	var sqlText string
	var lx lexResult
	var params []param
	if ps != nil {
		sqlText, lx = ps.sql, ps.lx
		params = decodeExecParams(pkt, ps)
		clear(ps.longData) // the server forgets long data after an execute
	}
	st := analyzeBound(lx, params)
	entry := LogEntry{Command: "execute", SQL: sqlText}
	if e := s.c.faults.match(s.n.name, sqlText, false); e != nil {
		entry.Table, entry.Partitions, entry.Local, entry.Weak = s.placement(st)
		entry.Result, entry.Code, entry.Injected = "error", e.Code, true
		s.record(entry, start)
		return s.sendErr(e)
	}
	if err := s.place(&entry, st, nil); err != nil {
		return err
	}
	var extra []byte
	if st.table != "" {
		s.lastHit = entry.Local
		if s.caps.Has(mysqlproto.ClientSessionTrack) {
			extra = mysqlproto.AppendSystemVariableState(nil, mysqlproto.OBPartitionHitVar, hitValue(entry.Local))
		}
	}
	var users userVarRefs
	if s.obClient && s.caps.Has(mysqlproto.ClientSessionTrack) {
		users = findUserVarAssignments(lx.toks)
	}
	res, err := s.relay(mysqlproto.ComStmtExecute, pkt, extra, !users.empty())
	if err == nil && res.held != nil {
		err = s.sendHeld(mysqlproto.ComStmtExecute, &res, extra, users)
	}
	s.finishEntry(&entry, res, start)
	return s.finish(err)
}
