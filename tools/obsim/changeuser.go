package obsim

import (
	"context"
	"strings"
	"time"

	"obgate/mysqlproto"
)

// obOpNotAllow is OceanBase's OB_OP_NOT_ALLOW, which it sends with its own
// code (it has no MySQL number).
const obOpNotAllow uint16 = 4179

// changeUser handles COM_CHANGE_USER as an OBServer does. The new user
// belongs to the session's tenant ("user" or "user@tenant" with the same
// tenant; another tenant is refused). Its token is checked against the
// connection's scramble, which for a proxy is the proxy's own scramble
// kept at login (see login). A client that names a plugin other than
// mysql_native_password is first asked to switch to it, with that
// scramble, as MySQL servers do. On success the session is reset as a new
// login: a new MariaDB login (the client's database and charset, the
// session's multi-statement option) replaces the old one, and variables,
// user variables, prepared statements and temporary tables are gone. A
// refused change ends the session, as OBServer 4.x does.
//
// Called by the session's goroutine.
func (s *session) changeUser(pkt []byte, start time.Time) error {
	entry := LogEntry{Command: "change_user", Local: true}
	cu, err := mysqlproto.ParseChangeUser(pkt, s.caps)
	if err != nil {
		return s.sendErr(mysqlproto.NewSQLError(mysqlproto.ERUnknownComError, "Malformed COM_CHANGE_USER"))
	}
	entry.SQL = cu.User
	fail := func(e *mysqlproto.SQLError) error {
		entry.Result, entry.Code = "error", e.Code
		s.record(entry, start)
		_ = s.sendErr(e)
		return e
	}
	user, tenantName, named := strings.Cut(cu.User, "@")
	if named && tenantName != s.tenant.name {
		return fail(mysqlproto.NewSQLError(obOpNotAllow, "forbid! change user command in differernt tenant not allowed"))
	}
	token := cu.AuthResponse
	if s.caps.Has(mysqlproto.ClientPluginAuth) && cu.AuthPlugin != "" && cu.AuthPlugin != mysqlproto.AuthNativePassword {
		if token, err = s.authSwitch(); err != nil {
			return err
		}
	}
	stage1, good := s.verifyPassword(user, s.scramble, token)
	if !good {
		return fail(mysqlproto.NewSQLError(mysqlproto.ERAccessDenied, "Access denied for user '%s'@'%s' (using password: %s)",
			user, nodeIP, yesNo(len(token) > 0)))
	}
	charset := byte(mysqlproto.CharsetUTF8MB4)
	if cu.HasCharset && cu.Charset > 0 && cu.Charset < 256 {
		charset = byte(cu.Charset)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	// s.be.Caps carries the multi-statement option as COM_SET_OPTION left it.
	be, err := mysqlproto.Dial(ctx, s.c.mariaAddr, mysqlproto.ClientOptions{User: user, PasswordStage1: stage1,
		Database: cu.Database, Capability: s.be.Caps, Charset: charset})
	cancel()
	if err != nil {
		se, isSQL := mysqlproto.AsSQLError(err)
		if !isSQL {
			se = mysqlproto.NewSQLError(mysqlproto.ERUnknownError, "obsim: MariaDB: %v", err)
		}
		return fail(se)
	}
	if err := trackSessionState(be); err != nil {
		be.Close()
		return err
	}
	s.mu.Lock()
	old := s.be
	s.be, s.beRd = be, be.Reader()
	s.mu.Unlock()
	old.Close()
	s.user, s.db, s.status = user, cu.Database, be.Status
	s.vars = map[string]string{}
	s.userVars = map[string]string{}
	s.stmts = map[uint32]*prepared{}
	entry.Result = "ok"
	s.record(entry, start)
	return s.sendOK(nil)
}

// authSwitch asks the client to answer the connection's scramble with
// mysql_native_password and returns its token.
func (s *session) authSwitch() ([]byte, error) {
	seq := s.pio.Sequence()
	sw := mysqlproto.AuthSwitchRequest{Plugin: mysqlproto.AuthNativePassword, Data: s.scramble}
	s.out.writePacket(seq, sw.Append(nil))
	if err := s.out.finish(); err != nil {
		return nil, err
	}
	s.pio.SetSequence(seq + 1)
	token, err := s.pio.ReadPacket()
	if err != nil {
		return nil, err
	}
	return append([]byte(nil), token...), nil
}

// trackSessionState makes MariaDB report every session change in its OK
// packets, as an OBServer reports them to a proxy. A new login and
// COM_RESET_CONNECTION start with MariaDB's defaults, which report only a
// few variables.
func trackSessionState(be *mysqlproto.Client) error {
	if !be.Caps.Has(mysqlproto.ClientSessionTrack) {
		return nil
	}
	_, err := be.Exec("SET SESSION session_track_system_variables='*', session_track_schema=ON, session_track_state_change=ON")
	return err
}
