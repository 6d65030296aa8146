package reactor

import (
	"context"
	"errors"
	"strconv"
	"time"

	"obgate/mysqlproto"
	"obgate/reactor/backend"
	"obgate/route"
)

// killRun is the statement as it runs a client's KILL: the target found
// among obgate's sessions or by server connection id, and the KILL sent
// where the target's statement runs.
type killRun struct{ *statement }

// killStmt is a parsed KILL [CONNECTION | QUERY] id.
type killStmt struct {
	query bool
	id    uint32
}

// handleKill runs KILL [CONNECTION | QUERY] id with MySQL's semantics
// (see kill). It reports false when the statement is not a plain KILL
// (KILL PROXYSESSION, KILL USER, ...), which goes elsewhere.
func (st killRun) handleKill(n int, f *route.Facts, start time.Time) (bool, error) {
	s := st.s
	if !f.Kill.OK {
		return false, nil
	}
	if err := s.client.skipPacket(n); err != nil {
		return true, err
	}
	return true, st.kill(killStmt{query: f.Kill.Query, id: f.Kill.ID}, start)
}

// handleProcessKill runs the old COM_PROCESS_KILL command.
func (st killRun) handleProcessKill(n int, id uint32, start time.Time) error {
	s := st.s
	if err := s.client.skipPacket(n); err != nil {
		return err
	}
	return st.kill(killStmt{id: id}, start)
}

// kill runs KILL [CONNECTION | QUERY] id. id may be any id a client can
// have seen: an obgate client session id (handshake, SHOW PROCESSLIST,
// CONNECTION_ID() through an OceanBase server) or a server's connection id
// (CONNECTION_ID() of a MySQL server). It resolves to exactly one session
// or to none (ERR 1094), never to a session that merely has an equal id.
func (st killRun) kill(k killStmt, start time.Time) error {
	s := st.s
	target, found := st.killTarget(k.id)
	if !found {
		if !s.srv.ids.Layout.IsClientID(k.id) && s.servers.Last() != nil {
			// A connection of the server's own that no obgate session
			// holds: the server decides, as for a direct client.
			return st.forwardKill(k, k.id, start)
		}
		return st.answerKillError(mysqlproto.NewSQLError(mysqlproto.ERNoSuchThread, "Unknown thread id: %d", k.id), start)
	}
	if target == s {
		if k.query {
			return st.answerKillError(mysqlproto.NewSQLError(mysqlproto.ERQueryInterrupted, "Query execution was interrupted"), start)
		}
		_ = s.writeError(mysqlproto.NewSQLError(mysqlproto.ERQueryInterrupted, "Query execution was interrupted"))
		return quit(QuitKilled, nil)
	}
	tinfo := target.Info()
	if !k.query {
		// Until the KILL is answered (and the target closed), a break of
		// the target's server connection is the KILL's doing: no
		// statement of the target goes again elsewhere (route.Try.Stopped).
		target.lifecycle.killsPending.Add(1)
		defer target.lifecycle.killsPending.Add(-1)
	}
	return s.side.killSession(k, target, tinfo, start)
}

// answerKillError answers a KILL with e.
func (st killRun) answerKillError(e *mysqlproto.SQLError, start time.Time) error {
	s := st.s
	s.countStatement(route.StmtKill, true, start)
	return s.writeError(e)
}

// killSession is kill of another session in mysql routing mode: on the
// same server the server decides, with its own id; on another one obgate
// closes the target's connection if the user owns it.
func (m mysqlEvents) killSession(k killStmt, target *Session, tinfo SessionInfo, start time.Time) error {
	s := m.s
	if tinfo.ServerAddr != s.servers.Current().Addr {
		return m.killElsewhere(k, target, tinfo, start)
	}
	err := killRun{s.st}.forwardKill(k, tinfo.ServerID, start)
	if err == nil && !k.query && !s.scanner.IsErr() {
		target.closeFor(closeNow, QuitKilled, "kill")
	}
	return err
}

