package reactor

import (
	"sync"
	"sync/atomic"
)

// serverRegistry indexes every open server session by server address, so
// that code outside a session (health, admin, metrics, KILL) can count
// them, find the session that owns a server's connection id, or close all
// of them. Sessions add a server session once it is logged in; its close
// removes it. Any goroutine may call every method: lookups of an address
// take no global lock (a sync.Map of per-address sets, each with its own
// mutex, held only to copy or change that set).
type serverRegistry struct {
	addrs sync.Map // server address → *addrSessions
	total atomic.Int64
	watch *serverWatch // nil when close events cannot be watched
	// newAddr, when set (before any add), is told about each address the
	// first time a server session to it is added; metrics register the
	// address's gauge there.
	newAddr func(addr string)
}

// addrSessions is the set of server sessions to one address.
type addrSessions struct {
	mu    sync.Mutex
	conns map[*serverConn]struct{}
}

// add registers be, owned by s, and starts watching its connection for
// the server's close.
func (r *serverRegistry) add(be *serverConn, owner *Session) {
	be.owner = owner
	be.reg = r
	v, ok := r.addrs.Load(be.addr)
	if !ok {
		var loaded bool
		v, loaded = r.addrs.LoadOrStore(be.addr, &addrSessions{conns: map[*serverConn]struct{}{}})
		if !loaded && r.newAddr != nil {
			r.newAddr(be.addr)
		}
	}
	set := v.(*addrSessions)
	set.mu.Lock()
	set.conns[be] = struct{}{}
	set.mu.Unlock()
	r.total.Add(1)
	if nc, ok := be.conn.(*npServerConn); ok {
		nc.setOnGone(be.serverGoneLater) // netpoll's hang-up event
	} else if r.watch != nil {
		r.watch.add(be)
	}
}

// remove forgets be; serverConn.close calls it once.
func (r *serverRegistry) remove(be *serverConn) {
	if r.watch != nil {
		r.watch.remove(be)
	}
	v, ok := r.addrs.Load(be.addr)
	if !ok {
		return
	}
	set := v.(*addrSessions)
	set.mu.Lock()
	if _, ok := set.conns[be]; ok {
		delete(set.conns, be)
		r.total.Add(-1)
	}
	set.mu.Unlock()
}

// snapshot returns the server sessions to addr open now.
func (r *serverRegistry) snapshot(addr string) []*serverConn {
	v, ok := r.addrs.Load(addr)
	if !ok {
		return nil
	}
	set := v.(*addrSessions)
	set.mu.Lock()
	out := make([]*serverConn, 0, len(set.conns))
	for be := range set.conns {
		out = append(out, be)
	}
	set.mu.Unlock()
	return out
}

// count is the number of server sessions open to addr.
func (r *serverRegistry) count(addr string) int {
	v, ok := r.addrs.Load(addr)
	if !ok {
		return 0
	}
	set := v.(*addrSessions)
	set.mu.Lock()
	defer set.mu.Unlock()
	return len(set.conns)
}

// closeAll closes every server session to addr, idle or busy, and
// returns how many it closed. A session whose command was using one sees
// its server I/O fail and handles that as a server break.
func (r *serverRegistry) closeAll(addr string) int {
	n := 0
	for _, be := range r.snapshot(addr) {
		if be.close() {
			n++
		}
	}
	return n
}

// ownerOf returns the client session that owns the server session to addr
// whose server connection id is threadID.
func (r *serverRegistry) ownerOf(addr string, threadID uint32) *Session {
	for _, be := range r.snapshot(addr) {
		if be.threadID == threadID && !be.closed.Load() {
			return be.owner
		}
	}
	return nil
}

// ownerAnywhere returns the client session owning a server session, to
// any address, whose server connection id is threadID and that match
// accepts.
func (r *serverRegistry) ownerAnywhere(threadID uint32, match func(*serverConn) bool) *Session {
	var owner *Session
	r.addrs.Range(func(k, _ any) bool {
		for _, be := range r.snapshot(k.(string)) {
			if be.threadID == threadID && !be.closed.Load() && match(be) {
				owner = be.owner
				return false
			}
		}
		return true
	})
	return owner
}

// ServerSessionCount is the number of server sessions obgate holds to the
// server at addr, over all client sessions. Any goroutine may call it.
func (srv *Server) ServerSessionCount(addr string) int { return srv.servers.count(addr) }

// CloseServerSessions closes every server session to addr, idle or busy,
// and returns how many it closed: for a server known to be dead. Client
// sessions that used one go on with another server session (a statement
// running on one gets an error, as for any server break). Any goroutine
// may call it.
func (srv *Server) CloseServerSessions(addr string) int { return srv.servers.closeAll(addr) }
