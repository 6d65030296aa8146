package obsim

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
	"sync"
	"time"

	"obgate/mysqlproto"
)

// Session ids as an OBServer 4.x shows them.
//
// Every session has its server session id: the handshake thread id, with
// the top bit set (serverSessionTag). A session may also have a client
// session id. An OBServer gives one to a direct login (its server session
// id) and to a login whose proxy either negotiated the client session id
// capability (ODP with client_session_id_version = 2 asks for it) or sent
// no __proxy_connection_id; the id is __client_session_id when the login
// carries it (OceanBase clients only). A proxy without the capability
// (client_session_id_version = 1) leaves its sessions without one.
//
// CONNECTION_ID() and the Id column of SHOW PROCESSLIST show the client
// session id, or the server session id where there is none. KILL takes a
// server session id (top bit set) from anyone; a session that has a client
// session id may also name a client session id (top bit clear), which
// reaches every session of that client on any node.

// serverSessionTag is the top bit, set in every id an OBServer gives its
// own sessions and clear in the client session ids ODP allocates.
const serverSessionTag = 1 << 31

// invalidSessionID is OceanBase's INVALID_SESSID: a __client_session_id of
// this value counts as absent.
const invalidSessionID = math.MaxUint32

// procView is what other sessions may read of a session: its identity and
// what it is doing, as SHOW PROCESSLIST shows it.
type procView struct {
	ready        bool // logged in
	id           uint32
	clientID     uint32 // valid when hasClientID
	hasClientID  bool
	proxySessID  uint64
	user, tenant string
	db           string
	host         string // the peer's ip:port
	command      string // OceanBase's command name (Sleep, Query, …)
	info         string // the statement a Query, Prepare or Execute runs
	since        time.Time
}

// displayID is the id CONNECTION_ID() and SHOW PROCESSLIST show.
func (v *procView) displayID() uint32 {
	if v.hasClientID {
		return v.clientID
	}
	return v.id
}

// procInfo is a session's procView behind a lock: the session's goroutine
// writes it, any goroutine reads it.
type procInfo struct {
	mu sync.Mutex
	v  procView
}

func (p *procInfo) view() procView {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.v
}

// obCommandNames are the command names an OBServer shows in the Command
// column, by command byte.
var obCommandNames = [...]string{
	"Sleep", "Quit", "Init DB", "Query", "Field List", "Create DB", "Drop DB", "Refresh",
	"Shutdown", "Statistics", "Process Info", "Connect", "Process Kill", "Debug", "Ping", "Time",
	"Delayed insert", "Change user", "Binlog dump", "Table dump", "Connect out", "Register slave",
	"Prepare", "Execute", "Stmt send long data", "Close stmt", "Stmt reset", "Set option",
	"Stmt fetch", "Daemno", "Binlog dump gtid", "Reset connection",
}

func obCommandName(cmd mysqlproto.Command) string {
	if int(cmd) < len(obCommandNames) {
		return obCommandNames[cmd]
	}
	return "invalid"
}

// setClientID decides the session's client session id at login, as an
// OBServer does (see the top of this file). attr is __client_session_id,
// parsed by the caller only for OceanBase clients.
func (s *session) setClientID(asked mysqlproto.OBCapability, attr uint32, hasAttr bool) {
	if !asked.Has(mysqlproto.OBCapClientSessionIDV2) && s.proxySessID != 0 {
		return
	}
	s.hasClientID, s.clientID = true, s.id
	if hasAttr && attr != invalidSessionID {
		s.clientID = attr
	}
}

// connectionID is what CONNECTION_ID() returns in this session.
func (s *session) connectionID() uint32 {
	if s.hasClientID {
		return s.clientID
	}
	return s.id
}

// procReady publishes the session once its login succeeded.
func (s *session) procReady() {
	s.proc.mu.Lock()
	s.proc.v = procView{ready: true, id: s.id, clientID: s.clientID, hasClientID: s.hasClientID,
		proxySessID: s.proxySessID, host: s.conn.RemoteAddr().String()}
	s.proc.mu.Unlock()
	s.procIdle()
}

// procBegin records that the session started a command.
func (s *session) procBegin(cmd mysqlproto.Command, info string, start time.Time) {
	s.proc.mu.Lock()
	s.proc.v.command, s.proc.v.info, s.proc.v.since = obCommandName(cmd), info, start
	s.proc.mu.Unlock()
}

