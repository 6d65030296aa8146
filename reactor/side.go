package reactor

import (
	"context"
	"time"
	"unsafe"

	"obgate/config"
	"obgate/mysqlproto"
	"obgate/route"
)

// serverSide is everything a session does differently per routing mode:
// the login, how a statement's server session is obtained and brought up
// to date, the commands a mode handles itself, what is learned from the
// answer, what may be done when the server fails before answering, KILL,
// and how server sessions end. The rest of the package calls it and
// checks no mode. A session's side is made with the session (setSide) and
// never changes; administrator sessions have one too and never use it to
// relay. Only the goroutine running the session's command (or its login)
// calls it, except where a method says otherwise.
type serverSide interface {
	// login logs the client in (handshake), before deadline.
	login(ctx context.Context, count int64, cfg *config.Config, deadline time.Time) error
	// begin starts a command (serveCommand): the mode's per-command state
	// is reset.
	begin()
	// routeQuery gives the router a COM_QUERY's text and facts.
	routeQuery(body []byte, f *route.Facts)
	// noteState records what the command may leave on its server before
	// it is sent.
	noteState(cmd mysqlproto.Command, f *route.Facts, body []byte, whole bool)
	// commandDone runs when a command ended (afterCommand).
	commandDone()
	// rewritesAnswers reports whether answers are rewritten in place on
	// their way to the client (the relay then reads them into a chunk
	// instead of viewing the server connection's buffer).
	rewritesAnswers() bool
	// clusterOf is the OceanBase cluster the session is logged into; nil
	// in mysql routing mode.
	clusterOf() *route.Cluster
	// explain is EXPLAIN ROUTE (ExplainRoute).
	explain(stmt []byte) RouteExplanation
	// current is the server session the last statement used, or nil.
	current() *serverConn
	// killSession runs KILL [QUERY] of target, another session.
	killSession(k killStmt, target *Session, tinfo SessionInfo, start time.Time) error
	// serverIDOwner is the session holding the server connection id, or
	// nil.
	serverIDOwner(id uint32) *Session
	// sendKill sends stmt, a KILL obgate built, to the current server and
	// answers the client.
	sendKill(k killStmt, stmt []byte, start time.Time) error
	// txnBroke runs when the session enters the broken-transaction state.
	txnBroke()
	// closeAll closes every server session (teardown).
	closeAll()
	// serverGone is told, on the server watch's goroutine, that a server
	// closed be.
	serverGone(be *serverConn)
	// closedIdle reports that the session must close because its server
	// closed its connection; any goroutine may call it.
	closedIdle() bool
	// command runs a command the mode handles its own way, other than
	// COM_QUERY, and reports whether it did; when it did not, the common
	// path routes and forwards the command, counted as kind.
	command(cmd mysqlproto.Command, n int, body []byte, whole bool, start time.Time) (kind route.StmtKind, handled bool, err error)
	// query runs what the mode does itself with a COM_QUERY (a held
	// transaction statement) and reports whether it answered.
	query(n int, body []byte, whole bool, f *route.Facts, start time.Time) (bool, error)
	// acquire makes the server session that will run the statement
	// current and brings it up to date; an error is answered with refuse.
	acquire(need routeNeed) error
	// answerTimeout bounds the wait for the server's answer; 0 means no
	// bound (the server enforces its own).
	answerTimeout() time.Duration
	// terminator learns from the OK, EOF or ERR that ended a result (the
	// scanner's packet, ending at buf[dec]) and may rewrite it in buf; it
	// returns the buffer (a bigger one when the packet grew) and the
	// shifted positions.
	terminator(buf []byte, dec, end int) ([]byte, int, int)
	// routeBy gives the router the statement a prepare or (with its
	// body) an execute of ps runs.
	routeBy(ps *prepared, execBody []byte)
	// serverFor makes the server session that runs the next statement
	// current, brought up to date, and returns it (acquire's work).
	serverFor(need routeNeed) (*serverConn, error)
	// statementServer is serverFor for an execute (or long data, reset,
	// fetch) of ps: where its long data or cursor is, when that matters.
	statementServer(ps *prepared) (*serverConn, error)
	// serverSessions are the session's open server sessions.
	serverSessions() []*serverConn
	// dropBroken forgets a server session a command that does not route
	// found broken (COM_STMT_CLOSE, a KILL of the session's own server).
	dropBroken(be *serverConn)
	// learnState learns from the session-state changes of an OK that
	// answered one of obgate's own commands.
	learnState(state []byte, status mysqlproto.ServerStatus)
	// bound reports whether the session is tied to its current server by
	// state left there, so no statement may go elsewhere.
	bound() bool
	// candidates is how many servers the current statement could go to
	// (for the retry budget).
	candidates() int
	// afterResponse updates the mode's facts after a complete response.
	afterResponse(cmd mysqlproto.Command, failed bool)
	// refusedWrite is called when the server refused a one-piece request
	// (nothing of it ran there); it may send p elsewhere and returns the
	// error that stands.
	refusedWrite(p []byte, err error) error
	// brokeBeforeAnswer is called when the server connection failed
	// before any byte of the answer reached the client; it returns the
	// error the relay ends with.
	brokeBeforeAnswer(err error) error
	// holdsERR reports whether an ERR with code, the whole answer, is held
	// back from the client so that the statement can go elsewhere.
	holdsERR(code uint16) bool
	// drop forgets a server session that failed a statement about to go
	// elsewhere; replacement returns the server session it goes to.
	drop(be *serverConn)
	replacement() (*serverConn, error)
}

