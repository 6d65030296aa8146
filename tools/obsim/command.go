package obsim

import (
	"encoding/binary"
	"fmt"
	"io"
	"strconv"
	"time"

	"obgate/mysqlproto"
)

// dispatch handles one client command.
func (s *session) dispatch(pkt []byte) error {
	cmd := mysqlproto.Command(pkt[0])
	start := time.Now()
	info := ""
	switch cmd {
	case mysqlproto.ComQuery, mysqlproto.ComStmtPrepare:
		info = string(pkt[1:])
	case mysqlproto.ComStmtExecute:
		if ps := s.preparedFor(pkt); ps != nil {
			info = ps.sql
		}
	}
	s.procBegin(cmd, info, start)
	defer s.procIdle()
	switch cmd {
	case mysqlproto.ComQuit:
		return errQuit
	case mysqlproto.ComQuery:
		return s.query(info, start)
	case mysqlproto.ComProcessInfo:
		// An OBServer runs these as the statements they stand for.
		return s.query("SHOW PROCESSLIST", start)
	case mysqlproto.ComProcessKill:
		if len(pkt) < 5 {
			return s.sendErr(mysqlproto.NewSQLError(mysqlproto.ERUnknownComError, "Malformed COM_PROCESS_KILL"))
		}
		return s.query("KILL "+strconv.FormatUint(uint64(binary.LittleEndian.Uint32(pkt[1:])), 10), start)
	case mysqlproto.ComStmtPrepare:
		return s.prepare(pkt, start)
	case mysqlproto.ComStmtExecute:
		return s.execute(pkt, start)
	case mysqlproto.ComStmtClose:
		if id, ok := stmtIDOf(pkt); ok {
			delete(s.stmts, id)
		}
		_, err := s.relay(cmd, pkt, nil, false)
		return err
	case mysqlproto.ComStmtSendLongData:
		s.longData(pkt)
		_, err := s.relay(cmd, pkt, nil, false)
		return err
	case mysqlproto.ComStmtReset: // relayed below
		if ps := s.preparedFor(pkt); ps != nil {
			clear(ps.longData)
		}
	case mysqlproto.ComInitDB:
		entry := LogEntry{Command: "init_db", SQL: string(pkt[1:]), Local: true}
		res, err := s.relay(cmd, pkt, nil, false)
		if err == nil && !res.isErr {
			s.db = string(pkt[1:])
		}
		s.finishEntry(&entry, res, start)
		return s.finish(err)
	case mysqlproto.ComChangeUser:
		return s.changeUser(pkt, start)
	case mysqlproto.ComResetConnection:
		return s.resetConnection(pkt, start)
	case mysqlproto.ComSetOption:
		return s.setOption(pkt, start)
	case mysqlproto.ComBinlogDump, mysqlproto.ComBinlogDumpGTID, mysqlproto.ComRegisterSlave, mysqlproto.ComStmtBulkExecute:
		return s.sendErr(mysqlproto.NewSQLError(mysqlproto.ERUnknownComError, "Unknown command"))
	}
	_, err := s.relay(cmd, pkt, nil, false)
	return s.finish(err)
}

// finish sends what a relayed response left in the output buffer, unless
// relaying failed.
func (s *session) finish(err error) error {
	if err != nil {
		return err
	}
	return s.out.finish()
}

// relayResult is what a relayed response ended with.
type relayResult struct {
	isErr bool
	code  uint16
	// held is the final OK (framed, copied) when relay was asked to hold
	// it back; the caller sends it with sendHeld.
	held []byte
}

// finishEntry completes and records a log entry.
func (s *session) finishEntry(e *LogEntry, res relayResult, start time.Time) {
	e.Result = "ok"
	if res.isErr {
		e.Result, e.Code = "error", res.code
	}
	s.record(*e, start)
}

// placement decides where a statement "ran": its table, the partitions it
// can touch, and whether they are local to this node (leaders, or replicas
// for a weak read). Statements without a topology table are local.
func (s *session) placement(st *stmtInfo) (table string, parts []string, local, weak bool) {
	weak = (st.weak || s.weakSession()) && st.isRead()
	st.tz = s.timeZone
	if st.table == "" {
		return "", nil, true, weak
	}
	db := st.db
	if db == "" {
		db = s.db
	}
	table = db + "." + st.table
	s.c.mu.Lock()
	defer s.c.mu.Unlock()
	t := s.c.tableFor(s.tenant.name, db, st.table)
	if t == nil {
		return table, nil, true, weak
	}
	tablets, all := t.tabletsFor(st)
	local = true
	for _, tb := range tablets {
		if weak {
			local = local && tb.hasReplica(s.n.name)
		} else {
			local = local && tb.leader == s.n.name
		}
		if !all {
			parts = append(parts, tb.name)
		}
	}
	return table, parts, local, weak
}

