package reactor

import (
	"errors"
	"time"

	"obgate/config"
	"obgate/internal/failure"
	"obgate/reactor/connio"
	"obgate/reactor/prepared"

	"obgate/mysqlproto"
	"obgate/route"
)

// classifyLen is the largest command the poller serves itself (the
// default of request_buffer_length, ODP's 4 KiB).
const classifyLen = 4096

// factsLen is how much of a command obgate reads before it decides what
// the command is and where it goes: request_buffer_length, at most one
// chunk (64 KiB). A longer statement is routed by that prefix (its facts
// say Incomplete) and is never sent again to another server, as ODP treats
// a request longer than its request buffer.
func factsLen(cfg *config.Config) int {
	return int(min(cfg.RequestBufferLength, connio.ChunkSize))
}

// serveCommand reads one command from the client and answers it. It runs
// on the goroutine that owns the session and consumes exactly the
// command's packets, or returns an error that ends the session.
func (s *Session) serveCommand() error {
	if s.st != nil {
		s.st.releaseKept() // a command that ended early may still hold its request
	}
	s.drv.takeStatement()
	hdr, err := s.client.io.Peek(mysqlproto.HeaderLen)
	if err != nil {
		return quit(QuitClientNetwork, err)
	}
	n, seq := mysqlproto.ParseHeader(hdr)
	s.client.replySeq = seq + 1
	if seq != 0 {
		return quitWith(QuitClientProto, mysqlproto.ErrPacketSequence,
			mysqlproto.NewSQLError(mysqlproto.ERNetPacketsOutOfOrder, "Got packets out of order"))
	}
	if n == 0 {
		return quitWith(QuitClientProto, mysqlproto.ErrMalformed,
			mysqlproto.NewSQLError(mysqlproto.ERUnknownComError, "Empty command packet"))
	}
	s.cfg = s.srv.cfg.Load()
	look := factsLen(s.cfg)
	head, err := s.client.io.Peek(mysqlproto.HeaderLen + min(n, look))
	if err != nil {
		return quit(QuitClientNetwork, err)
	}
	cmd := mysqlproto.Command(head[mysqlproto.HeaderLen])
	body := head[mysqlproto.HeaderLen+1:] // borrowed until the packet is consumed
	whole := n <= look
	s.activity.curCmd.Store(int32(cmd))
	start := time.Now()
	s.activity.stmtCount.Add(1)

	if s.admin {
		return s.serveAdmin(cmd, n, body, whole)
	}
	s.side.begin()
	kind := route.StmtOther
	need := needAny
	switch cmd {
	case mysqlproto.ComQuit:
		return errClientQuit
	case mysqlproto.ComQuery:
		f := s.st.lexStatement(body, whole)
		kind = f.Kind
		if s.st.answersItself(f) {
			if err := s.st.pace().mayWait(); err != nil {
				return err
			}
		}
		if !prepared.KeepsParse(f) {
			s.stmts.StateChanged() // kept statements may prepare differently now
		}
		if handled, err := s.st.serveLocally(n, body, whole, f, start); handled {
			return err
		}
		if handled, err := s.side.query(n, body, whole, f, start); handled {
			return err
		}
		need = s.st.noteStatement(f, whole)
		s.side.routeQuery(body, f)
	default:
		if !prepared.KeepsStatements(cmd) {
			s.stmts.StateChanged() // kept statements may prepare differently now
		}
		spec := &commands[cmd]
		if spec.refused {
			if err := s.client.skipPacket(n); err != nil {
				return err
			}
			return s.writeError(mysqlproto.NewSQLError(mysqlproto.ERNotSupportedYet, "obgate does not relay %s", cmd))
		}
		if s.txnBroken {
			if handled, err := s.st.brokenTxnCommand(cmd, spec.inBrokenTxn, n, start); handled {
				return err
			}
		}
		if spec.serve != nil {
			if handled, err := spec.serve(s, cmd, n, body, whole, start); handled {
				return err
			}
		}
		if byMode := spec.byMode[s.side.column]; byMode != nil {
			if handled, err := byMode(s, cmd, n, body, whole, start); handled {
				return err
			}
		}
	}
	s.side.noteState(cmd, &s.st.facts, body, whole)
	if _, err := s.side.serverFor(need); err != nil {
		return s.st.refuse(n, err)
	}
	return s.st.forward(cmd, n, kind, start)
}

// answersItself reports whether obgate may answer a COM_QUERY with facts
// f itself (internal commands, KILL), which may wait.
func (st *statement) answersItself(f *route.Facts) bool {
	if f.Kind == route.StmtKill {
		return true
	}
	return st.s.srv.interceptor != nil && maybeInternal(route.StmtInfo{Kind: f.Kind, Second: f.Second})
}

