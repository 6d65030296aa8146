package reactor

import (
	"crypto/tls"
	"net"
	"sort"
	"syscall"
	"time"

	"obgate/metrics"
	"obgate/mysqlproto"
	"obgate/reactor/backend"
	"obgate/reactor/connio"
)

// Read-only views for the admin package's SHOW PROXYSTAT, SHOW PROXYNET
// and SHOW PROXYSESSION, and KILL PROXYSESSION cs_id ss_id. Every function
// here may be called from any goroutine: it reads only what is shared
// (atomics, the session map, the server registry) and changes nothing but
// what KillServerSession closes.

// StatCounters are the process-wide numbers obgate counts, under the
// names of ODP's SHOW PROXYSTAT.
type StatCounters struct {
	TotalTransactions   uint64 // total_transaction_count: finished transactions
	TotalQueries        uint64 // total_query_count: finished statements
	CurrentClients      int64  // current_client_connections
	ActiveClients       int64  // current_active_client_connections: running a command
	ClientTransactions  int64  // current_client_transactions: inside a transaction
	TotalClients        uint64 // total_client_connections: logins, successful or not
	CurrentServers      int64  // current_server_connections
	BrokenServers       uint64 // broken_server_connections: server sessions that broke under a statement
	ClientRequestBytes  uint64 // client_request_total_size
	ClientResponseBytes uint64 // client_response_total_size
	ServerResponseBytes uint64 // server_response_total_size
}

// StatCounters returns the process's counters now.
func (srv *Server) StatCounters() StatCounters {
	m := srv.metrics
	st := StatCounters{
		CurrentClients:      srv.clients.Load(),
		TotalClients:        m.newClientOK.Get() + m.newClientFail.Get(),
		CurrentServers:      srv.servers.Total.Load(),
		BrokenServers:       m.serverBreaks.Get() + m.serverChecksumFailures.Get(),
		ClientRequestBytes:  m.bytesFromClient.Get(),
		ClientResponseBytes: m.bytesToClient.Get(),
		ServerResponseBytes: m.bytesFromServer.Get(),
	}
	m.tenants.Range(func(_, v any) bool {
		tm := v.(*tenantMetrics)
		st.TotalTransactions += slotValue(&tm.transactions)
		for k := range tm.stmts {
			for f := range tm.stmts[k] {
				for m := range tm.stmts[k][f] {
					st.TotalQueries += slotValue(&tm.stmts[k][f][m])
				}
			}
		}
		return true
	})
	srv.eachSession(func(s *Session) {
		if s.State() == StateCommand {
			st.ActiveClients++
		}
		if s.activity.inTrans.Load() {
			st.ClientTransactions++
		}
	})
	return st
}

// SocketFD is the file descriptor of the session's client socket, or -1
// when the session has none open (closed, or not a socket). From the login
// on it stays the same for the session's life; in client_io_mode netpoll
// the handshake runs on the accepted descriptor and the session then moves
// to a duplicate of it.
func (s *Session) SocketFD() int {
	if ref := s.client.closer.Load(); ref != nil {
		return fdOf(ref.Closer)
	}
	return -1
}

// fdOf finds the socket descriptor under one of obgate's connection
// layers.
func fdOf(c any) int {
	switch v := c.(type) {
	case *backend.PolledConn:
		return v.FD
	case *connio.PollerSafeCloser:
		return fdOf(v.Conn())
	case *tls.Conn:
		return fdOf(v.NetConn())
	case interface{ Fd() int }:
		return v.Fd()
	case syscall.Conn:
		rc, err := v.SyscallConn()
		if err != nil {
			return -1
		}
		fd := -1
		if rc.Control(func(f uintptr) { fd = int(f) }) != nil {
			return -1
		}
		return fd
	}
	return -1
}

