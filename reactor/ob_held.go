package reactor

import (
	"time"

	"obgate/mysqlproto"
	"obgate/route"
)

// heldTransaction answers the transaction statements obgate handles
// without a server in OceanBase mode, as ODP does: a plain BEGIN / START
// TRANSACTION is held and sent with the first real statement, so that the
// transaction starts on the server that statement needs; a COMMIT or
// ROLLBACK of a transaction still held ends it locally (nothing ran), and
// with AND CHAIN starts the next one, held again. Anything else (ROLLBACK
// TO SAVEPOINT, RELEASE, a second statement in the text) goes to a server,
// which gets the held BEGIN first. With enable_bad_route_reject, a first
// statement that names no table is refused and the held BEGIN dropped. It
// reports whether it answered.
func (o *obSession) heldTransaction(n int, body []byte, f *route.Facts, start time.Time) (bool, error) {
	s := o.s
	if f.MultiStatement {
		return false, nil
	}
	switch {
	case f.PlainBegin && o.heldBegin == nil && !o.serverInTrans():
		o.heldBegin = append([]byte(nil), body...)
		if err := s.client.skipPacket(n); err != nil {
			return true, err
		}
		s.status |= mysqlproto.StatusInTrans
		s.activity.inTrans.Store(true)
		s.countStatement(f.Kind, false, start)
		return true, s.writeOK(0, "")
	case o.heldBegin != nil && (f.Txn == route.TxnCommit || f.Txn == route.TxnRollback) && !f.Release:
		if err := s.client.skipPacket(n); err != nil {
			return true, err
		}
		s.activity.transCount.Add(1)
		if !f.Chain {
			o.heldBegin = nil
			s.status &^= mysqlproto.StatusInTrans
			s.activity.inTrans.Store(false)
		}
		s.countStatement(f.Kind, false, start)
		return true, s.writeOK(0, "")
	case o.heldBegin != nil && s.cfg.EnableBadRouteReject && f.NumTables == 0:
		// enable_bad_route_reject: the transaction's first statement names
		// no table, so it would start on whatever server the tenant list
		// gives. ODP refuses it and throws the held BEGIN away.
		if err := s.client.skipPacket(n); err != nil {
			return true, err
		}
		o.heldBegin = nil
		s.status &^= mysqlproto.StatusInTrans
		s.activity.inTrans.Store(false)
		s.countStatement(f.Kind, true, start)
		return true, s.writeError(errBadRoute())
	}
	return false, nil
}

// answersLocally reports whether heldTransaction would answer the
// statement itself; it changes nothing.
func (o *obSession) answersLocally(f *route.Facts) bool {
	if f.MultiStatement {
		return false
	}
	return o.heldBegin != nil || (f.PlainBegin && !o.serverInTrans())
}

// errBadRoute is ODP's answer to a refused bad route: OB_NOT_SUPPORTED
// with its own message.
func errBadRoute() *mysqlproto.SQLError {
	e := mysqlproto.OBErrNotSupported
	return &mysqlproto.SQLError{Code: e.Errno, State: e.State, Message: "Not supported, bad route request"}
}