// noteStatement records what the facts of a COM_QUERY mean for the
// session: whether it must run where the previous statement ran (the
// returned need), whether it leaves state there (a pin, applied once it
// succeeded), and whether it may be sent again after a server break. For a
// statement longer than obgate reads, the pins of its first part count (a
// lower bound); a long statement is not bound to a server that may be
// gone.
func (st *statement) noteStatement(f *route.Facts, whole bool) routeNeed {
	st.pinCandidate = f.Pins.Holds()
	st.resendable = whole && f.ReadOnly && !f.Incomplete
	if f.Pins.NeedsLast() {
		return needLast
	}
	return needAny
}

// forward sends the client's command to the server and streams the answer.
func (st *statement) forward(cmd mysqlproto.Command, n int, kind route.StmtKind, start time.Time) error {
	s := st.s
	st.beforeRequest()
	sent, err := st.relayPacket(n, true)
	s.countIn(int(sent))
	if err != nil {
		st.releaseKept()
		return st.answerFailure(err, kind, start)
	}
	if !cmd.HasResponse() {
		st.releaseKept()
		return nil
	}
	_, err = st.answer(cmd, kind, start, true)
	return err
}

// answer streams the server's answer to cmd and accounts for it; with
// after, afterResponse learns from it. A statement that failed without
// ending the session (a statementError) gets its ERR here. ok reports
// whether the server's answer was relayed.
func (st *statement) answer(cmd mysqlproto.Command, kind route.StmtKind, start time.Time, after bool) (ok bool, err error) {
	return st.pace().answer(st, cmd, kind, start, after)
}

// answerFrom is answer once the first try's relay ended with o: the
// statement is sent again while the resend rules allow it, and the
// answer is accounted for.
func (st *statement) answerFrom(o outcome, cmd mysqlproto.Command, kind route.StmtKind, start time.Time, after bool) (ok bool, err error) {
	s := st.s
	for o.stage == stageSent && st.mayResend(o) {
		if !st.resendKept(o) {
			break
		}
		o = st.relay(cmd)
	}
	st.releaseKept()
	if o.fail == failure.HeldERR {
		if st.endsTxnByClosing() {
			s.countStatement(kind, false, start)
			return true, st.rollbackByClosing(o.errCode)
		}
		if st.commitsTxn() {
			s.countStatement(kind, true, start)
			return false, st.commitRefused(o.errCode)
		}
		// Nowhere else to send it: the client gets the server's ERR.
		o.written, o.err = st.deliverHeldERR()
		o.fail, o.stage = failure.None, stageAnswered
	}
	s.countOut(int(o.written))
	if err := o.err; err != nil {
		var se *statementError
		if errors.As(err, &se) {
			if se.txnBroken {
				s.markTxnBroken()
			}
			s.countStatement(kind, true, start)
			return false, s.writeError(se.reply)
		}
		return false, err
	}
	failed := s.scanner.IsErr()
	if failed {
		s.srv.metrics.sqlError(s.scanner.ErrCode())
	}
	if after {
		st.afterResponse(cmd, failed)
	}
	s.countStatement(kind, failed, start)
	return true, nil
}

// afterResponse updates session facts from a complete response.
func (st *statement) afterResponse(cmd mysqlproto.Command, failed bool) {
	s := st.s
	s.side.afterResponse(cmd, failed)
	inTrans := s.status.Has(mysqlproto.StatusInTrans)
	if s.activity.inTrans.Load() != inTrans {
		s.activity.inTrans.Store(inTrans)
	}
	switch cmd {
	case mysqlproto.ComQuery, mysqlproto.ComStmtExecute:
		if !inTrans && !failed {
			s.activity.transCount.Add(1)
			s.series.of(s.srv.metrics, s.published.db).countTransaction()
		}
	case mysqlproto.ComInitDB:
		if !failed {
			s.setDB(st.pendingDB)
		}
	case mysqlproto.ComChangeUser:
		if !failed {
			s.status &^= mysqlproto.StatusInTrans
			s.activity.inTrans.Store(false)
			if st.pendingUser != "" {
				// SHOW PROXYSESSION shows, and filters by, the new user.
				s.published.mu.Lock()
				s.published.user = st.pendingUser
				s.identity = changedUser(st.pendingUser)
				s.published.mu.Unlock()
			}
		}
	}
}

// serveLocally answers the COM_QUERY statements obgate runs itself: ODP
// internal commands (through the interceptor) and KILL with obgate's
// connection ids. It reports false for everything else.
func (st *statement) serveLocally(n int, body []byte, whole bool, f *route.Facts, start time.Time) (bool, error) {
	s := st.s
	if !whole {
		return false, nil
	}
	info := route.StmtInfo{Kind: f.Kind, Second: f.Second}
	if s.srv.interceptor != nil && maybeInternal(info) {
		reply := Reply{s: s}
		if s.srv.interceptor.Intercept(s, body, info, &reply) {
			if err := s.client.skipPacket(n); err != nil {
				return true, err
			}
			s.countStatement(info.Kind, reply.failed, start)
			return true, reply.err
		}
	}
	if info.Kind == route.StmtKill {
		return killRun{st}.handleKill(n, f, start)
	}
	return false, nil
}

