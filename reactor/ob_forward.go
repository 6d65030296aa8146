package reactor

import (
	"context"
	"errors"
	"net"
	"strconv"
	"time"

	"obgate/mysqlproto"
	"obgate/route"
)

// obTerminator handles an OK, EOF or ERR that ended a result in OceanBase
// mode; the packet ends at buf[dec]. It records the server status, learns
// the session-state report of an OK (database, system and user variables,
// server feedback), and rewrites that report into what a MySQL client
// reads: one variable per entry, without OceanBase's feedback variables and
// user variables, or nothing at all for a client that does not track
// session state. The OK is the one the scanner decoded; clientOK rewrites
// it from that. It returns the buffer (a bigger one when the packet grew)
// and the shifted positions.
func (s *Session) obTerminator(buf []byte, dec, end int) ([]byte, int, int) {
	sc := &s.scanner
	if sc.IsErr() {
		return buf, dec, end
	}
	if sc.ExtraOK() {
		return s.dropExtraOK(buf, dec, end)
	}
	st := sc.Status()
	s.status = st
	s.backend.status = st
	p := sc.Packet()
	if p[0] != mysqlproto.OKHeader || !st.Has(mysqlproto.StatusSessionStateChange) {
		return buf, dec, end
	}
	ok, good := sc.OK() // decoded once, by the scanner
	if !good {
		return buf, dec, end
	}
	s.ob.vars.learn(ok.SessionState, ok.Status, s.ob.feedback)
	out := s.clientOK(ok)
	delta := len(out) - len(p)
	start := dec - len(p) - mysqlproto.HeaderLen
	if end+delta > len(buf) {
		nb := getChunk(end + delta)
		copy(nb, buf[:end])
		putChunk(buf)
		buf = nb
	}
	copy(buf[dec+delta:end+delta], buf[dec:end])
	copy(buf[start+mysqlproto.HeaderLen:], out)
	mysqlproto.PutHeader(buf[start:], len(out), buf[start+3])
	return buf, dec + delta, end + delta
}

// dropExtraOK learns the session state of the OK a server sent after a
// result set's final EOF (EXTRA_OK_PACKET_FOR_STATISTICS: the partition-hit
// feedback of a SELECT travels there) and removes the packet, which ends
// at buf[dec], from what the client gets: the client's response ends with
// the EOF, as it expects.
func (s *Session) dropExtraOK(buf []byte, dec, end int) ([]byte, int, int) {
	sc := &s.scanner
	if ok, good := sc.OK(); good && ok.Status.Has(mysqlproto.StatusSessionStateChange) {
		s.ob.vars.learn(ok.SessionState, ok.Status, s.ob.feedback)
	}
	start := dec - len(sc.Packet()) - mysqlproto.HeaderLen
	n := copy(buf[start:], buf[dec:end])
	return buf, start, start + n
}

// clientOK builds, in the session's scratch buffer, the OK payload a
// client gets for a server's OK.
func (s *Session) clientOK(ok mysqlproto.OK) []byte {
	var state []byte
	track := s.caps.Has(mysqlproto.ClientSessionTrack)
	if track {
		state = s.ob.stateScratch[:0]
		it := mysqlproto.SessionStates(ok.SessionState)
		for {
			typ, data, more := it.Next()
			if !more {
				break
			}
			if typ != mysqlproto.SessionTrackSystemVariables {
				state = append(state, typ)
				state = mysqlproto.AppendLenEncBytes(state, data)
				continue
			}
			for pos := 0; pos < len(data); {
				name, value, next, good := mysqlproto.ParseSystemVariable(data, pos)
				if !good || string(name) == userVarSeparator {
					break
				}
				pos = next
				if feedbackVars[string(name)] {
					continue
				}
				state = appendVarEntry(state, name, value)
			}
		}
		s.ob.stateScratch = state
	}
	out := ok
	out.SessionState = state
	out.Status &^= mysqlproto.StatusSessionStateChange
	if len(state) > 0 {
		out.Status |= mysqlproto.StatusSessionStateChange
	}
	caps := s.caps & mysqlproto.ClientSessionTrack
	s.ob.okScratch = mysqlproto.AppendOK(s.ob.okScratch[:0], out, caps)
	return s.ob.okScratch
}

