package reactor

import (
	"encoding/binary"
	"errors"
	"fmt"

	"obgate/internal/failure"
	"obgate/mysqlproto"
	"obgate/reactor/backend"
	"obgate/route"
)

// A statement whose server failed before any byte of the answer reached
// the client may be sent again to another server, invisibly, within a
// budget. Two kinds of failure qualify (OceanBase mode):
//
//   - the server answered with an ERR that says nothing ran and another
//     server may take it (route.ResendableERR, odp-behaviour.md §4.3): any
//     statement, write or read;
//   - the server's connection broke or the server broke the protocol:
//     only a read-only statement read whole (s.st.resendable), since a write
//     may have run.
//
// Never inside a transaction that was open on a server before the
// statement (the first statement of a transaction may go again, with its
// held BEGIN), never for a session pinned to its server, never for a
// request larger than one piece (it was streamed, not kept) or one that
// carries a server-specific statement id. Not after a timeout either: a
// statement that ran out of time would do so elsewhere too, and the
// server may still be running it.

// errRetryableERR ends a relay whose answer is an ERR obgate holds back
// (s.st.heldERR) to send the statement elsewhere.
var errRetryableERR = errors.New("server answered with an error that another server may not give")

// errServerGone reports, in mysql routing mode, a session whose server
// connection is gone and which cannot move.
var errServerGone = errors.New("the server closed the session's connection")

// retryBudget is how many times one statement may go again: ODP's
// max(connect_observer_max_retries, 2 × replicas + 1), less the first try.
func (st *statement) retryBudget() int {
	s := st.s
	return route.RetryBudget(s.cfg.ConnectObserverMaxRetries, s.side.candidates())
}

// try describes the statement's failed try o for the resend rules
// (route.MayResend).
func (st *statement) try(o outcome) route.Try {
	s := st.s
	return route.Try{
		Failure:  o.fail,
		Code:     o.errCode,
		ReadOnly: st.resendable,
		Kept:     st.kept != nil && !st.tunneled && (!st.patchOn || st.retryPS != nil),
		Bound:    st.txnBefore || s.side.bound() || st.routeBound,
		Stopped:  s.lifecycle.closeReq.Load() != closeNone || s.lifecycle.killsPending.Load() > 0, // a KILL or a shutdown broke it, not its server
		Resends:  st.resends,
		Budget:   st.retryBudget(),
	}
}

// mayRetry reports whether the statement could go again after an ERR
// that says nothing ran.
func (st *statement) mayRetry() bool {
	return route.MayResend(st.try(outcome{fail: failure.HeldERR}))
}

// mayResend reports whether the kept request may go to another server
// after outcome o.
func (st *statement) mayResend(o outcome) bool { return route.MayResend(st.try(o)) }

// holdsERR reports whether runRelay should hold back an ERR with
// code, the whole answer so far, to send the statement elsewhere.
func (o *obSession) holdsERR(code uint16) bool {
	s := o.s
	o.routeFeedbackERR(code)
	if code == mysqlproto.OBErrReroute && !s.st.rerouted && s.st.mayRetry() {
		// obgate never asks for reroute hints (enable_reroute has no
		// effect), so a server should not send this; one that does is
		// answered as ODP answers a reroute: the statement goes again, to
		// another server, once.
		s.st.rerouted = true
		return true
	}
	return route.HoldERR(code, s.st.mayRetry(), s.st.commitsTxn(), s.st.endsTxnByClosing())
}

// commitsTxn reports a plain COMMIT of a transaction open on the current
// server session. A server that refuses it with an error that says
// nothing ran (8001, 8002, ...) keeps the transaction open, while the
// client takes a failed COMMIT as the end of it: obgate closes that
// server session, which rolls the transaction back, and answers ERR 6002
// (rolled back), so the session is not left bound to the refusing server.
func (st *statement) commitsTxn() bool { return st.endsTxnWith(route.TxnCommit) }

// endsTxnByClosing reports a plain ROLLBACK of a transaction open on the
// current server session: should the server refuse it (a server that is
// stopping answers every statement with 8002), obgate closes that server
// session instead, which rolls the transaction back all the same, and
// answers OK; the session is not left bound to a server that refuses
// everything.
func (st *statement) endsTxnByClosing() bool { return st.endsTxnWith(route.TxnRollback) }

