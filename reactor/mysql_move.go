package reactor

import (
	"context"
	"encoding/hex"
	"fmt"
	"strings"
	"sync/atomic"

	"obgate/mysqlproto"
	"obgate/reactor/backend"
	"obgate/route"
)

// In mysql routing mode a client session has one server session. When
// that server fails, obgate can carry the session to another listed
// server if it can log the client in there: the client logged in with
// mysql_native_password against the server's scramble, and obgate knows
// the user's stored hash (SHA1(SHA1(password)): mysql_user_hashes, or
// mysql.user read with mysql_hash_reader_user), from which and the
// client's token it recovers SHA1(password) once, at login. It then
// answers any later scramble as the client would. A user without a
// password needs no hash.
//
// Only a session that left nothing on its server but its database and
// character set may move: no transaction open, no SET (session or user
// variables), no prepared statement, no temporary table or lock. Such a
// session moves when its idle server connection closed or was closed by
// the detect task, and a read-only statement whose server broke before
// answering is sent again on the new server. Any other session behaves as
// before: an idle one whose server closed is disconnected, a statement
// whose server broke gets an ERR and the session ends.

// moveLogin is what a mysql-mode session keeps to log in elsewhere. Only
// the goroutine running the session's command uses it (and the login,
// before that).
type moveLogin struct {
	scramble []byte                        // the greeting's scramble the client answered
	resp     *mysqlproto.HandshakeResponse // the client's login, user name stripped
	stage1   []byte                        // SHA1(password); nil when the session cannot move
	caps     mysqlproto.Capability         // capabilities of the server login
	stateful bool                          // the session left state on its server
	useDB    string                        // the database of the USE in progress
	using    bool                          // a USE is in progress
	// canMove is movableOutsideTxn() as of the end of the last command, for the
	// server watch's goroutine; closedOnPurpose says a live server closed
	// the session's connection (it is not carried elsewhere).
	canMove         atomic.Bool
	closedOnPurpose atomic.Bool
}

// keepMoveLogin recovers SHA1(password) from the client's login when
// obgate knows the user's hash (mysql_user_hashes, or mysql.user read
// with mysql_hash_reader_user), so that the session may move later.
func (m *mysqlSide) keepMoveLogin(resp *mysqlproto.HandshakeResponse, caps mysqlproto.Capability) {
	s := m.s
	if resp.AuthPlugin != "" && resp.AuthPlugin != mysqlproto.AuthNativePassword {
		return
	}
	if len(resp.AuthResponse) == 0 {
		// A user without a password: logging in elsewhere needs nothing
		// obgate does not have.
		m.keepMove(resp, []byte{}, caps)
		return
	}
	hashes := s.srv.userHashCandidates(s.identity.User)
	if len(hashes) == 0 {
		return
	}
	var stage1 []byte
	for _, stage2 := range hashes {
		if st, good := mysqlproto.RecoverNativeStage1(m.move.scramble, resp.AuthResponse, stage2); good {
			stage1 = st
			break
		}
	}
	if stage1 == nil {
		s.srv.log.Warn("the user's known hash does not match the password the client logged in with; its session cannot move to another server",
			"session", s.id, "user", s.identity.User)
		return
	}
	m.keepMove(resp, stage1, caps)
}

// keepMove keeps what logging in elsewhere needs; an empty (non-nil)
// stage1 stands for an empty password.
func (m *mysqlSide) keepMove(resp *mysqlproto.HandshakeResponse, stage1 []byte, caps mysqlproto.Capability) {
	s := m.s
	r := *resp
	r.User = s.identity.User
	r.Attrs = append([]mysqlproto.ConnAttr(nil), resp.Attrs...)
	m.move.resp, m.move.stage1, m.move.caps = &r, stage1, caps
}

// userHash finds user's hash in a mysql_user_hashes list
// ("user:*HEX,user2:*HEX").
func userHash(list, user string) ([]byte, bool) {
	for _, item := range strings.Split(list, ",") {
		name, hash, ok := strings.Cut(strings.TrimSpace(item), ":")
		if !ok || name != user {
			continue
		}
		b, err := hex.DecodeString(strings.TrimPrefix(strings.TrimSpace(hash), "*"))
		if err != nil || len(b) != 20 {
			return nil, false
		}
		return b, true
	}
	return nil, false
}

// noteMoveState marks the session stateful after a statement that leaves
// state on the server that obgate cannot carry elsewhere. A plain USE
// does not: the database is replayed at the next login (its name is kept
// until the server answers, useDB); prepared statements do not either
// (prepared.go).
func (m *mysqlSide) noteMoveState(cmd mysqlproto.Command, f *route.Facts, body []byte, whole bool) {
	m.move.useDB, m.move.using = "", false
	switch {
	case cmd == mysqlproto.ComQuery && f.Kind == route.StmtUse && whole && !f.MultiStatement:
		if name, ok := route.UseTarget(body); ok {
			m.move.useDB, m.move.using = name, true
			return
		}
		m.move.stateful = true
	case cmd == mysqlproto.ComQuery && (f.Kind == route.StmtSet || f.Kind == route.StmtUse || f.Pins.Holds() || f.MultiStatement):
		m.move.stateful = true
	}
}