// procIdle records that the session waits for its next command.
func (s *session) procIdle() {
	tenant := ""
	if s.tenant != nil {
		tenant = s.tenant.name
	}
	s.proc.mu.Lock()
	s.proc.v.command, s.proc.v.info, s.proc.v.since = "Sleep", "", time.Now()
	s.proc.v.user, s.proc.v.tenant, s.proc.v.db = s.user, tenant, s.db
	s.proc.mu.Unlock()
}

// liveSession is a logged-in session with a snapshot of its procView.
type liveSession struct {
	s *session
	n *Node
	v procView
}

// liveSessions returns the logged-in sessions of every node that match
// keep, in node order and by server session id.
func (c *Cluster) liveSessions(keep func(*procView) bool) []liveSession {
	var out []liveSession
	for _, n := range c.nodeList {
		n.mu.Lock()
		ss := make([]*session, 0, len(n.sessions))
		for s := range n.sessions {
			ss = append(ss, s)
		}
		n.mu.Unlock()
		first := len(out)
		for _, s := range ss {
			if v := s.proc.view(); v.ready && !s.killed() && keep(&v) {
				out = append(out, liveSession{s: s, n: n, v: v})
			}
		}
		slices.SortFunc(out[first:], func(a, b liveSession) int { return cmp.Compare(a.v.id, b.v.id) })
	}
	return out
}

// userHasPriv reports whether a MariaDB account has a global privilege;
// column is a mysql.user privilege column such as Process_priv.
func (c *Cluster) userHasPriv(user, column string) bool {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	var v string
	err := c.admin.QueryRowContext(ctx, `SELECT `+column+` FROM mysql.user WHERE User = ? AND Host IN ('127.0.0.1', '%')
		ORDER BY Host = '127.0.0.1' DESC LIMIT 1`, user).Scan(&v)
	if err != nil {
		c.logger.Debug("privilege lookup", "user", user, "privilege", column, "err", err)
		return false
	}
	return v == "Y"
}

// showProcesslist recognises SHOW [FULL] PROCESSLIST (an optional trailing
// ';').
func showProcesslist(toks []token) (full, ok bool) {
	if n := len(toks); n > 0 && toks[n-1].is(";") {
		toks = toks[:n-1]
	}
	switch {
	case len(toks) == 2 && toks[0].is("SHOW") && toks[1].is("PROCESSLIST"):
		return false, true
	case len(toks) == 3 && toks[0].is("SHOW") && toks[1].is("FULL") && toks[2].is("PROCESSLIST"):
		return true, true
	}
	return false, false
}

// processlist builds the answer to SHOW [FULL] PROCESSLIST as an OBServer
// 4.x gives it: the sessions of every node, a user tenant seeing its own
// tenant's sessions (all of them with the PROCESS privilege, else only its
// user's) and sys seeing every session; SHOW FULL PROCESSLIST adds Tenant,
// Ip and Port, and for sys Proxy_sessid.
func (s *session) processlist(full bool) *mysqlproto.ResultSet {
	sys := s.tenant.name == "sys"
	everyUser := sys || s.c.userHasPriv(s.user, "Process_priv")
	sessions := s.c.liveSessions(func(v *procView) bool {
		return sys || v.tenant == s.tenant.name && (everyUser || v.user == s.user)
	})
	idCol := mysqlproto.BigintColumn("Id")
	idCol.Flags |= mysqlproto.FlagUnsigned
	cols := []mysqlproto.Column{idCol, mysqlproto.VarcharColumn("User")}
	if full {
		cols = append(cols, mysqlproto.VarcharColumn("Tenant"))
	}
	cols = append(cols, mysqlproto.VarcharColumn("Host"), mysqlproto.VarcharColumn("db"), mysqlproto.VarcharColumn("Command"),
		mysqlproto.BigintColumn("Time"), mysqlproto.VarcharColumn("State"), mysqlproto.VarcharColumn("Info"))
	if full {
		cols = append(cols, mysqlproto.VarcharColumn("Ip"), mysqlproto.BigintColumn("Port"))
		if sys {
			psid := mysqlproto.BigintColumn("Proxy_sessid")
			psid.Flags |= mysqlproto.FlagUnsigned
			cols = append(cols, psid)
		}
	}
	rs := &mysqlproto.ResultSet{Columns: cols}
	now := time.Now()
	for _, ls := range sessions {
		v := &ls.v
		db := v.db
		if db == "" {
			db = "NULL" // an OBServer shows the word
		}
		state := "ACTIVE"
		var info any
		if v.command == "Sleep" {
			state = "SLEEP"
		}
		switch v.command {
		case "Query", "Prepare", "Execute":
			info = v.info
		}
		row := []any{uint64(v.displayID()), v.user}
		if full {
			row = append(row, v.tenant)
		}
		row = append(row, v.host, db, v.command, int64(math.Round(now.Sub(v.since).Seconds())), state, info)
		if full {
			row = append(row, nodeIP, int64(ls.n.port))
			if sys {
				var psid any
				if v.proxySessID != 0 {
					psid = v.proxySessID
				}
				row = append(row, psid)
			}
		}
		rs.Rows = append(rs.Rows, row)
	}
	return rs
}

