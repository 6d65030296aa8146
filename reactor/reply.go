package reactor

// Answering a command that failed before it reached a server.

import (
	"errors"
	"net"
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

// brokeBeforeAnswer is what a command ends with when its server session
// failed before any byte of the answer reached the client: the client's
// own reason when it hung up meanwhile, else what the mode makes of it
// (sideServers.brokeBeforeAnswer).
func brokeBeforeAnswer(s *Session, err error) error {
	if s.drv.clientLeft() {
		return leftDuringCommand(err)
	}
	return s.side.brokeBeforeAnswer(err)
}

// serverLostReply is the statement error of a statement whose server
// session at addr failed with err before the client got any of its
// answer, in a session that goes on: the answer's timeout (answerTimeout,
// when there is one) or a corrupt OB 2.0 frame leaves the outcome unknown; a read that could not
// be sent again (resendable) changed nothing; anything else may or may
// not have run.
func serverLostReply(addr string, err error, resendable bool, answerTimeout time.Duration) *statementError {
	var reply *mysqlproto.SQLError
	var ne net.Error
	switch {
	case answerTimeout > 0 && errors.As(err, &ne) && ne.Timeout():
		reply = mysqlproto.NewSQLError(mysqlproto.OBTimeout,
			"Timeout: server %s did not answer within %v (ob_query_timeout + observer_query_timeout_delta); the statement's outcome is unknown",
			addr, answerTimeout)
	case errors.Is(err, mysqlproto.ErrOB20PayloadChecksum) || errors.Is(err, mysqlproto.ErrOB20HeaderChecksum):
		reply = mysqlproto.NewSQLError(mysqlproto.OBPacketChecksumError,
			"Packet checksum error in the answer of server %s; the statement's outcome is unknown", addr)
	case resendable:
		// A read that could not go again: it changed nothing, so its
		// outcome is not in doubt; the server was lost under it.
		reply = mysqlproto.NewSQLError(mysqlproto.CRServerLost,
			"Lost connection to server %s during the query; nothing was changed, and no other server could take it", addr)
	default:
		reply = mysqlproto.OBErrTransUnknown.Detail(
			"the connection to server %s broke after the statement was sent and before its answer; it may or may not have run (obgate sends only reads again)", addr)
	}
	return &statementError{reply: reply, cause: err}
}