// afterMoveState learns from an answer what noteMoveState waited for: the
// database a USE chose, a COM_RESET_CONNECTION that cleared every state
// the session had left on its server, a COM_CHANGE_USER.
func (m *mysqlSide) afterMoveState(cmd mysqlproto.Command, failed bool) {
	s := m.s
	if cmd == mysqlproto.ComChangeUser {
		// Logging in elsewhere would need the new user's password. Marked
		// once the command ran (on the server the session may have just
		// moved to), whatever its outcome.
		m.move.stateful = true
	}
	if failed {
		return
	}
	switch cmd {
	case mysqlproto.ComQuery:
		if m.move.using {
			s.setDB(m.move.useDB)
		}
	case mysqlproto.ComResetConnection:
		m.move.stateful = false
	}
	if cmd == mysqlproto.ComResetConnection || cmd == mysqlproto.ComChangeUser {
		// The server closed every prepared statement.
		s.stmts.Reset()
		s.servers.Current().Stmts = nil
	}
}

// movable reports whether the session may move to another server now.
// Only the goroutine running the session's command calls it.
func (m *mysqlSide) movable() bool {
	s := m.s
	return !s.activity.inTrans.Load() && m.movableOutsideTxn()
}

// movableOutsideTxn reports whether the session could move but for an
// open transaction: its server's loss then breaks the transaction (ERR
// 6002 until the client ends it, txnbroken.go) and the session moves
// after it.
func (m *mysqlSide) movableOutsideTxn() bool {
	s := m.s
	return m.move.stage1 != nil && !m.move.stateful && !m.move.closedOnPurpose.Load() &&
		s.lifecycle.closeReq.Load() == closeNone && s.cfg != nil && s.cfg.ServerBreakAction != "disconnect"
}

// moveServer logs the client in on another listed server (the current
// one last) and makes that the session's server session. The old one is
// closed.
func (m *mysqlSide) moveServer() (*backend.Conn, error) {
	s := m.s
	old := s.servers.Current()
	if old != nil {
		s.st.tried = append(s.st.tried, old.Addr)
	}
	ctx, cancel := context.WithTimeout(context.Background(), s.cfg.ShortAsyncTaskTimeout)
	defer cancel()
	rt, err := s.srv.router.Plan(ctx, &route.Request{Servers: serverAddrs(s.cfg), Tried: s.st.tried}, nil)
	if err != nil {
		return nil, err
	}
	var lastErr error = errNoServer
	for _, addr := range rt.Addrs {
		be, err := m.loginOn(ctx, addr)
		if err != nil {
			lastErr = err
			continue
		}
		if old != nil {
			s.servers.Drop(old)
		}
		s.srv.servers.Add(be, s)
		s.servers.Use(be)
		s.srv.metrics.sessionsMoved.Inc()
		s.srv.log.Info("session moved to another server", "session", s.id, "from", addrOf(old), "to", addr)
		return be, nil
	}
	return nil, fmt.Errorf("%w: %v", errNoServer, lastErr)
}

// loginOn opens a server session to addr logged in as the client, in the
// client's current database.
func (m *mysqlSide) loginOn(ctx context.Context, addr string) (*backend.Conn, error) {
	s := m.s
	be, h, pio, err := s.srv.dialer.Dial(ctx, "", addr)
	if err != nil {
		return nil, err
	}
	r := *m.move.resp
	r.Capability = m.move.caps
	r.AuthPlugin = mysqlproto.AuthNativePassword
	r.AuthResponse = nil
	if len(m.move.stage1) > 0 {
		r.AuthResponse = mysqlproto.NativeTokenFromStage1(h.AuthData, m.move.stage1)
	}
	r.Database = s.DB()
	if r.Database != "" {
		r.Capability |= mysqlproto.ClientConnectWithDB
	} else {
		r.Capability &^= mysqlproto.ClientConnectWithDB
	}
	p, err := backend.OwnLogin(be, pio, &r, backend.LoginDeadline(ctx, s.cfg))
	if err != nil {
		return nil, fmt.Errorf("log in on %s: %w", addr, err)
	}
	ok, _ := mysqlproto.ParseOK(p, r.Capability)
	be.Status = ok.Status
	if err := s.st.runInitSQL(be); err != nil {
		be.Close()
		return nil, fmt.Errorf("log in on %s: %w", addr, err)
	}
	return be, nil
}

func addrOf(be *backend.Conn) string {
	if be == nil {
		return ""
	}
	return be.Addr
}
