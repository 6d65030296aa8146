package reactor

import (
	"context"
	"time"

	"obgate/config"
	"obgate/mysqlproto"
	"obgate/reactor/backend"
	"obgate/reactor/prepared"
	"obgate/route"
)

// mysqlSide is the server side of mysql routing mode: one server session
// at a time, its answers relayed as they are; a session that left no
// state on it moves to another server when it fails (mysql_move.go).
type mysqlSide struct {
	s    *Session  // the client session this is the server side of
	move moveLogin // what it takes to log the client in elsewhere
}

// mysqlEvents is mysql mode's part in what happens to a session from
// outside a statement's relay (sideEvents): KILL, on this server or
// another, and a server that closed the session's connection.
type mysqlEvents struct{ *mysqlSide }

// login: mysqlHandshake.
func (m mysqlLogin) login(ctx context.Context, count int64, cfg *config.Config, deadline time.Time) error {
	return m.mysqlHandshake(ctx, count, cfg, deadline)
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

// pollable: the one server session is open, on netpoll, in plain MySQL
// framing.
func (m *mysqlSide) pollable() bool {
	be := m.s.servers.Current()
	if be == nil || be.Lost() || be.OB20 != nil || be.Comp != nil {
		return false
	}
	np, ok := be.NetConn.(*backend.PolledConn)
	if ok {
		np.WatchInput(&m.s.drv)
	}
	return ok
}

// rewritesAnswers: answers are relayed as they are.
func (m *mysqlSide) rewritesAnswers() bool { return false }

func (m mysqlLogin) clusterOf() *route.Cluster { return nil }

func (m mysqlLogin) explain([]byte) RouteExplanation {
	return RouteExplanation{Err: ErrNotOceanBase}
}

func (m mysqlEvents) txnBroke() {}

// chainTxn is never called: mysql mode forwards a broken transaction's
// ROLLBACK AND CHAIN to its server (query).
func (m mysqlEvents) chainTxn() {}

// diagNames: what the login name said.
func (m mysqlLogin) diagNames() (tenant, cluster string, proxySessID uint64, hasID bool) {
	return m.s.identity.Tenant, m.s.identity.Cluster, 0, false
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
	return true, m.s.st.brokenTxnStatement(n, f, start)
}

// serverFor: the session's one server session runs everything; when its
// connection is gone, a session that may move logs in on another server.
func (m *mysqlSide) serverFor(routeNeed) (*backend.Conn, error) {
	s := m.s
	if !s.servers.Current().Lost() {
		return s.servers.Current(), nil
	}
	if err := s.drv.pace().mayWait(); err != nil {
		return nil, err // moving takes a login
	}
	if s.servers.Current().PeerGone.Load() && m.movableOutsideTxn() && s.srv.serverAnswers(s.servers.Current().Addr) {
		// The server closed the connection and still greets: it closed
		// it on purpose (wait_timeout, KILL); the session ends with it.
		m.move.closedOnPurpose.Store(true)
	}
	if s.activity.inTrans.Load() && m.movableOutsideTxn() {
		return nil, errTxnServerLost // the transaction is lost; the session moves after it
	}
	if !m.movable() {
		return nil, errServerGone
	}
	return m.moveServer()
}

// statementServer: the one server session, unless the statement's long
// data or cursor was on a server the session has left.
func (m *mysqlSide) statementServer(ps *prepared.Stmt) (*backend.Conn, error) {
	be, err := m.serverFor(needAny)
	if err == nil && ps.Home != nil && ps.Home != be {
		if err := m.s.drv.pace().mayWait(); err != nil {
			return nil, err // answered with an ERR
		}
		ps.Home = nil
		return nil, errStatementHomeLost
	}
	return be, err
}

func (m *mysqlSide) routeBy(*prepared.Stmt, []byte) {}

// serverSessions is the session's one server session, while open.
func (m *mysqlSide) serverSessions() []*backend.Conn {
	if be := m.s.servers.Current(); be == nil || be.Lost() {
		return nil
	}
	return m.s.servers.All()
}

// dropBroken: the connection closes; the next statement moves the session
// (or finds its transaction lost).
func (m *mysqlSide) dropBroken(be *backend.Conn) {
	m.s.diagServerLost(be, nil)
	if m.s.activity.inTrans.Load() {
		m.s.markTxnBroken()
	}
	be.Close()
}

func (m *mysqlSide) learnState(state []byte, _ mysqlproto.ServerStatus) { m.learnSessionState(state) }

func (m *mysqlSide) bound() bool { return !m.movable() }

func (m *mysqlSide) candidates() int { return len(serverAddrs(m.s.cfg)) }

func (m *mysqlSide) answerTimeout() time.Duration { return 0 }

func (m *mysqlSide) terminator(buf []byte, dec, end int) ([]byte, int, int) {
	m.onTerminator(&m.s.scanner)
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
	if m.movableOutsideTxn() && !s.servers.Current().Closed.Load() && s.srv.serverAnswers(s.servers.Current().Addr) {
		// The server broke the connection and still greets: it closed
		// it on purpose (KILL); the session ends with it.
		m.move.closedOnPurpose.Store(true)
	}
	if s.activity.inTrans.Load() && m.movableOutsideTxn() {
		return s.st.transactionBroke(err)
	}
	if !m.movable() {
		return quitWith(QuitServerNetwork, err, lostServer(s.servers.Current().Addr))
	}
	be := s.servers.Current()
	s.srv.metrics.serverFailure(err)
	be.Close()
	return serverLostReply(be.Addr, err, s.st.resendable, 0)
}

// drop closes the server connection: the next statement moves the session.
func (m *mysqlSide) drop(be *backend.Conn) { be.Close() }

func (m *mysqlSide) replacement() (*backend.Conn, error) { return m.moveServer() }

func (m *mysqlSide) holdsERR(uint16) bool { return false }

// serverGone: the client's connection is its server session, so an idle
// client is disconnected at once, as the server would have done, and its
// driver sees a closed connection and reconnects instead of sending a
// statement into it (a running command fails on its own). A session that
// could move to another server (mysql_move.go) moves only if its server
// failed: the server is asked for a handshake, and if it gives one it
// closed the connection on purpose (wait_timeout, KILL) and the idle
// client is disconnected as above.
func (m mysqlEvents) serverGone(be *backend.Conn) {
	s := m.s
	s.srv.log.Debug("server closed the session's connection", "session", s.id, "server", be.Addr)
	if s.State() != StateIdle {
		return
	}
	if !m.move.canMove.Load() {
		s.closeFor(closeNow, QuitServerNetwork, "server_closed_connection")
		return
	}
	go func() {
		defer s.srv.panics.recoverBackground(panicServerWatch)
		if s.srv.serverAnswers(be.Addr) {
			m.move.closedOnPurpose.Store(true)
			if s.State() == StateIdle {
				s.closeFor(closeNow, QuitServerNetwork, "server_closed_connection")
			}
		}
	}()
}

// closedIdle: the server closed the session's connection and the session
// may not move. It reads only what other goroutines publish atomically
// (the current server session, whether the session may move), since a
// command may already run when checkServerAfterLogin calls it.
func (m mysqlEvents) closedIdle() bool {
	be := m.s.servers.Shared()
	return be != nil && be.Lost() && !m.move.canMove.Load()
}