// lexStatement reads the facts of the COM_QUERY statement in body once,
// into the session's own Facts (valid until the next statement; its table
// names are borrowed from body). A statement longer than obgate looks at
// (!whole) is read as a prefix: its facts say so (Incomplete).
func (st *statement) lexStatement(body []byte, whole bool) *route.Facts {
	if whole {
		st.facts = route.Lex(body)
	} else {
		st.facts = route.LexPrefix(body)
	}
	return &st.facts
}

// maybeInternal reports whether a statement may be an ODP internal command.
func maybeInternal(info route.StmtInfo) bool {
	switch info.Kind {
	case route.StmtShow:
		return (len(info.Second) > 5 && info.Second[:5] == "PROXY") || info.Second == "PROCESSLIST"
	case route.StmtPing, route.StmtAlter:
		return info.Second == "PROXY" || info.Second == "PROXYCONFIG"
	case route.StmtSelect:
		return info.Second == "PROXY_VERSION" || info.Second == "PROXY_STATUS"
	case route.StmtKill:
		return info.Second == "PROXYSESSION"
	case route.StmtExplain:
		return info.Second == "ROUTE"
	}
	return false
}

// writeError answers the current command with an ERR packet.
func (s *Session) writeError(e *mysqlproto.SQLError) error {
	s.srv.metrics.sqlError(e.Code)
	return s.client.writePacket(e.AppendPacket(nil))
}

// writeOK answers the current command with an OK packet.
func (s *Session) writeOK(affected uint64, info string) error {
	return s.client.writePacket(mysqlproto.AppendOK(nil, mysqlproto.OK{AffectedRows: affected, Status: s.status, Info: []byte(info)}, s.caps))
}

// serveAdmin answers a command of an administrator session: every
// statement goes to the interceptor; nothing reaches a server.
func (s *Session) serveAdmin(cmd mysqlproto.Command, n int, body []byte, whole bool) error {
	var query []byte
	if cmd == mysqlproto.ComQuery && whole {
		query = append([]byte(nil), body...)
	}
	if cmd == mysqlproto.ComQuit {
		return errClientQuit
	}
	if err := s.client.skipPacket(n); err != nil {
		return err
	}
	switch commands[cmd].admin {
	case adminQuery:
		if query == nil {
			return s.writeError(mysqlproto.NewSQLError(mysqlproto.ERNetPacketTooLarge, "internal command too long"))
		}
		info := route.Classify(query)
		if s.identity.User == route.UserInspector && !(info.Kind == route.StmtPing && info.Second == "PROXY") {
			return s.writeError(mysqlproto.NewSQLError(mysqlproto.ERSpecificAccessDenied, "inspector@proxysys may only run PING PROXY"))
		}
		reply := Reply{s: s}
		if s.srv.interceptor != nil && s.srv.interceptor.Intercept(s, query, info, &reply) {
			return reply.err
		}
		return s.writeError(mysqlproto.NewSQLError(mysqlproto.ERNotSupportedYet, "obgate cannot run this statement for root@proxysys"))
	case adminOK:
		return s.writeOK(0, "")
	case adminSilent:
		return nil
	}
	return s.writeError(mysqlproto.NewSQLError(mysqlproto.ERNotSupportedYet, "obgate does not support %s for root@proxysys", cmd))
}

// Reply lets an Interceptor answer the statement it handles. Each method
// sends a complete answer; call exactly one of them once.
type Reply struct {
	s      *Session
	err    error
	failed bool
	done   bool
}

var errReplyTwice = errors.New("reactor: interceptor answered twice")

func (r *Reply) record(err error) error {
	if r.done {
		return errReplyTwice
	}
	r.done = true
	if err != nil && r.err == nil {
		r.err = err
	}
	return err
}

// OK answers with an OK packet.
func (r *Reply) OK(affected uint64, info string) error { return r.record(r.s.writeOK(affected, info)) }

// Error answers with an ERR packet.
func (r *Reply) Error(e *mysqlproto.SQLError) error {
	r.failed = true
	return r.record(r.s.writeError(e))
}

// ResultSet answers with a text result set.
func (r *Reply) ResultSet(rs *mysqlproto.ResultSet) error {
	s := r.s
	out, next := rs.AppendPackets(nil, s.client.replySeq, s.caps, s.status)
	s.client.replySeq = next
	if err := s.client.io.Write(out); err != nil {
		return r.record(quit(QuitClientNetwork, err))
	}
	return r.record(wrapClient(s.client.io.Flush()))
}

func wrapClient(err error) error {
	if err != nil {
		return quit(QuitClientNetwork, err)
	}
	return nil
}
