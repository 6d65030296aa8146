package reactor

// Answering a command that failed before it reached a server.

import (
	"errors"
	"time"

	"obgate/mysqlproto"
	"obgate/route"
)

// refuse answers a command that found no server: the session goes on,
// except when the server session of an open transaction is gone.
func (st *statement) refuse(n int, err error) error {
	s := st.s
	if waitErr := st.pace().mayWait(); waitErr != nil {
		return waitErr // the command is served again where it may wait, and meets err there
	}
	if skipErr := s.client.skipPacket(n); skipErr != nil {
		return skipErr
	}
	return st.writeErrorFor(err)
}

// answerFailure answers a statement that failed before its answer with
// the failure's ERR and goes on (a statementError), or ends the session
// (any other error).
func (st *statement) answerFailure(err error, kind route.StmtKind, start time.Time) error {
	s := st.s
	var se *statementError
	if !errors.As(err, &se) {
		return err
	}
	if se.txnBroken {
		s.markTxnBroken()
	}
	s.countStatement(kind, true, start)
	return s.writeError(se.reply)
}

// writeErrorFor answers the current command with err as an ERR packet.
// Losing the server session of an open transaction ends the client
// session, as ODP does.
func (st *statement) writeErrorFor(err error) error {
	s := st.s
	var se *mysqlproto.SQLError
	switch {
	case errors.As(err, &se):
		return s.writeError(se)
	case errors.Is(err, errTxnServerLost):
		if s.cfg.ServerBreakAction == "disconnect" {
			return quitWith(QuitServerNetwork, err, mysqlproto.NewSQLError(mysqlproto.CRServerLost,
				"Lost connection to the server of the open transaction"))
		}
		return st.txnServerLost()
	case errors.Is(err, errServerGone):
		// mysql mode: the client's connection is its server session.
		return quitWith(QuitServerNetwork, err, lostServer(s.servers.Current().Addr))
	case errors.Is(err, errPinnedServerLost):
		return s.writeError(mysqlproto.NewSQLError(mysqlproto.CRServerLost,
			"Lost connection to the server session that held this session's temporary tables, locks or last results; they are gone"))
	}
	s.srv.log.Debug("statement failed before it reached a server", "session", s.id, "err", err)
	return s.writeError(mysqlproto.NewSQLError(mysqlproto.CRConnHostError, "obgate: %v", err))
}