// killElsewhere kills a session whose server is not this session's: the
// target's server decides, as it would for a direct client, with the
// KILL sent there as this session's user, logged in on it for the
// purpose (mysql_move.go's login). Equal login names are not enough: the
// same name on two servers may be two accounts, and a user may kill
// another's session only with a privilege only the server knows. When
// obgate cannot log the user in there (no known hash), the KILL is
// refused.
func (m mysqlEvents) killElsewhere(k killStmt, target *Session, tinfo SessionInfo, start time.Time) error {
	s := m.s
	if m.move.resp == nil || m.move.stage1 == nil {
		return killRun{s.st}.answerKillError(mysqlproto.NewSQLError(mysqlproto.ERKillDenied,
			"You are not owner of thread %d: it runs on server %s, where obgate cannot log you in to ask it (mysql_user_hashes)", k.id, tinfo.ServerAddr), start)
	}
	ctx, cancel := context.WithTimeout(context.Background(), s.cfg.ShortAsyncTaskTimeout)
	be, err := m.loginOn(ctx, tinfo.ServerAddr)
	cancel()
	if err != nil {
		s.countStatement(route.StmtKill, true, start)
		return s.writeError(mysqlproto.NewSQLError(mysqlproto.CRConnHostError, "KILL %d: cannot reach server %s: %v", k.id, tinfo.ServerAddr, err))
	}
	defer be.Close()
	_, err = be.Command(appendKill(nil, k.query, tinfo.ServerID), s.st.commandOptions())
	var se *mysqlproto.SQLError
	switch {
	case err == nil:
		if !k.query {
			target.closeFor(closeNow, QuitKilled, "kill")
		}
		s.countStatement(route.StmtKill, false, start)
		return s.writeOK(0, "")
	case errors.As(err, &se):
		return killRun{s.st}.answerKillError(se, start)
	}
	return killRun{s.st}.answerKillError(lostServer(tinfo.ServerAddr), start)
}

// killTarget resolves a KILL id to a live, non-administrator session: an
// obgate id names a session of this process; any other id is a server's
// connection id, looked up by the routing mode (serverIDOwner).
func (st killRun) killTarget(id uint32) (*Session, bool) {
	s := st.s
	var target *Session
	if s.srv.ids.Layout.IsClientID(id) {
		target, _ = s.srv.Session(id)
	} else {
		target = s.side.serverIDOwner(id)
	}
	if target == nil || target.Info().Admin { // Info locks: target may be logging in
		return nil, false
	}
	return target, true
}

// serverIDOwner: a MySQL server's thread ids are its own, so they are
// looked up among the server sessions to the server this session uses
// (the server a direct client would have asked).
func (m mysqlEvents) serverIDOwner(id uint32) *Session {
	if m.s.servers.Current() == nil {
		return nil
	}
	return ownerSession(m.s.srv.servers.OwnerOf(m.s.servers.Current().Addr, id))
}

// serverIDOwner: an OBServer session id is unique in its cluster, so it is
// looked up on every server of the session's cluster.
func (o obEvents) serverIDOwner(id uint32) *Session {
	return ownerSession(o.s.srv.servers.OwnerAnywhere(id, func(be *backend.Conn) bool {
		s := ownerSession(be.Owner)
		return s != nil && s.side.clusterOf() == o.cluster
	}))
}

// appendKill appends the text of KILL [QUERY] id, as a COM_QUERY payload.
func appendKill(dst []byte, query bool, id uint32) []byte {
	dst = append(dst, byte(mysqlproto.ComQuery))
	dst = append(dst, "KILL "...)
	if query {
		dst = append(dst, "QUERY "...)
	}
	return strconv.AppendUint(dst, uint64(id), 10)
}

// forwardKill sends KILL [QUERY] serverID to the session's current server
// and answers the client (sendKill).
func (st killRun) forwardKill(k killStmt, serverID uint32, start time.Time) error {
	s := st.s
	return s.side.sendKill(k, appendKill(nil, k.query, serverID), start)
}

// sendKill: the server's answer goes to the client as it is.
func (m mysqlEvents) sendKill(_ killStmt, stmt []byte, start time.Time) error {
	return killRun{m.s.st}.runOnServer(stmt, mysqlproto.ComQuery, route.StmtKill, start)
}