// query handles COM_QUERY.
func (s *session) query(sql string, start time.Time) error {
	entry := LogEntry{Command: "query", SQL: sql}
	if e := s.c.faults.match(s.n.name, sql, false); e != nil {
		entry.Result, entry.Code, entry.Injected = "error", e.Code, true
		st := analyze(sql)
		entry.Table, entry.Partitions, entry.Local, entry.Weak = s.placement(st)
		s.record(entry, start)
		return s.sendErr(e)
	}
	lx := lex(sql)
	st := analyzeLexed(lx)
	var more []*stmtInfo
	if s.be.Caps.Has(mysqlproto.ClientMultiStatements) {
		more = laterStatements(sql, lx.toks)
	}
	if err := s.place(&entry, st, more); err != nil {
		return err
	}
	if st.table != "" {
		s.lastHit = entry.Local
	}

	if k, ok, err := s.tryKill(lx.toks); ok {
		entry.Local = true
		if k != nil {
			s.finishEntry(&entry, relayResult{isErr: true, code: k.Code}, start)
			if serr := s.sendErr(k); serr != nil {
				return serr
			}
			return err
		}
		s.finishEntry(&entry, relayResult{}, start)
		if err != nil {
			return err
		}
		return s.sendOK(nil)
	}
	rs, local := s.sslCipherStatus(lx.toks)
	if full, ok := showProcesslist(lx.toks); ok {
		rs, local = s.processlist(full), true
	}
	if local {
		out, seq := rs.AppendPackets(nil, s.pio.Sequence(), s.caps, s.status)
		// The final EOF is followed by the extra OK a proxy asked for, as
		// after the rows MariaDB sends.
		if n := len(out); n >= mysqlproto.HeaderLen+5 && s.sendsExtraOK(mysqlproto.ComQuery, out[n-5:]) {
			out = append(out, s.extraOK(out[n-5:], seq-1, nil)...)
		}
		s.out.write(out)
		entry.Local = true
		s.finishEntry(&entry, relayResult{}, start)
		return s.out.finish()
	}

	relaySQL := sql
	var changes []varChange
	if st.kind == stmtSet {
		var serr *mysqlproto.SQLError
		relaySQL, changes, serr = s.handleSet(sql, lx.toks)
		if serr != nil {
			s.finishEntry(&entry, relayResult{isErr: true, code: serr.Code}, start)
			return s.sendErr(serr)
		}
		if relaySQL != "" && hasConnectionIDCall(lx.toks) {
			relaySQL, _ = s.rewriteRefs(relaySQL, lex(relaySQL).toks)
		}
	} else if rewritten, changed := s.rewriteRefs(sql, lx.toks); changed {
		relaySQL = rewritten
	}

	var extra []byte
	var users userVarRefs
	if s.caps.Has(mysqlproto.ClientSessionTrack) {
		for _, ch := range changes {
			extra = mysqlproto.AppendSystemVariableState(extra, ch.name, ch.value)
		}
		if st.table != "" {
			extra = mysqlproto.AppendSystemVariableState(extra, mysqlproto.OBPartitionHitVar, hitValue(entry.Local))
		}
		if s.obClient {
			users = findUserVarAssignments(lx.toks)
		}
	}
	if relaySQL == "" {
		for _, ch := range changes {
			s.vars[ch.name] = ch.value
		}
		s.applyTimeZone()
		s.finishEntry(&entry, relayResult{}, start)
		return s.sendOK(extra)
	}
	payload := make([]byte, 0, len(relaySQL)+1)
	payload = append(payload, byte(mysqlproto.ComQuery))
	payload = append(payload, relaySQL...)
	res, err := s.relay(mysqlproto.ComQuery, payload, extra, !users.empty())
	if err == nil && res.held != nil {
		err = s.sendHeld(mysqlproto.ComQuery, &res, extra, users)
	}
	if err == nil && !res.isErr {
		for _, ch := range changes {
			s.vars[ch.name] = ch.value
		}
		s.applyTimeZone()
		if st.kind == stmtUse && st.db != "" {
			s.db = st.db
		}
	}
	s.finishEntry(&entry, res, start)
	return s.finish(err)
}

func hitValue(local bool) string {
	if local {
		return "1"
	}
	return "0"
}