// appendVarEntry appends one SessionTrackSystemVariables entry.
func appendVarEntry(dst, name, value []byte) []byte {
	n := mysqlproto.LenEncIntSize(uint64(len(name))) + len(name) + mysqlproto.LenEncIntSize(uint64(len(value))) + len(value)
	dst = append(dst, mysqlproto.SessionTrackSystemVariables)
	dst = mysqlproto.AppendLenEncInt(dst, uint64(n))
	dst = mysqlproto.AppendLenEncBytes(dst, name)
	return mysqlproto.AppendLenEncBytes(dst, value)
}

// onFeedback reads the server feedback variables that steer routing.
func (s *Session) onFeedback(name, value []byte) {
	switch string(name) {
	case "ob_proxy_partition_hit":
		s.onPartitionHit(value)
	case "ob_proxy_set_trx_executed":
		// SET TRANSACTION ran: the next transaction's characteristics live
		// on this server session, so stay on it until it is used.
		s.ob.trxSpecified = string(value) == "1"
	}
}

// obAfterResponse updates OceanBase-mode facts after a response: the server
// session that ran the statement had the client's whole state before it
// and has learned every change since.
func (s *Session) obAfterResponse(cmd mysqlproto.Command, failed bool) {
	ob := s.ob
	be := s.backend
	be.touch()
	switch {
	case be.ob20 != nil:
		be.ob20.ShrinkBuffers()
	case be.comp != nil:
		be.comp.ShrinkBuffers()
	}
	ob.vars.markSynced(&be.sync)
	if !failed {
		switch cmd {
		case mysqlproto.ComInitDB:
			ob.vars.setDB(s.pendingDB)
			ob.vars.markSynced(&be.sync)
		case mysqlproto.ComResetConnection:
			s.resetOB(be)
		case mysqlproto.ComQuery:
			if s.st.pinCandidate {
				ob.pinned = true
			}
		}
	}
	s.st.pinCandidate = false
	ob.pinned = ob.pinned || ob.trxSpecified
	if ob.vars.dbVer != ob.publishedDB {
		ob.publishedDB = ob.vars.dbVer
		s.setDB(ob.vars.db)
	}
	s.publishOB()
}

// resetOB forgets the session state after COM_RESET_CONNECTION ran on
// keep (or a COM_CHANGE_USER, which resets the same way; keep is nil when
// no server session is left with the new state): other server sessions
// still carry the old state and are closed. The database and the
// multi-statement option outlive a reset, as on the server, so server
// sessions opened later get them.
func (s *Session) resetOB(keep *serverConn) {
	ob := s.ob
	for _, be := range append([]*serverConn(nil), ob.servers...) {
		if be != keep {
			s.dropServer(be)
		}
	}
	ob.vars = ob.vars.afterReset()
	if keep != nil {
		keep.sync = syncState{}
		ob.vars.markSynced(&keep.sync)
		keep.stmts = nil
	}
	s.stmts.reset()
	ob.pinned, ob.trxSpecified = false, false
	ob.heldBegin = nil
}

// defaultQueryTimeout is OceanBase's default ob_query_timeout.
const defaultQueryTimeout = 10 * time.Second

// queryTimeout is how long obgate waits for a server's answer in
// OceanBase mode, as ODP does: observer_query_timeout_delta plus the
// session's ob_query_timeout (the cluster's global value when the session
// did not set it, else OceanBase's default).
func (s *Session) queryTimeout() time.Duration {
	us := int64(-1)
	if s.ob.vars.hotSet[hotObQueryTimeout] {
		us, _ = strconv.ParseInt(s.ob.vars.hot[hotObQueryTimeout], 10, 64)
	} else if t := s.ob.cluster.Table(); t != nil {
		if v, ok := t.SysVars["ob_query_timeout"]; ok {
			us, _ = strconv.ParseInt(v, 10, 64)
		}
	}
	d := defaultQueryTimeout
	if us > 0 {
		d = time.Duration(us) * time.Microsecond
	}
	return d + s.cfg.ObserverQueryTimeoutDelta
}

