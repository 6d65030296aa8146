package reactor

import (
	"obgate/mysqlproto"
	"obgate/route"
	"time"
)

// changeUser reads the user a COM_CHANGE_USER names (mysql routing mode,
// where the server runs it), so that once the server accepts it SHOW
// PROXYSESSION and KILL's ownership checks see the new user. A request
// obgate cannot read whole (over maxLoginPacket) or parse is refused
// with ERR 1043 rather than relayed: the server might accept it, and the
// session would then run as a user obgate still takes for the old one.
// It reports whether it answered the command itself.
func (m *mysqlSide) changeUser(n int, body []byte, whole bool) (bool, error) {
	s := m.s
	s.st.pendingUser = ""
	if !whole && n <= maxLoginPacket {
		p, err := s.client.io.Peek(mysqlproto.HeaderLen + n)
		if err != nil {
			return true, quit(QuitClientNetwork, err)
		}
		body, whole = p[mysqlproto.HeaderLen+1:], true
	}
	var cu *mysqlproto.ChangeUser
	if whole {
		cu, _ = mysqlproto.ParseChangeUser(append([]byte{byte(mysqlproto.ComChangeUser)}, body...), s.caps)
	}
	if cu == nil {
		if err := s.client.skipPacket(n); err != nil {
			return true, err
		}
		return true, s.writeError(mysqlproto.NewSQLError(mysqlproto.ERHandshakeError, "Bad handshake: obgate could not read this COM_CHANGE_USER"))
	}
	s.st.pendingUser = cu.User
	return false, nil
}

// noteChangeUserMySQL is mysql mode's column of the command table for
// COM_CHANGE_USER (commands.go): changeUser.
func noteChangeUserMySQL(s *Session, _ mysqlproto.Command, n int, body []byte, whole bool, _ time.Time) (bool, error) {
	return s.my.changeUser(n, body, whole)
}

// changedUser is the identity a COM_CHANGE_USER's user name gives in
// mysql routing mode: the name as it is (see mysqlIdentity).
func changedUser(name string) route.Identity { return mysqlIdentity(name) }