// relay sends a command to MariaDB and streams the response back to the
// client packet by packet, without materialising rows. OK packets that end
// a result get extra appended to their session state (when the client
// tracks session state); schema changes in them update the session. The
// end of the response stays buffered until the caller calls finish, so that
// the statement is logged before the client sees its answer. With hold,
// an OK that ends the whole response is not written but returned in
// relayResult.held, for the caller to complete with sendHeld.
func (s *session) relay(cmd mysqlproto.Command, payload []byte, extra []byte, hold bool) (relayResult, error) {
	var res relayResult
	s.beW, _ = mysqlproto.AppendPacket(s.beW[:0], 0, payload)
	if _, err := s.be.Conn().Write(s.beW); err != nil {
		return res, err
	}
	if cap(s.beW) > 1<<20 {
		s.beW = nil
	}
	if !cmd.HasResponse() {
		return res, nil
	}
	s.scanner.Reset(cmd, s.be.Caps, s.status)
	buf := s.rbuf[:0]
	defer func() {
		if cap(buf) > 1<<20 {
			buf = nil
		}
		s.rbuf = buf[:0]
	}()
	for {
		n, ev := s.scanner.Scan(buf)
		switch ev {
		case mysqlproto.ScanNeedMore:
			s.out.write(buf[:n])
			buf = buf[:copy(buf, buf[n:])]
			if s.scanner.Done() {
				s.status = s.scanner.Status()
				return res, nil
			}
			want := max(s.scanner.Want(), len(buf)+1)
			if cap(buf) < want || cap(buf)-len(buf) < 4096 {
				nb := make([]byte, len(buf), max(want, 2*cap(buf), 16<<10))
				copy(nb, buf)
				buf = nb
			}
			m, err := io.ReadAtLeast(s.beRd, buf[len(buf):cap(buf)], 1)
			if err != nil {
				return res, fmt.Errorf("read from MariaDB: %w", err)
			}
			buf = buf[:len(buf)+m]
		case mysqlproto.ScanTerminator:
			pkt := s.scanner.Packet()
			end := n - len(pkt) - mysqlproto.HeaderLen
			s.out.write(buf[:end])
			if hold && s.scanner.Done() && s.reportsState(cmd, pkt) {
				res.held = append([]byte(nil), buf[end:n]...)
			} else {
				s.out.write(s.terminator(cmd, buf[end:n], pkt, extra, nil, &res))
				if s.scanner.Done() && s.sendsExtraOK(cmd, pkt) {
					s.out.write(s.extraOK(pkt, buf[end+3], extra))
				}
			}
			buf = buf[:copy(buf, buf[n:])]
			if s.scanner.Done() {
				s.status = s.scanner.Status()
				return res, nil
			}
		case mysqlproto.ScanPrepared:
			// The prepare OK; definitions may follow.
			s.out.write(buf[:n])
			buf = buf[:copy(buf, buf[n:])]
			if s.scanner.Done() {
				s.status = s.scanner.Status()
				return res, nil
			}
		case mysqlproto.ScanLocalInfile:
			s.out.write(buf[:n])
			buf = buf[:copy(buf, buf[n:])]
			if err := s.out.finish(); err != nil {
				return res, err
			}
			if err := s.relayInfile(s.scanner.LastSequence() + 1); err != nil {
				return res, err
			}
		default:
			return res, fmt.Errorf("MariaDB response: %v", s.scanner.Err())
		}
	}
}

// sendsExtraOK reports whether a response that ended with pkt is followed
// by OceanBase's extra OK packet: for a proxy that negotiated
// EXTRA_OK_PACKET_FOR_STATISTICS, after the EOF that ends the rows of the
// last result set of a COM_QUERY or COM_STMT_EXECUTE (not a cursor's
// EOF), the only place an EOF-terminated result set can report session
// state such as ob_proxy_partition_hit.
func (s *session) sendsExtraOK(cmd mysqlproto.Command, pkt []byte) bool {
	if !s.obCaps.Has(mysqlproto.OBCapExtraOKPacketForStatistics) || s.be.Caps.Has(mysqlproto.ClientDeprecateEOF) ||
		(cmd != mysqlproto.ComQuery && cmd != mysqlproto.ComStmtExecute) || !mysqlproto.IsEOFPacket(pkt) {
		return false
	}
	eof, ok := mysqlproto.ParseEOF(pkt)
	return ok && !eof.Status.Has(mysqlproto.StatusCursorExists) && !eof.Status.Has(mysqlproto.StatusMoreResultsExists)
}