// mysqlSide is the server side of mysql routing mode: one server session
// at a time, its answers relayed as they are; a session that left no
// state on it moves to another server when it fails (mysql_move.go).
type mysqlSide struct {
	s    *Session  // the client session this is the server side of
	move moveLogin // what it takes to log the client in elsewhere
}

// login: mysqlHandshake.
func (m *mysqlSide) login(ctx context.Context, count int64, cfg *config.Config, deadline time.Time) error {
	return m.s.mysqlHandshake(ctx, count, cfg, deadline)
}

func (m *mysqlSide) begin() {}

func (m *mysqlSide) routeQuery([]byte, *route.Facts) {}

func (m *mysqlSide) noteState(cmd mysqlproto.Command, f *route.Facts, body []byte, whole bool) {
	m.noteMoveState(cmd, f, body, whole)
}

// commandDone publishes whether the session may move, for the server
// watch's goroutine.
func (m *mysqlSide) commandDone() {
	if m.move.stage1 != nil {
		m.move.canMove.Store(m.movableOutsideTxn())
	}
}

// rewritesAnswers: answers are relayed as they are.
func (m *mysqlSide) rewritesAnswers() bool { return false }

func (m *mysqlSide) clusterOf() *route.Cluster { return nil }

func (m *mysqlSide) explain([]byte) RouteExplanation {
	return RouteExplanation{Err: ErrNotOceanBase}
}

func (m *mysqlSide) txnBroke() {}

// closeAll closes the one server session, or the one the login opened.
func (m *mysqlSide) closeAll() {
	if be := m.s.backend; be != nil {
		be.close()
	} else if be := m.s.sharedBackend.Load(); be != nil {
		be.close()
	}
}

func (m *mysqlSide) command(cmd mysqlproto.Command, n int, body []byte, whole bool, start time.Time) (route.StmtKind, bool, error) {
	return m.s.mysqlCommand(cmd, body, whole), false, nil
}

func (m *mysqlSide) query(n int, _ []byte, _ bool, f *route.Facts, start time.Time) (bool, error) {
	if !m.s.txnBroken {
		return false, nil
	}
	if f.Txn == route.TxnRollback && f.Chain && !f.MultiStatement {
		// The server the session moves to runs it: it rolls back nothing
		// and opens the transaction the client asked for.
		m.s.endBrokenTxn()
		return false, nil
	}
	return true, m.s.brokenTxnStatement(n, f, start)
}

// acquire: the session's one server session runs everything; when its
// connection is gone, a session that may move logs in on another server.
func (m *mysqlSide) acquire(need routeNeed) error {
	_, err := m.serverFor(need)
	return err
}

