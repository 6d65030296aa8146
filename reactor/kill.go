package reactor

import (
	"strconv"
	"time"

	"obgate/mysqlproto"
	"obgate/route"
)

// killStmt is a parsed KILL [CONNECTION | QUERY] id.
type killStmt struct {
	query bool
	id    uint32
}

// handleKill runs KILL [CONNECTION | QUERY] id with MySQL's semantics
// (see kill). It reports false when the statement is not a plain KILL
// (KILL PROXYSESSION, KILL USER, ...), which goes elsewhere.
func (s *Session) handleKill(n int, f *route.Facts, start time.Time) (bool, error) {
	if !f.Kill.OK {
		return false, nil
	}
	if err := s.skipPacket(n); err != nil {
		return true, err
	}
	return true, s.kill(killStmt{query: f.Kill.Query, id: f.Kill.ID}, start)
}

// handleProcessKill runs the old COM_PROCESS_KILL command.
func (s *Session) handleProcessKill(n int, id uint32, start time.Time) error {
	if err := s.skipPacket(n); err != nil {
		return err
	}
	return s.kill(killStmt{id: id}, start)
}

// kill runs KILL [CONNECTION | QUERY] id. id may be any id a client can
// have seen: an obgate client session id (handshake, SHOW PROCESSLIST,
// CONNECTION_ID() through an OceanBase server) or a server's connection id
// (CONNECTION_ID() of a MySQL server). It resolves to exactly one session
// or to none (ERR 1094), never to a session that merely has an equal id.
func (s *Session) kill(k killStmt, start time.Time) error {
	fail := func(e *mysqlproto.SQLError) error {
		s.countStatement(route.StmtKill, true, start)
		return s.writeError(e)
	}
	target, found := s.killTarget(k.id)
	if !found {
		if !s.srv.ids.layout.isClientID(k.id) && s.currentServer() != nil {
			// A connection of the server's own that no obgate session
			// holds: the server decides, as for a direct client.
			return s.forwardKill(k, k.id, start)
		}
		return fail(mysqlproto.NewSQLError(mysqlproto.ERNoSuchThread, "Unknown thread id: %d", k.id))
	}
	if target == s {
		if k.query {
			return fail(mysqlproto.NewSQLError(mysqlproto.ERQueryInterrupted, "Query execution was interrupted"))
		}
		_ = s.writeError(mysqlproto.NewSQLError(mysqlproto.ERQueryInterrupted, "Query execution was interrupted"))
		return quit(QuitKilled, nil)
	}
	tinfo := target.Info()
	if !k.query {
		// Until the KILL is answered (and the target closed), a break of
		// the target's server connection is the KILL's doing: no
		// statement of the target goes again elsewhere (route.Try.Stopped).
		target.killsPending.Add(1)
		defer target.killsPending.Add(-1)
	}
	if s.ob != nil {
		return s.obKill(k, target, tinfo, start)
	}
	if tinfo.ServerAddr != s.backend.addr {
		if k.query {
			return fail(mysqlproto.NewSQLError(mysqlproto.ERNotSupportedYet,
				"KILL QUERY %d: that session runs on %s, this one on %s; connect through obgate to the same server", k.id, tinfo.ServerAddr, s.backend.addr))
		}
		if tinfo.User != s.userName() {
			return fail(mysqlproto.NewSQLError(mysqlproto.ERKillDenied, "You are not owner of thread %d", k.id))
		}
		target.requestClose(closeNow)
		s.countStatement(route.StmtKill, false, start)
		return s.writeOK(0, "")
	}
	// Same server: let the server decide, with the server's id.
	err := s.forwardKill(k, tinfo.ServerID, start)
	if err == nil && !k.query && !s.scanner.IsErr() {
		target.requestClose(closeNow)
	}
	return err
}

// killTarget resolves a KILL id to a live, non-administrator session: an
// obgate id names a session of this process; any other id is a server's
// connection id. A MySQL server's thread ids are its own, so they are
// looked up among the server sessions to the server this session uses
// (the server a direct client would have asked); an OBServer session id
// is unique in its cluster, so it is looked up on every server of the
// session's cluster.
func (s *Session) killTarget(id uint32) (*Session, bool) {
	var target *Session
	switch {
	case s.srv.ids.layout.isClientID(id):
		target, _ = s.srv.Session(id)
	case s.ob != nil:
		target = s.srv.servers.ownerAnywhere(id, func(be *serverConn) bool {
			return be.owner != nil && be.owner.ob != nil && be.owner.ob.cluster == s.ob.cluster
		})
	case s.backend != nil:
		target = s.srv.servers.ownerOf(s.backend.addr, id)
	}
	if target == nil || target.Info().Admin { // Info locks: target may be logging in
		return nil, false
	}
	return target, true
}

// currentServer is the server session the session's last statement used,
// or nil.
func (s *Session) currentServer() *serverConn {
	if s.ob != nil {
		return s.ob.last
	}
	return s.backend
}

// forwardKill sends KILL [QUERY] serverID to the session's current server
// and answers the client with the server's answer (mysql mode) or with
// obgate's own OK or the server's ERR (OceanBase mode).
func (s *Session) forwardKill(k killStmt, serverID uint32, start time.Time) error {
	stmt := []byte{byte(mysqlproto.ComQuery)}
	stmt = append(stmt, "KILL "...)
	if k.query {
		stmt = append(stmt, "QUERY "...)
	}
	stmt = strconv.AppendUint(stmt, uint64(serverID), 10)
	if s.ob == nil {
		return s.runOnServer(stmt, mysqlproto.ComQuery, route.StmtKill, start)
	}
	be := s.ob.last
	if !be.alive() {
		s.dropBrokenServer(be)
		s.countStatement(route.StmtKill, true, start)
		return s.writeError(mysqlproto.NewSQLError(mysqlproto.ERNoSuchThread, "Unknown thread id: %d", k.id))
	}
	return s.killOn(be, stmt, start)
}

// runOnServer sends a command that obgate built (instead of the client's
// own bytes) to the session's server and streams the answer to the client.
func (s *Session) runOnServer(payload []byte, cmd mysqlproto.Command, kind route.StmtKind, start time.Time) error {
	pkt, _ := mysqlproto.AppendPacket(make([]byte, 0, len(payload)+4), 0, payload)
	if _, err := s.backend.conn.Write(pkt); err != nil {
		return quitWith(QuitServerNetwork, err, lostServer(s.backend.addr))
	}
	_, err := s.answer(cmd, kind, start, true)
	return err
}