// extraOK builds the extra OK packet that follows the final EOF (whose
// sequence id is seq): the EOF's status and warnings, and obsim's session
// state (extra).
func (s *session) extraOK(eofPkt []byte, seq byte, extra []byte) []byte {
	eof, _ := mysqlproto.ParseEOF(eofPkt)
	ok := mysqlproto.OK{Status: eof.Status, Warnings: eof.Warnings}
	if len(extra) > 0 && s.caps.Has(mysqlproto.ClientSessionTrack) {
		ok.SessionState = extra
		ok.Status |= mysqlproto.StatusSessionStateChange
	}
	out, _ := mysqlproto.AppendPacket(nil, seq+1, mysqlproto.AppendOK(nil, ok, s.caps))
	return out
}

// reportsState reports whether the terminating packet pkt is an OK that
// can carry session state to the client: an OK, or the OK-as-EOF that ends
// a result set under DEPRECATE_EOF, of a command other than
// COM_STMT_PREPARE, for a client that tracks session state.
func (s *session) reportsState(cmd mysqlproto.Command, pkt []byte) bool {
	isOK := pkt[0] == mysqlproto.OKHeader || (pkt[0] == mysqlproto.EOFHeader && s.be.Caps.Has(mysqlproto.ClientDeprecateEOF))
	return isOK && cmd != mysqlproto.ComStmtPrepare && s.caps.Has(mysqlproto.ClientSessionTrack)
}

// terminator returns the bytes to send for a terminating packet: the
// original, or an OK with extra session state appended (and, when users
// is not empty, merged with the user variables as an OBServer reports
// them).
func (s *session) terminator(cmd mysqlproto.Command, raw, pkt, extra []byte, users []varChange, res *relayResult) []byte {
	if pkt[0] == mysqlproto.ERRHeader {
		e, _ := mysqlproto.ParseERR(pkt)
		res.isErr, res.code = true, e.Code
		return raw
	}
	if !s.reportsState(cmd, pkt) {
		return raw
	}
	ok, good := mysqlproto.ParseOK(pkt, s.be.Caps)
	if !good {
		return raw
	}
	it := mysqlproto.SessionStates(ok.SessionState)
	for {
		typ, data, more := it.Next()
		if !more {
			break
		}
		if typ == mysqlproto.SessionTrackSchema {
			if name, _, good := mysqlproto.ReadLenEncString(data, 0); good {
				s.db = string(name)
			}
		}
	}
	switch {
	case len(users) > 0:
		ok.SessionState = userVarState(ok.SessionState, extra, users)
	case len(extra) > 0:
		ok.SessionState = append(append([]byte(nil), ok.SessionState...), extra...)
	default:
		return raw
	}
	var payload []byte
	if pkt[0] == mysqlproto.OKHeader {
		payload = mysqlproto.AppendOK(nil, ok, s.caps)
	} else {
		payload = mysqlproto.AppendOKAsEOF(nil, ok, s.caps)
	}
	out, _ := mysqlproto.AppendPacket(nil, raw[3], payload)
	return out
}

// sendHeld completes a response whose final OK relay held back: it reads
// the user variables the statement may have assigned and writes the OK
// with them (and extra) in its session state.
func (s *session) sendHeld(cmd mysqlproto.Command, res *relayResult, extra []byte, refs userVarRefs) error {
	users, err := s.readUserVars(refs)
	if err != nil {
		return fmt.Errorf("read user variables from MariaDB: %w", err)
	}
	s.out.write(s.terminator(cmd, res.held, res.held[mysqlproto.HeaderLen:], extra, users, res))
	res.held = nil
	return nil
}

// relayInfile copies the client's LOCAL INFILE packets to MariaDB up to and
// including the empty one.
func (s *session) relayInfile(seq uint8) error {
	s.pio.SetSequence(seq)
	for {
		p, err := s.pio.ReadPacket()
		if err != nil {
			return err
		}
		s.beW, seq = mysqlproto.AppendPacket(s.beW[:0], seq, p)
		if _, err := s.be.Conn().Write(s.beW); err != nil {
			return err
		}
		if len(p) == 0 {
			return nil
		}
	}
}

// sendOK answers the current command with an OK.
func (s *session) sendOK(state []byte) error {
	ok := mysqlproto.OK{Status: s.status}
	if s.caps.Has(mysqlproto.ClientSessionTrack) {
		ok.SessionState = state
	}
	s.out.writePacket(s.pio.Sequence(), mysqlproto.AppendOK(nil, ok, s.caps))
	return s.out.finish()
}

// sendErr answers the current command with an ERR.
func (s *session) sendErr(e *mysqlproto.SQLError) error {
	s.out.writePacket(s.pio.Sequence(), e.AppendPacket(nil))
	return s.out.finish()
}