// sendKill: obgate's own OK or the server's ERR (killOn).
func (o obEvents) sendKill(k killStmt, stmt []byte, start time.Time) error {
	be := o.s.servers.Last()
	if !be.Alive() {
		o.dropBroken(be)
		return killRun{o.s.st}.answerKillError(mysqlproto.NewSQLError(mysqlproto.ERNoSuchThread, "Unknown thread id: %d", k.id), start)
	}
	return o.killOn(be, stmt, start)
}

// runOnServer sends a command that obgate built (instead of the client's
// own bytes) to the session's server and streams the answer to the client.
func (st killRun) runOnServer(payload []byte, cmd mysqlproto.Command, kind route.StmtKind, start time.Time) error {
	s := st.s
	pkt, _ := mysqlproto.AppendPacket(make([]byte, 0, len(payload)+4), 0, payload)
	st.beforeRequest()
	if _, err := s.servers.Current().NetConn.Write(pkt); err != nil {
		return quitWith(QuitServerNetwork, err, lostServer(s.servers.Current().Addr))
	}
	_, err := st.answer(cmd, kind, start, true)
	return err
}

// killSession runs KILL [QUERY] for a target session in OceanBase mode: the
// statement goes, with the server's connection id, to the target's server
// through a server session of this client's (opened without the client if
// needed), so the server checks privileges as it would for a direct KILL.
func (o obEvents) killSession(k killStmt, target *Session, tinfo SessionInfo, start time.Time) error {
	s := o.s
	me := s.Info()
	if tinfo.Identity.Cluster != me.Identity.Cluster || tinfo.Identity.Tenant != me.Identity.Tenant {
		s.countStatement(route.StmtKill, true, start)
		return s.writeError(mysqlproto.NewSQLError(mysqlproto.ERKillDenied, "You are not owner of thread %d", k.id))
	}
	if tinfo.ServerAddr == "" {
		// No server to ask: only the session's owner may end it. A session
		// still logging in has proved nothing yet, so no user may.
		if !target.lifecycle.loggedIn.Load() || tinfo.Identity.User != me.Identity.User {
			s.countStatement(route.StmtKill, true, start)
			return s.writeError(mysqlproto.NewSQLError(mysqlproto.ERKillDenied, "You are not owner of thread %d", k.id))
		}
		if !k.query {
			target.closeFor(closeNow, QuitKilled, "kill") // nothing runs yet
		}
		s.countStatement(route.StmtKill, false, start)
		return s.writeOK(0, "")
	}
	be := o.s.servers.On(tinfo.ServerAddr)
	if be == nil || !be.Alive() {
		if be != nil {
			o.dropBroken(be) // it may hold this session's transaction
		}
		ctx, cancel := context.WithTimeout(context.Background(), s.cfg.ShortAsyncTaskTimeout)
		var err error
		be, _, err = o.openServer(ctx, tinfo.ServerAddr, false)
		cancel()
		if err != nil {
			s.countStatement(route.StmtKill, true, start)
			return s.st.writeErrorFor(err)
		}
	}
	err := o.killOn(be, appendKill(nil, k.query, tinfo.ServerID), start)
	if err == nil && !k.query && !s.st.killFailed {
		target.closeFor(closeNow, QuitKilled, "kill")
	}
	return err
}

// killOn runs a KILL statement obgate built on be, one of this session's
// server sessions that may not be its current one, as an internal command:
// be's status and session state never become the client's (the client
// gets obgate's own OK with its own status flags, or the server's ERR).
func (o obEvents) killOn(be *backend.Conn, stmt []byte, start time.Time) error {
	s := o.s
	_, err := be.Command(stmt, s.st.commandOptions())
	s.st.killFailed = err != nil
	var se *mysqlproto.SQLError
	switch {
	case err == nil:
		s.countStatement(route.StmtKill, false, start)
		return s.writeOK(0, "")
	case errors.As(err, &se):
		s.countStatement(route.StmtKill, true, start)
		return s.writeError(se)
	}
	o.dropBroken(be) // it may hold this session's transaction
	s.countStatement(route.StmtKill, true, start)
	return s.writeError(lostServer(be.Addr))
}