// serverSessionFailed handles a server session that broke (or sent a frame
// whose checksum is wrong) before any byte of its answer reached the
// client, outside a transaction: the server session is closed and counted
// as failed, the statement fails with an ERR, and the client session goes
// on with its other server sessions. Its outcome on the server is unknown,
// which is what the error says.
func (s *Session) serverSessionFailed(err error) error {
	be := s.backend
	s.srv.metrics.serverFailure(err)
	s.srv.log.Warn("server session failed", "session", s.id, "server", be.addr, "err", err)
	s.dropServer(be)
	var reply *mysqlproto.SQLError
	var ne net.Error
	switch {
	case errors.As(err, &ne) && ne.Timeout():
		reply = mysqlproto.NewSQLError(mysqlproto.OBTimeout,
			"Timeout: server %s did not answer within %v (ob_query_timeout + observer_query_timeout_delta); the statement's outcome is unknown",
			be.addr, s.queryTimeout())
	case errors.Is(err, mysqlproto.ErrOB20PayloadChecksum) || errors.Is(err, mysqlproto.ErrOB20HeaderChecksum):
		reply = mysqlproto.NewSQLError(mysqlproto.OBPacketChecksumError,
			"Packet checksum error in the answer of server %s; the statement's outcome is unknown", be.addr)
	case s.st.resendable:
		// A read that could not go again: it changed nothing, so its
		// outcome is not in doubt; the server was lost under it.
		reply = mysqlproto.NewSQLError(mysqlproto.CRServerLost,
			"Lost connection to server %s during the query; nothing was changed, and no other server could take it", be.addr)
	default:
		reply = mysqlproto.OBErrTransUnknown.Detail(
			"the connection to server %s broke after the statement was sent and before its answer; it may or may not have run (obgate sends only reads again)", be.addr)
	}
	return &statementError{reply: reply, cause: err}
}

// resendElsewhere sends a one-piece request to another server session
// after the current one refused the write. The request carries no
// server-specific statement id (those are never resent).
func (s *Session) resendElsewhere(p []byte, orig error) error {
	if s.st.patchOn {
		return orig
	}
	s.dropServer(s.backend)
	be, err := s.routeStatement(needAny)
	if err != nil {
		return err
	}
	return be.writeRequest(p, true, true)
}

// obKill runs KILL [QUERY] for a target session in OceanBase mode: the
// statement goes, with the server's connection id, to the target's server
// through a server session of this client's (opened without the client if
// needed), so the server checks privileges as it would for a direct KILL.
func (s *Session) obKill(k killStmt, target *Session, tinfo SessionInfo, start time.Time) error {
	me := s.Info()
	if tinfo.Identity.Cluster != me.Identity.Cluster || tinfo.Identity.Tenant != me.Identity.Tenant {
		s.countStatement(route.StmtKill, true, start)
		return s.writeError(mysqlproto.NewSQLError(mysqlproto.ERKillDenied, "You are not owner of thread %d", k.id))
	}
	if tinfo.ServerAddr == "" {
		if !k.query {
			target.requestClose(closeNow) // nothing runs yet
		}
		s.countStatement(route.StmtKill, false, start)
		return s.writeOK(0, "")
	}
	be := s.findServer(tinfo.ServerAddr)
	if be == nil || !be.alive() {
		if be != nil {
			s.dropBrokenServer(be) // it may hold this session's transaction
		}
		ctx, cancel := context.WithTimeout(context.Background(), s.cfg.ShortAsyncTaskTimeout)
		var err error
		be, _, err = s.openServer(ctx, tinfo.ServerAddr, false)
		cancel()
		if err != nil {
			s.countStatement(route.StmtKill, true, start)
			return s.writeErrorFor(err)
		}
	}
	stmt := []byte{byte(mysqlproto.ComQuery)}
	stmt = append(stmt, "KILL "...)
	if k.query {
		stmt = append(stmt, "QUERY "...)
	}
	stmt = strconv.AppendUint(stmt, uint64(tinfo.ServerID), 10)
	err := s.killOn(be, stmt, start)
	if err == nil && !k.query && !s.st.killFailed {
		target.requestClose(closeNow)
	}
	return err
}

