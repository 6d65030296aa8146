package reactor

import (
	"encoding/binary"
	"time"

	"obgate/mysqlproto"
)

// commandSpec is what serving a client command needs to know of it beyond
// the protocol (mysqlproto.Command.HasResponse says whether the server
// answers). Every command obgate treats apart has one entry in commands;
// the others relay as they are. Adding a command means adding its entry.
type commandSpec struct {
	// serve runs a command obgate handles itself in both routing modes
	// and reports whether it did; when it did not (false, nil), the mode
	// and then the common path take the command.
	serve serveFunc
	// refused: obgate never relays it (replication and obsolete
	// commands); the client gets ERR 1235.
	refused bool
	// inBrokenTxn is what the broken-transaction state does with it.
	inBrokenTxn brokenTxnRule
	// admin is what an administrator session (root@proxysys) answers.
	admin adminAnswer
	// polled: the poller may serve it (poller.go), when the rest of the
	// fast path's conditions hold.
	polled bool
	// byMode is what each routing mode does of its own with the command,
	// indexed by the session's column (serverSide.column): like serve, it
	// reports whether it served the command; nil where the mode relays it
	// as the common path does. serve runs first.
	byMode [numModeColumns]serveFunc
}

// serveFunc serves a command, or reports false to leave it to what
// follows (serve, then the mode's column, then the common path).
type serveFunc func(s *Session, cmd mysqlproto.Command, n int, body []byte, whole bool, start time.Time) (bool, error)

// modeColumn picks a routing mode's column of the command table.
type modeColumn uint8

const (
	columnOB modeColumn = iota
	columnMySQL
	numModeColumns
)

// brokenTxnRule says how a command fares in the broken-transaction state
// (txnbroken.go).
type brokenTxnRule uint8

const (
	brokenFails brokenTxnRule = iota // ERR 6002, as every statement until the transaction ends
	brokenRuns                       // runs as usual: it touches no transaction
	brokenEnds                       // runs, and ends the state (the session starts afresh)
)

// adminAnswer says what an administrator session answers to a command.
type adminAnswer uint8

const (
	adminRefused adminAnswer = iota // ERR 1235
	adminOK                         // OK, nothing to do
	adminSilent                     // no answer, as a server gives none
	adminQuery                      // the interceptor runs it (COM_QUERY)
)

// commands is the command table, indexed by command byte.
var commands = [256]commandSpec{
	mysqlproto.ComQuery:           {admin: adminQuery, polled: true},
	mysqlproto.ComPing:            {inBrokenTxn: brokenRuns, admin: adminOK, byMode: modes(servePingOB, nil)},
	mysqlproto.ComInitDB:          {serve: noteInitDB, inBrokenTxn: brokenRuns, admin: adminOK},
	mysqlproto.ComResetConnection: {inBrokenTxn: brokenEnds, admin: adminOK},
	mysqlproto.ComChangeUser:      {inBrokenTxn: brokenEnds, byMode: modes(serveChangeUserOB, noteChangeUserMySQL)},
	mysqlproto.ComSetOption:       {byMode: modes(serveSetOptionOB, nil)},
	mysqlproto.ComStatistics:      {inBrokenTxn: brokenRuns},
	mysqlproto.ComProcessKill:     {serve: serveProcessKill, inBrokenTxn: brokenRuns},

	mysqlproto.ComStmtPrepare:      {serve: servePrepare, polled: true},
	mysqlproto.ComStmtExecute:      {serve: serveStatement, polled: true},
	mysqlproto.ComStmtFetch:        {serve: serveStatement},
	mysqlproto.ComStmtReset:        {serve: serveStatement, inBrokenTxn: brokenRuns},
	mysqlproto.ComStmtSendLongData: {serve: serveStatement, admin: adminSilent},
	mysqlproto.ComStmtClose:        {serve: serveStatementClose, inBrokenTxn: brokenRuns, admin: adminSilent, polled: true},

	mysqlproto.ComBinlogDump:     {refused: true},
	mysqlproto.ComBinlogDumpGTID: {refused: true},
	mysqlproto.ComRegisterSlave:  {refused: true},
	mysqlproto.ComTableDump:      {refused: true},
	mysqlproto.ComConnectOut:     {refused: true},
	mysqlproto.ComDaemon:         {refused: true},
}

// modes lays out a command's columns: OceanBase mode's, then mysql
// mode's.
func modes(ob, mysql serveFunc) (by [numModeColumns]serveFunc) {
	by[columnOB], by[columnMySQL] = ob, mysql
	return by
}

// noteInitDB remembers the database a COM_INIT_DB asks for, applied once
// the server accepted it (afterResponse); the command goes on as usual.
func noteInitDB(s *Session, _ mysqlproto.Command, _ int, body []byte, whole bool, _ time.Time) (bool, error) {
	if whole {
		s.st.pendingDB = string(body)
	}
	return false, nil
}

// serveProcessKill runs COM_PROCESS_KILL as KILL id.
func serveProcessKill(s *Session, _ mysqlproto.Command, n int, body []byte, whole bool, start time.Time) (bool, error) {
	if !whole || len(body) < 4 {
		return false, nil
	}
	return true, killRun{s.st}.handleProcessKill(n, binary.LittleEndian.Uint32(body), start)
}

// servePrepare, serveStatement and serveStatementClose run the
// prepared-statement commands (prepared.go).
func servePrepare(s *Session, _ mysqlproto.Command, n int, body []byte, whole bool, start time.Time) (bool, error) {
	return true, preparedRun{s.st}.prepareStatement(n, body, whole, start)
}

func serveStatement(s *Session, cmd mysqlproto.Command, n int, body []byte, _ bool, start time.Time) (bool, error) {
	return true, preparedRun{s.st}.runStatement(cmd, n, body, start)
}

func serveStatementClose(s *Session, _ mysqlproto.Command, n int, body []byte, _ bool, _ time.Time) (bool, error) {
	return true, preparedRun{s.st}.closeStatement(n, body)
}