func (m *mysqlSide) serverFor(routeNeed) (*serverConn, error) {
	s := m.s
	if !s.backend.serverLost() {
		return s.backend, nil
	}
	if s.backend.peerGone.Load() && m.movableOutsideTxn() && s.srv.serverAnswers(s.backend.addr) {
		// The server closed the connection and still greets: it closed
		// it on purpose (wait_timeout, KILL); the session ends with it.
		m.move.closedOnPurpose.Store(true)
	}
	if s.inTrans.Load() && m.movableOutsideTxn() {
		return nil, errTxnServerLost // the transaction is lost; the session moves after it
	}
	if !m.movable() {
		return nil, errServerGone
	}
	return m.moveServer()
}

// statementServer: the one server session, unless the statement's long
// data or cursor was on a server the session has left.
func (m *mysqlSide) statementServer(ps *prepared) (*serverConn, error) {
	be, err := m.serverFor(needAny)
	if err == nil && ps.home != nil && ps.home != be {
		ps.home = nil
		return nil, errStatementHomeLost
	}
	return be, err
}

func (m *mysqlSide) routeBy(*prepared, []byte) {}

// serverSessions is the session's one server session, as a slice of the
// Session's own field (no allocation).
func (m *mysqlSide) serverSessions() []*serverConn {
	if m.s.backend == nil || m.s.backend.serverLost() {
		return nil
	}
	return unsafe.Slice(&m.s.backend, 1)
}

// dropBroken: the connection closes; the next statement moves the session
// (or finds its transaction lost).
func (m *mysqlSide) dropBroken(be *serverConn) {
	if m.s.inTrans.Load() {
		m.s.markTxnBroken()
	}
	be.close()
}

func (m *mysqlSide) learnState(state []byte, _ mysqlproto.ServerStatus) { m.s.learnSessionState(state) }

func (m *mysqlSide) bound() bool { return !m.movable() }

func (m *mysqlSide) candidates() int { return len(serverAddrs(m.s.cfg)) }

func (m *mysqlSide) answerTimeout() time.Duration { return 0 }

func (m *mysqlSide) terminator(buf []byte, dec, end int) ([]byte, int, int) {
	m.s.onTerminator(&m.s.scanner)
	return buf, dec, end
}

func (m *mysqlSide) afterResponse(cmd mysqlproto.Command, failed bool) {
	m.afterMoveState(cmd, failed)
}

func (m *mysqlSide) refusedWrite(_ []byte, err error) error { return err }

// brokeBeforeAnswer: a session that may move gets ERR 4012 / 25000,
// OceanBase's "Transaction result is unknown" (the statement
// may have run) and moves with its next statement, unless the statement
// is sent again; any other session gets an ERR and ends.
func (m *mysqlSide) brokeBeforeAnswer(err error) error {
	s := m.s
	if m.movableOutsideTxn() && !s.backend.closed.Load() && s.srv.serverAnswers(s.backend.addr) {
		// The server broke the connection and still greets: it closed
		// it on purpose (KILL); the session ends with it.
		m.move.closedOnPurpose.Store(true)
	}
	if s.inTrans.Load() && m.movableOutsideTxn() {
		return s.transactionBroke(err)
	}
	if !m.movable() {
		return quitWith(QuitServerNetwork, err, lostServer(s.backend.addr))
	}
	s.srv.metrics.serverFailure(err)
	s.backend.close()
	if s.st.resendable {
		return &statementError{cause: err, reply: mysqlproto.NewSQLError(mysqlproto.CRServerLost,
			"Lost connection to server %s during the query; nothing was changed, and no other server could take it", s.backend.addr)}
	}
	return &statementError{cause: err, reply: mysqlproto.OBErrTransUnknown.Detail(
		"the connection to server %s broke after the statement was sent and before its answer; it may or may not have run (obgate sends only reads again)", s.backend.addr)}
}

// drop closes the server connection: the next statement moves the session.
func (m *mysqlSide) drop(be *serverConn) { be.close() }

func (m *mysqlSide) replacement() (*serverConn, error) { return m.moveServer() }

func (m *mysqlSide) holdsERR(uint16) bool { return false }
