package reactor

import (
	"time"

	"obgate/mysqlproto"
	"obgate/reactor/backend"
	"obgate/reactor/sessvars"
)

// What other goroutines may read of a session's server side (SHOW
// PROXYSESSION VARIABLES and ATTRIBUTE, KILL): published by the owner
// under Session.mu.

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
	TLS      bool   // the connection runs TLS (enable_server_ssl)
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
	last    *backend.Conn
}

// publishOB refreshes the snapshot when the variables or the server
// sessions changed; otherwise it costs two comparisons.
func (o *obSession) publishOB() {
	s := o.s
	if o.snap.ver == o.vars.Version() && o.snap.nserver == s.servers.Len() && o.snap.last == s.servers.Last() {
		return
	}
	if o.snap.ver != o.vars.Version() || o.snap.ver == 0 {
		o.updateWaitTimeout()
	}
	var vars []VarInfo
	if o.vars.DB() != "" {
		vars = append(vars, VarInfo{Name: "database", Value: o.vars.DB(), Kind: "database"})
	}
	for i := range sessvars.NumHot {
		if v, set := o.vars.Hot(i); set {
			vars = append(vars, VarInfo{Name: sessvars.HotNames[i], Value: v, Kind: "system"})
		}
	}
	for _, e := range o.vars.Sys() {
		vars = append(vars, VarInfo{Name: e.Name, Value: e.Value, Kind: "system"})
	}
	for _, e := range o.vars.User() {
		vars = append(vars, VarInfo{Name: e.Name, Value: e.Value, Kind: "user"})
	}
	servers := make([]ServerSessionInfo, 0, s.servers.Len())
	for _, be := range s.servers.All() {
		proto := "mysql"
		switch {
		case be.OB20 != nil:
			proto = "ob20"
		case be.Comp != nil:
			proto = "compressed"
		}
		servers = append(servers, ServerSessionInfo{Addr: be.Addr, ID: be.ThreadID, Protocol: proto, TLS: be.TLS,
			InTrans: be.Status.Has(mysqlproto.StatusInTrans), Current: be == s.servers.Last(), LastUsed: be.LastUsedAt()})
	}
	o.snap = obSnapshot{ver: o.vars.Version(), nserver: s.servers.Len(), last: s.servers.Last()}
	s.published.mu.Lock()
	s.published.varsPub, s.published.serversPub = vars, servers
	s.published.mu.Unlock()
}

// Variables returns the session state obgate replays on server sessions.
// Any goroutine may call it.
func (s *Session) Variables() []VarInfo {
	s.published.mu.Lock()
	defer s.published.mu.Unlock()
	return s.published.varsPub
}

// ServerSessions returns the session's server sessions. Any goroutine may
// call it.
func (s *Session) ServerSessions() []ServerSessionInfo {
	s.published.mu.Lock()
	defer s.published.mu.Unlock()
	return s.published.serversPub
}
