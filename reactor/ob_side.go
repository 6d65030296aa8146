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

// This file is obSession's serverSide: OceanBase mode's many server
// sessions, OK packets rewritten for the client and learned from,
// prepared-statement ids translated, and a server session that fails
// outside a transaction replaced by another.

// obEvents is OceanBase mode's part in what happens to a session from
// outside a statement's relay (sideEvents): KILL, a broken transaction's
// held BEGIN, a server that closed a server session.
type obEvents struct{ *obSession }

// login: obHandshake; the server sessions it opened close when it fails.
func (o obIdentity) login(ctx context.Context, count int64, cfg *config.Config, _ time.Time) error {
	err := o.obHandshake(ctx, count, cfg)
	if err != nil {
		o.s.servers.CloseAll()
	}
	return err
}

func (o *obSession) begin() {
	o.begunWith = nil
	o.s.st.txnBefore = o.serverInTrans()
	o.route.resetRoute()
}

func (o *obSession) routeQuery(body []byte, f *route.Facts) { o.route.routeBy(body, f, nil) }

func (o *obSession) noteState(mysqlproto.Command, *route.Facts, []byte, bool) {}

func (o *obSession) commandDone() {}

// rewritesAnswers: OK packets are rewritten and OB 2.0 unframed.
func (o *obSession) rewritesAnswers() bool { return true }

// pollable: unless a BEGIN is held (it goes out with the next statement,
// a round trip first); which server session the statement takes is
// decided in pickServer, which leaves the poller for any that is not
// ready (readyNow).
func (o *obSession) pollable() bool { return o.heldBegin == nil }

func (o obIdentity) clusterOf() *route.Cluster { return o.cluster }

// txnBroke: a held BEGIN goes with the transaction.
func (o obEvents) txnBroke() { o.heldBegin, o.begunWith = nil, nil }

// chainTxn holds a BEGIN for the next statement, as after a client's
// START TRANSACTION.
func (o obEvents) chainTxn() { o.heldBegin = []byte("START TRANSACTION") }

// diagNames: the tenant and cluster the login resolved, and the proxy
// session id.
func (o obIdentity) diagNames() (tenant, cluster string, proxySessID uint64, hasID bool) {
	cluster = o.s.identity.Cluster
	if o.cluster != nil {
		cluster = o.cluster.Name()
	}
	return o.tenant, cluster, o.proxySessID, true
}

func (o *obSession) query(n int, body []byte, whole bool, f *route.Facts, start time.Time) (bool, error) {
	if o.s.txnBroken {
		return true, o.s.st.brokenTxnStatement(n, f, start)
	}
	if !whole {
		return false, nil
	}
	if o.answersLocally(f) {
		if err := o.s.drv.pace().mayWait(); err != nil {
			return true, err
		}
	}
	return o.heldTransaction(n, body, f, start)
}

// statementServer: outside a transaction, where the statement's long
// data or cursor is, else where the router says.
func (o *obSession) statementServer(ps *prepared.Stmt) (*backend.Conn, error) {
	if !o.serverInTrans() && !o.pinned {
		if ps.Home != nil {
			if err := o.s.drv.pace().mayWait(); err != nil {
				return nil, err // its home may need a sync
			}
		}
		if ps.Home != nil && ps.Home.Alive() {
			if err := o.syncServer(ps.Home); err == nil {
				o.s.servers.Use(ps.Home)
				return ps.Home, nil
			}
			o.drop(ps.Home)
		}
	}
	return o.serverFor(needAny)
}

func (o *obSession) routeBy(ps *prepared.Stmt, execBody []byte) {
	r := &o.route
	if execBody == nil {
		r.routeBy(ps.SQL, &ps.Facts, nil)
		return
	}
	r.exec.Reset(execBody, int(ps.Params), ps.Types)
	r.routeBy(ps.SQL, &ps.Facts, &r.exec)
}

func (o *obSession) serverSessions() []*backend.Conn { return o.s.servers.All() }

func (o *obSession) learnState(state []byte, status mysqlproto.ServerStatus) {
	o.vars.Learn(state, status, nil)
}

func (o *obSession) bound() bool { return o.pinned }

func (o *obSession) candidates() int { return len(o.routeBuf) }

func (o *obSession) refusedWrite(p []byte, err error) error {
	if o.serverInTrans() {
		return err
	}
	return o.resendElsewhere(p, err)
}

func (o *obSession) brokeBeforeAnswer(err error) error {
	s := o.s
	if s.cfg.ServerBreakAction == "disconnect" {
		// ODP's way: the client connection closes.
		o.drop(s.servers.Current())
		return quitWith(QuitServerNetwork, err, lostServer(s.servers.Current().Addr))
	}
	if s.activity.inTrans.Load() || o.serverInTrans() {
		return s.st.transactionBroke(err)
	}
	return o.serverSessionFailed(err)
}

// replacement routes the kept request again, by its kept copy, with the
// BEGIN that went with it held again.
func (o *obSession) replacement() (*backend.Conn, error) {
	o.rebindRoute()
	if o.begunWith != nil {
		o.heldBegin = o.begunWith
	}
	return o.serverFor(needAny)
}

// serverGone: the next statement simply goes to another server session
// (flash-break avoidance).
func (o obEvents) serverGone(*backend.Conn) {}

// closedIdle: never; a lost server session is replaced.
func (o obEvents) closedIdle() bool { return false }