// killOn runs a KILL statement obgate built on be, one of this session's
// server sessions that may not be its current one, as an internal command:
// be's status and session state never become the client's (the client
// gets obgate's own OK with its own status flags, or the server's ERR).
func (s *Session) killOn(be *serverConn, stmt []byte, start time.Time) error {
	_, err := s.internalCommand(be, stmt)
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
	s.dropBrokenServer(be) // it may hold this session's transaction
	s.countStatement(route.StmtKill, true, start)
	return s.writeError(lostServer(be.addr))
}

// VarInfo is one piece of session state obgate keeps for a client session
// (SHOW PROXYSESSION VARIABLES).
type VarInfo struct {
	Name  string
	Value string
	Kind  string // "database", "system" or "user"
}

// ServerSessionInfo describes one server session of a client session.
type ServerSessionInfo struct {
	Addr     string
	ID       uint32 // the server's connection id
	Protocol string // "ob20" or "mysql"
	InTrans  bool
	Current  bool
	LastUsed time.Time
}

// obSnapshot is what other goroutines may read of an OceanBase-mode
// session; republished (under Session.mu) after commands that change it.
type obSnapshot struct {
	vars    []VarInfo
	servers []ServerSessionInfo
	ver     uint64 // vars.ver it reflects
	nserver int
	last    *serverConn
}

// publishOB refreshes the snapshot when the variables or the server
// sessions changed; otherwise it costs two comparisons.
func (s *Session) publishOB() {
	ob := s.ob
	if ob.snap.ver == ob.vars.ver && ob.snap.nserver == len(ob.servers) && ob.snap.last == ob.last {
		return
	}
	if ob.snap.ver != ob.vars.ver || ob.snap.ver == 0 {
		s.updateWaitTimeout()
	}
	var vars []VarInfo
	if ob.vars.db != "" {
		vars = append(vars, VarInfo{Name: "database", Value: ob.vars.db, Kind: "database"})
	}
	for i, set := range ob.vars.hotSet {
		if set {
			vars = append(vars, VarInfo{Name: hotNames[i], Value: ob.vars.hot[i], Kind: "system"})
		}
	}
	for _, e := range ob.vars.sys {
		vars = append(vars, VarInfo{Name: e.name, Value: e.value, Kind: "system"})
	}
	for _, e := range ob.vars.user {
		vars = append(vars, VarInfo{Name: e.name, Value: e.value, Kind: "user"})
	}
	servers := make([]ServerSessionInfo, 0, len(ob.servers))
	for _, be := range ob.servers {
		proto := "mysql"
		switch {
		case be.ob20 != nil:
			proto = "ob20"
		case be.comp != nil:
			proto = "compressed"
		}
		servers = append(servers, ServerSessionInfo{Addr: be.addr, ID: be.threadID, Protocol: proto,
			InTrans: be.status.Has(mysqlproto.StatusInTrans), Current: be == ob.last, LastUsed: be.lastUsedAt()})
	}
	ob.snap = obSnapshot{ver: ob.vars.ver, nserver: len(ob.servers), last: ob.last}
	s.mu.Lock()
	s.varsPub, s.serversPub = vars, servers
	s.mu.Unlock()
}

// Variables returns the session state obgate replays on server sessions.
// Any goroutine may call it.
func (s *Session) Variables() []VarInfo {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.varsPub
}

// ServerSessions returns the session's server sessions. Any goroutine may
// call it.
func (s *Session) ServerSessions() []ServerSessionInfo {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.serversPub
}