// NetConnInfo is one open TCP connection of obgate's (SHOW PROXYNET
// CONNECTION): a client's, or a server session's.
type NetConnInfo struct {
	Server    bool   // a server session (obgate connected), else a client (accepted)
	ID        uint32 // the client session id, or the server's connection id
	SessionID uint32 // the client session it belongs to
	FD        int    // -1 when unknown
	Local     string // ip:port
	Remote    string // ip:port
	Since     time.Time
	// IdleTimeout is the client's idle limit (wait_timeout, OceanBase mode;
	// 0 when none) and IdleFor how long it has been idle (clients only).
	IdleTimeout time.Duration
	IdleFor     time.Duration
}

// NetConnections lists the open client connections and server sessions:
// clients by session id, each followed by its server sessions.
func (srv *Server) NetConnections() []NetConnInfo {
	owned := map[*Session][]*backend.Conn{}
	srv.servers.Each(func(be *backend.Conn) bool {
		if s, ok := be.Owner.(*Session); ok {
			owned[s] = append(owned[s], be)
		}
		return true
	})
	var sessions []*Session
	srv.eachSession(func(s *Session) { sessions = append(sessions, s) })
	sort.Slice(sessions, func(i, j int) bool { return sessions[i].id < sessions[j].id })
	now := time.Now()
	var out []NetConnInfo
	for _, s := range sessions {
		c := NetConnInfo{ID: s.id, SessionID: s.id, FD: s.SocketFD(), Remote: s.client.addr, Since: s.client.connectedAt,
			IdleTimeout: time.Duration(s.activity.waitTimeout.Load())}
		if s.State() == StateIdle {
			c.IdleFor = now.Sub(time.Unix(0, s.activity.lastActive.Load()))
		}
		if ref := s.client.closer.Load(); ref != nil {
			if nc, ok := ref.Closer.(interface{ LocalAddr() net.Addr }); ok && nc.LocalAddr() != nil {
				c.Local = nc.LocalAddr().String()
			} else if pc, ok := ref.Closer.(*connio.PollerSafeCloser); ok && pc.Conn().LocalAddr() != nil {
				c.Local = pc.Conn().LocalAddr().String()
			}
		}
		out = append(out, c)
		bes := owned[s]
		sort.Slice(bes, func(i, j int) bool { return bes[i].ThreadID < bes[j].ThreadID })
		for _, be := range bes {
			sc := NetConnInfo{Server: true, ID: be.ThreadID, SessionID: s.id, FD: fdOf(be.NetConn), Remote: be.Addr}
			if la := be.NetConn.LocalAddr(); la != nil {
				sc.Local = la.String()
			}
			out = append(out, sc)
		}
	}
	return out
}

// PollerCount is the number of netpoll pollers serving connections, 0 in
// client_io_mode net (a goroutine per connection).
func (srv *Server) PollerCount() int {
	if srv.poller == nil {
		return 0
	}
	return pollerCount(srv.cfg.Load())
}

// KillServerSession closes the server session ssID (the server's
// connection id, as SHOW PROXYSESSION ATTRIBUTE shows it) of client session
// csID, as KILL PROXYSESSION cs_id ss_id does. The client session stays:
// its next statement goes to a new server session; a statement running on
// the closed one fails as for any server break. Unknown ids give ERR 1094.
func (srv *Server) KillServerSession(csID, ssID uint32) error {
	s, ok := srv.Session(csID)
	if !ok {
		return mysqlproto.NewSQLError(mysqlproto.ERNoSuchThread, "Unknown thread id: %d", csID)
	}
	var target *backend.Conn
	srv.servers.Each(func(be *backend.Conn) bool {
		if be.Owner == backend.Owner(s) && be.ThreadID == ssID {
			target = be
			return false
		}
		return true
	})
	if target == nil {
		return mysqlproto.NewSQLError(mysqlproto.ERNoSuchThread, "Unknown thread id: %d", ssID)
	}
	target.Close()
	return nil
}

// slotValue is a statement series' count; 0 for one not made yet or
// dropped (monitor_item_limit, monitor_item_max_idle_period).
func slotValue(sl *metrics.Slot) uint64 {
	if c := sl.Counter(); c != nil {
		return c.Get()
	}
	return 0
}
