package reactor

import (
	"time"

	"obgate/mysqlproto"
	"obgate/route"
)

// When the server of an open transaction breaks (OceanBase mode, and
// mysql mode for a session that could otherwise move to another server;
// with server_break_action=error), the server rolls the transaction back. The
// client learns it from an ERR 6002 (OB_TRANS_ROLLBACKED), and then from
// the same error for every statement it sends until it ends the
// transaction: ROLLBACK succeeds, COMMIT fails (there is nothing to
// commit), COM_RESET_CONNECTION and COM_CHANGE_USER end it too. Nothing
// runs in autocommit behind a client that believes it is still in its
// transaction. Only the goroutine running the session's command calls
// these.

// transactionBroke is the error for a statement whose server broke while
// the client's transaction was open.
//
// A COMMIT or ROLLBACK that breaks ends the transaction all the same: a
// COMMIT's outcome is unknown (ERR 4012, SQLSTATE 25000), a ROLLBACK's is a rollback (ERR
// 6002), and the session is out of the transaction, as the client
// expects after either.
func (st *statement) transactionBroke(err error) error {
	s := st.s
	be := s.servers.Current()
	s.srv.metrics.serverFailure(err)
	s.srv.log.Warn("server of an open transaction failed; the transaction is rolled back", "session", s.id, "server", be.Addr, "err", err)
	s.side.drop(be) // mysql mode: the session moves once the transaction is over
	ending := s.activity.curCmd.Load() == int32(mysqlproto.ComQuery) && !st.facts.MultiStatement &&
		(st.facts.Txn == route.TxnCommit || st.facts.Txn == route.TxnRollback)
	if !ending {
		return &statementError{reply: txnRolledBack("the connection to server " + be.Addr + " broke during the statement"),
			cause: err, txnBroken: true}
	}
	s.endBrokenTxn()
	if st.facts.Txn == route.TxnCommit {
		return &statementError{cause: err, reply: mysqlproto.OBErrTransUnknown.Detail(
			"the connection to server %s broke during COMMIT; the transaction may or may not have committed", be.Addr)}
	}
	return &statementError{cause: err, reply: txnRolledBack("the connection to server " + be.Addr + " broke during ROLLBACK; the transaction is rolled back")}
}

func txnRolledBack(why string) *mysqlproto.SQLError {
	return mysqlproto.NewSQLError(mysqlproto.OBTransRollbacked,
		"Transaction rollbacked: %s; send ROLLBACK to end the transaction", why)
}

// txnServerLost answers a statement that found the server session of the
// open transaction gone before it was sent: the server rolled the
// transaction back. A ROLLBACK has nothing left to do (OK); a COMMIT
// fails (ERR 6002, nothing was committed); both end the transaction.
// Anything else fails and enters the broken-transaction state.
func (st *statement) txnServerLost() error {
	s := st.s
	f := &st.facts
	if s.activity.curCmd.Load() == int32(mysqlproto.ComQuery) && !f.MultiStatement && !f.Chain {
		switch f.Txn {
		case route.TxnRollback:
			s.endBrokenTxn()
			return s.writeOK(0, "")
		case route.TxnCommit:
			s.endBrokenTxn()
			return s.writeError(txnRolledBack("the connection to the server of the open transaction broke before COMMIT; nothing was committed"))
		}
	}
	s.markTxnBroken()
	return s.writeError(txnRolledBack("the connection to the server of the open transaction broke"))
}

// markTxnBroken enters the broken-transaction state.
func (s *Session) markTxnBroken() {
	s.txnBroken = true
	s.side.txnBroke()
	s.status |= mysqlproto.StatusInTrans
	s.activity.inTrans.Store(true)
}

// endBrokenTxn leaves it: the client ended the transaction.
func (s *Session) endBrokenTxn() {
	s.txnBroken = false
	s.status &^= mysqlproto.StatusInTrans
	s.activity.inTrans.Store(false)
}

// brokenTxnStatement answers a COM_QUERY in the broken-transaction state.
func (st *statement) brokenTxnStatement(n int, f *route.Facts, start time.Time) error {
	s := st.s
	if err := s.client.skipPacket(n); err != nil {
		return err
	}
	switch {
	case f.Txn == route.TxnRollback && !f.MultiStatement:
		s.endBrokenTxn()
		if f.Chain { // only OceanBase mode answers it here; mysql mode forwards it (mysqlSide.query)
			s.side.chainTxn()
			s.status |= mysqlproto.StatusInTrans
			s.activity.inTrans.Store(true)
		}
		s.countStatement(f.Kind, false, start)
		return s.writeOK(0, "")
	case f.Txn == route.TxnCommit && !f.MultiStatement:
		s.endBrokenTxn()
		s.countStatement(f.Kind, true, start)
		return s.writeError(txnRolledBack("the transaction was rolled back when its server broke; nothing was committed"))
	}
	s.countStatement(f.Kind, true, start)
	return s.writeError(txnRolledBack("the transaction was rolled back when its server broke"))
}

// brokenTxnCommand answers a command other than COM_QUERY in the
// broken-transaction state as its rule (commands) says; it reports false
// for those that run as usual (and end the state, for a reset or a change
// of user).
func (st *statement) brokenTxnCommand(cmd mysqlproto.Command, rule brokenTxnRule, n int, start time.Time) (bool, error) {
	s := st.s
	switch rule {
	case brokenEnds:
		s.endBrokenTxn()
		return false, nil
	case brokenRuns:
		return false, nil
	}
	if err := s.client.skipPacket(n); err != nil {
		return true, err
	}
	s.countStatement(route.StmtOther, true, start)
	return true, s.writeError(txnRolledBack("the transaction was rolled back when its server broke"))
}
