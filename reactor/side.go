package reactor

import (
	"context"
	"time"

	"obgate/config"
	"obgate/mysqlproto"
	"obgate/reactor/backend"
	"obgate/reactor/handover"
	"obgate/reactor/prepared"
	"obgate/route"
)

// serverSide is everything a session does differently per routing mode,
// in six roles, each an interface of its own that both modes implement:
// obSession (ob_*.go) and mysqlSide (mysql_*.go). The rest of the package
// calls them through the session's side and checks no mode. A session's
// side is made with the session (routingMode.newSide) and never changes;
// administrator sessions have one too and never use it to relay. Only the
// goroutine running the session's command (or its login) calls it,
// except where a method says otherwise.
type serverSide struct {
	sideIdentity
	sideCommands
	sideAnswers
	sideServers
	sideEvents
	sideHandover
	// column is the mode's column of the command table (commands.go):
	// what the mode does of its own with a command other than COM_QUERY.
	column modeColumn
}

// sideIdentity is who the session is in its mode: how the client logs in,
// the names the diagnosis log gives it, its cluster, and how its
// statements would route (EXPLAIN ROUTE).
type sideIdentity interface {
	// login logs the client in (handshake), before deadline.
	login(ctx context.Context, count int64, cfg *config.Config, deadline time.Time) error
	// diagNames are the tenant and cluster the diagnosis log names the
	// session by and, in OceanBase mode, its proxy session id (hasID).
	diagNames() (tenant, cluster string, proxySessID uint64, hasID bool)
	// clusterOf is the OceanBase cluster the session is logged into; nil
	// in mysql routing mode.
	clusterOf() *route.Cluster
	// explain is EXPLAIN ROUTE (ExplainRoute).
	explain(stmt []byte) RouteExplanation
}

// sideCommands is what the mode adds to each command: what it does with
// a COM_QUERY itself, what it tells the router, the state it notes
// before the command goes out, and whether the poller may serve the next
// one. The other commands a mode serves its own way are its column of the
// command table (commands.go).
type sideCommands interface {
	// begin starts a command (serveCommand): the mode's per-command state
	// is reset.
	begin()
	// routeQuery gives the router a COM_QUERY's text and facts.
	routeQuery(body []byte, f *route.Facts)
	// noteState records what the command may leave on its server before
	// it is sent.
	noteState(cmd mysqlproto.Command, f *route.Facts, body []byte, whole bool)
	// routeBy gives the router the statement a prepare or (with its
	// body) an execute of ps runs.
	routeBy(ps *prepared.Stmt, execBody []byte)
	// query runs what the mode does itself with a COM_QUERY (a held
	// transaction statement) and reports whether it answered.
	query(n int, body []byte, whole bool, f *route.Facts, start time.Time) (bool, error)
	// commandDone runs when a command ended (afterCommand).
	commandDone()
	// pollable reports whether the next statement's server session is
	// ready for the poller: open, in step, a plain netpoll connection,
	// nothing to do on it before the statement (poller.go).
	pollable() bool
}

// sideAnswers is what the mode does with an answer: whether it is
// rewritten on its way, how long it may take, what its terminators and
// session-state reports teach, and which ERR is held back so that the
// statement can go elsewhere.
type sideAnswers interface {
	// rewritesAnswers reports whether answers are rewritten in place on
	// their way to the client (the relay then reads them into a chunk
	// instead of viewing the server connection's buffer).
	rewritesAnswers() bool
	// answerTimeout bounds the wait for the server's answer; 0 means no
	// bound (the server enforces its own).
	answerTimeout() time.Duration
	// terminator learns from the OK, EOF or ERR that ended a result (the
	// scanner's packet, ending at buf[dec]) and may rewrite it in buf; it
	// returns the buffer (a bigger one when the packet grew) and the
	// shifted positions.
	terminator(buf []byte, dec, end int) ([]byte, int, int)
	// learnState learns from the session-state changes of an OK that
	// answered one of obgate's own commands.
	learnState(state []byte, status mysqlproto.ServerStatus)
	// afterResponse updates the mode's facts after a complete response.
	afterResponse(cmd mysqlproto.Command, failed bool)
	// holdsERR reports whether an ERR with code, the whole answer, is held
	// back from the client so that the statement can go elsewhere.
	holdsERR(code uint16) bool
}

// sideServers is how the mode chooses a statement's server session among
// its candidates and what it does when one fails: the session's server
// sessions are in its backend.Set; this decides which one a statement
// takes, when the session is tied to one, and where a statement goes
// after a failure that ran nothing.
type sideServers interface {
	// serverFor makes the server session that runs the next statement
	// current, brought up to date, and returns it (acquire's work).
	serverFor(need routeNeed) (*backend.Conn, error)
	// statementServer is serverFor for an execute (or long data, reset,
	// fetch) of ps: where its long data or cursor is, when that matters.
	statementServer(ps *prepared.Stmt) (*backend.Conn, error)
	// serverSessions are the session's open server sessions.
	serverSessions() []*backend.Conn
	// bound reports whether the session is tied to its current server by
	// state left there, so no statement may go elsewhere.
	bound() bool
	// candidates is how many servers the current statement could go to
	// (for the retry budget).
	candidates() int
	// drop forgets a server session that failed a statement about to go
	// elsewhere; replacement returns the server session it goes to.
	drop(be *backend.Conn)
	replacement() (*backend.Conn, error)
	// dropBroken forgets a server session a command that does not route
	// found broken (COM_STMT_CLOSE, a KILL of the session's own server).
	dropBroken(be *backend.Conn)
	// refusedWrite is called when the server refused a one-piece request
	// (nothing of it ran there); it may send p elsewhere and returns the
	// error that stands.
	refusedWrite(p []byte, err error) error
	// brokeBeforeAnswer is called when the server connection failed
	// before any byte of the answer reached the client; it returns the
	// error the relay ends with.
	brokeBeforeAnswer(err error) error
}

// sideEvents is the mode's part in what happens to the session from
// outside a statement's relay: KILL, a transaction broken by a server's
// loss, a server that closed a server session.
type sideEvents interface {
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
	// chainTxn runs when obgate itself answered a ROLLBACK AND CHAIN of a
	// broken transaction: a new transaction begins with the next
	// statement.
	chainTxn()
	// serverGone is told, on the server watch's goroutine, that a server
	// closed be.
	serverGone(be *backend.Conn)
	// closedIdle reports that the session must close because its server
	// closed its connection; any goroutine may call it.
	closedIdle() bool
}

// sideHandover is the mode's part of the hot upgrade's hand-over
// (handover.go); the session's owner calls it at an idle point.
type sideHandover interface {

	// handoverReady reports whether the mode's part of the session may
	// move now.
	handoverReady() bool
	// handoverFreeze stops reading the server connections that move with
	// the client and returns their descriptors and how to read them
	// again; ok is false when one cannot move now (nothing stays frozen).
	handoverFreeze() (fds []int, thaw func(), ok bool)
	// handoverRecord adds the mode's records (and Mode) to h.
	handoverRecord(h *handover.State)
	// adoptRecord gives a session being adopted the mode's records of h;
	// server is the handed-over server connection, nil when none came.
	// The side owns server from then on, whatever it returns.
	adoptRecord(h *handover.State, server *backend.PolledConn) error
}
