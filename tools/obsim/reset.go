package obsim

import (
	"encoding/binary"
	"time"

	"obgate/mysqlproto"
)

// resetConnection handles COM_RESET_CONNECTION: MariaDB resets its
// session (user variables, session variables, temporary tables, prepared
// statements, locks; the database, charset and multi-statement option
// stay), obsim forgets what it kept of that session, and session state
// tracking, which MariaDB's reset turned back to its defaults, is set up
// again.
//
// Called by the session's goroutine.
func (s *session) resetConnection(pkt []byte, start time.Time) error {
	res, err := s.relay(mysqlproto.ComResetConnection, pkt, nil, false)
	if err == nil && !res.isErr {
		s.vars = map[string]string{}
		s.userVars = map[string]string{}
		s.stmts = map[uint32]*prepared{}
		if terr := trackSessionState(s.be); terr != nil {
			err = terr
		}
	}
	entry := LogEntry{Command: "reset_connection", Local: true}
	s.finishEntry(&entry, res, start)
	return s.finish(err)
}

// Options of COM_SET_OPTION.
const (
	optionMultiStatementsOn  = 0
	optionMultiStatementsOff = 1
)

// setOption handles COM_SET_OPTION. MariaDB applies it to the backing
// connection and answers with an EOF packet; the client gets an OK, as
// from an OBServer. The option is also kept in s.be.Caps, so that a new
// MariaDB login after COM_CHANGE_USER starts with it, as the session
// does.
//
// Called by the session's goroutine.
func (s *session) setOption(pkt []byte, start time.Time) error {
	entry := LogEntry{Command: "set_option", Local: true}
	if len(pkt) < 3 {
		return s.sendErr(mysqlproto.NewSQLError(mysqlproto.ERUnknownComError, "Malformed COM_SET_OPTION"))
	}
	opt := binary.LittleEndian.Uint16(pkt[1:])
	switch opt {
	case optionMultiStatementsOn:
		entry.SQL = "MULTI_STATEMENTS_ON"
	case optionMultiStatementsOff:
		entry.SQL = "MULTI_STATEMENTS_OFF"
	default:
		e := mysqlproto.NewSQLError(mysqlproto.ERUnknownComError, "Unknown COM_SET_OPTION option %d", opt)
		s.finishEntry(&entry, relayResult{isErr: true, code: e.Code}, start)
		return s.sendErr(e)
	}
	s.beW, _ = mysqlproto.AppendPacket(s.beW[:0], 0, pkt)
	if _, err := s.be.Conn().Write(s.beW); err != nil {
		return err
	}
	rd := mysqlproto.NewPacketIO(s.beRd, nil)
	rd.SetSequence(1)
	p, err := rd.ReadPacket()
	if err != nil {
		return err
	}
	if len(p) > 0 && p[0] == mysqlproto.ERRHeader {
		e, _ := mysqlproto.ParseERR(p)
		se := mysqlproto.SQLErrorFromERR(e)
		s.finishEntry(&entry, relayResult{isErr: true, code: se.Code}, start)
		return s.sendErr(se)
	}
	if opt == optionMultiStatementsOn {
		s.be.Caps |= mysqlproto.ClientMultiStatements
	} else {
		s.be.Caps &^= mysqlproto.ClientMultiStatements
	}
	s.finishEntry(&entry, relayResult{}, start)
	return s.sendOK(nil)
}
