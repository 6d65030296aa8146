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
// which gets the held BEGIN first. It reports whether it answered.
func (o *obSession) heldTransaction(n int, body []byte, f *route.Facts, start time.Time) (bool, error) {
	s := o.s
	if f.MultiStatement {
		return false, nil
	}
	switch {
	case f.PlainBegin && o.heldBegin == nil && !o.serverInTrans():
		o.heldBegin = append([]byte(nil), body...)
		if err := s.skipPacket(n); err != nil {
			return true, err
		}
		s.status |= mysqlproto.StatusInTrans
		s.inTrans.Store(true)
		s.countStatement(f.Kind, false, start)
		return true, s.writeOK(0, "")
	case o.heldBegin != nil && (f.Txn == route.TxnCommit || f.Txn == route.TxnRollback) && !f.Release:
		if err := s.skipPacket(n); err != nil {
			return true, err
		}
		s.transCount.Add(1)
		if !f.Chain {
			o.heldBegin = nil
			s.status &^= mysqlproto.StatusInTrans
			s.inTrans.Store(false)
		}
		s.countStatement(f.Kind, false, start)
		return true, s.writeOK(0, "")
	}
	return false, nil
}