// endsTxnWith reports a COM_QUERY that is only a plain COMMIT or ROLLBACK
// (txn) of a transaction open on the current server session.
func (st *statement) endsTxnWith(txn route.TxnOp) bool {
	f := &st.facts
	return st.txnBefore && st.s.activity.curCmd.Load() == int32(mysqlproto.ComQuery) && f.Txn == txn &&
		!f.Chain && !f.MultiStatement
}

// commitRefused ends the transaction whose COMMIT the server refused
// (commitsTxn).
func (st *statement) commitRefused(code uint16) error {
	addr := st.closeRefusingServer("COMMIT", code)
	return st.s.writeError(txnRolledBack(fmt.Sprintf("server %s refused COMMIT with error %d; the transaction is rolled back", addr, code)))
}

// rollbackByClosing ends the transaction whose ROLLBACK the server
// refused (endsTxnByClosing).
func (st *statement) rollbackByClosing(code uint16) error {
	st.closeRefusingServer("ROLLBACK", code)
	return st.s.writeOK(0, "")
}

// closeRefusingServer closes the current server session, whose server
// refused the statement that ends its transaction (what), which rolls the
// transaction back, and takes the session out of it. It returns the
// server's address.
func (st *statement) closeRefusingServer(what string, code uint16) string {
	s := st.s
	addr := s.servers.Current().Addr
	s.srv.log.Info("server refused "+what+"; its server session is closed, which rolls the transaction back",
		"session", s.id, "server", addr, "code", code)
	s.side.drop(s.servers.Current())
	s.status &^= mysqlproto.StatusInTrans
	s.activity.inTrans.Store(false)
	return addr
}

// resendKept sends the kept request to a server session the router picks
// among the servers not yet tried for it; the one that failed is dropped
// (a transaction its held BEGIN opened there ends with it) and the held
// BEGIN is sent again with the statement. It reports false when no server
// session could take the request; the client then gets the failure.
func (st *statement) resendKept(o outcome) bool {
	s := st.s
	st.resends++
	from := ""
	if failed := s.servers.Current(); failed != nil {
		from = failed.Addr
		st.tried = append(st.tried, failed.Addr)
		if o.fail != failure.HeldERR {
			s.diagServerLost(failed, o.err) // it broke under the statement
		}
		s.side.drop(failed)
	}
	be, err := s.side.replacement()
	if err != nil {
		return false
	}
	if st.patchOn && !st.repatch(be, st.kept) {
		return false
	}
	st.beforeRequest()
	if err := be.WriteRequest(st.kept, true, true); err != nil {
		s.side.drop(be)
		be.Close()
		return false
	}
	if o.fail == failure.HeldERR {
		s.srv.metrics.retried(o.errCode)
	} else {
		s.srv.metrics.resent.Inc()
	}
	s.srv.log.Debug("statement sent again to another server", "session", s.id, "server", be.Addr,
		"after", o.fail.String(), "code", o.errCode)
	st.diagRetry(from, be.Addr, o.errCode, o.fail.String())
	return true
}

// repatch makes req, the statement's COM_STMT_EXECUTE, fit be: the
// statement is prepared there (again) when needed and its id written into
// the request.
func (st *statement) repatch(be *backend.Conn, req []byte) bool {
	s := st.s
	ps, id := st.retryPS, st.retryPSID
	if ps == nil || len(req) < mysqlproto.HeaderLen+5 {
		return false
	}
	sid, _, ok := be.StmtGet(id)
	if !ok {
		var err error
		if sid, err = (preparedRun{st}).prepareOn(be, ps); err != nil {
			s.srv.log.Debug("prepare for a retry failed", "session", s.id, "server", be.Addr, "err", err)
			return false
		}
		be.StmtSet(id, sid)
	}
	if ps.Params > 0 {
		be.StmtBound(id)
	}
	st.patchID = sid
	binary.LittleEndian.PutUint32(req[mysqlproto.HeaderLen+1:], sid)
	return true
}

// deliverHeldERR sends the ERR that runRelay held back, when the
// statement could not go elsewhere after all.
func (st *statement) deliverHeldERR() (int64, error) {
	s := st.s
	if err := s.client.io.Write(st.heldERR); err != nil {
		return 0, quit(QuitClientNetwork, err)
	}
	if err := s.client.io.Flush(); err != nil {
		return 0, quit(QuitClientNetwork, err)
	}
	return int64(len(st.heldERR)), nil
}