// errClientKilled ends a session that killed its own client session.
var errClientKilled = errors.New("client session killed")

// tryKill handles KILL [CONNECTION | QUERY] id (see the top of this file
// for the ids it takes). ok reports whether the statement was a KILL; kerr
// is the error to answer with and err, when set, ends the session after
// the answer (nil kerr and errQuit: the session killed itself, no answer).
func (s *session) tryKill(toks []token) (kerr *mysqlproto.SQLError, ok bool, err error) {
	if len(toks) < 2 || !toks[0].is("KILL") {
		return nil, false, nil
	}
	i := 1
	queryOnly := false
	if toks[i].is("CONNECTION") {
		i++
	} else if toks[i].is("QUERY") {
		queryOnly = true
		i++
	}
	if i >= len(toks) || toks[i].kind != tokNumber || (i+1 < len(toks) && !(i+2 == len(toks) && toks[i+1].is(";"))) {
		// Never relayed: MariaDB would take the id for one of its threads.
		return mysqlproto.NewSQLError(mysqlproto.ERNotSupportedYet, "obsim: KILL takes a session id number"), true, nil
	}
	v, perr := strconv.ParseUint(toks[i].val, 10, 32)
	if perr != nil {
		return mysqlproto.NewSQLError(mysqlproto.ERNoSuchThread, "Unknown thread id: %s", toks[i].val), true, nil
	}
	id := uint32(v)
	byClient := s.hasClientID && id&serverSessionTag == 0
	targets := s.c.liveSessions(func(pv *procView) bool {
		if byClient {
			return pv.hasClientID && pv.clientID == id
		}
		return pv.id == id
	})
	if len(targets) == 0 {
		return mysqlproto.NewSQLError(mysqlproto.ERNoSuchThread, "Unknown thread id: %d", id), true, nil
	}
	if !s.mayKill(&targets[0].v) {
		return mysqlproto.NewSQLError(mysqlproto.ERKillDenied, "You are not owner of thread %d", id), true, nil
	}
	if !queryOnly {
		if byClient && id == s.clientID {
			// An OBServer answers its proxy with OB_ERR_KILL_CLIENT_SESSION,
			// and the session goes.
			return mysqlproto.NewSQLError(mysqlproto.OBErrKillClientSession, "%s", obErrorMessages[mysqlproto.OBErrKillClientSession]), true, errClientKilled
		}
		for _, t := range targets {
			if t.s == s {
				return nil, true, errQuit
			}
		}
		for _, t := range targets {
			t.s.kill()
		}
		return nil, true, nil
	}
	for _, t := range targets {
		if t.s != s {
			s.killQuery(t.s)
		}
	}
	return nil, true, nil
}

// mayKill applies an OBServer's rule: sys may kill any session, others
// only sessions of their own tenant: their user's, or any with SUPER.
func (s *session) mayKill(v *procView) bool {
	switch {
	case s.tenant.name == "sys":
		return true
	case v.tenant != s.tenant.name:
		return false
	case v.user == s.user:
		return true
	}
	return s.c.userHasPriv(s.user, "Super_priv")
}

// killQuery interrupts the statement target runs on MariaDB.
func (s *session) killQuery(target *session) {
	target.mu.Lock()
	be := target.be
	target.mu.Unlock()
	if be == nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if _, err := s.c.admin.ExecContext(ctx, fmt.Sprintf("KILL QUERY %d", be.ConnectionID())); err != nil {
		s.c.logger.Debug("kill query", "err", err)
	}
}
