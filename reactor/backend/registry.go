package backend

import (
	"sync"
	"sync/atomic"
)

// Registry indexes every open server session by server address, so
// that code outside a session (health, admin, metrics, KILL) can count
// them, find the session that owns a server's connection id, or close all
// of them. Sessions add a server session once it is logged in; its close
// removes it. Any goroutine may call every method: lookups of an address
// take no global lock (a sync.Map of per-address sets, each with its own
// mutex, held only to copy or change that set).
type Registry struct {
	addrs sync.Map // server address → *addrSessions
	Total atomic.Int64
	Watch *Watch // nil when close events cannot be watched
	// NewAddr, when set (before any add), is told about each address the
	// first time a server session to it is added; metrics register the
	// address's gauge there.
	NewAddr func(addr string)
}

// addrSessions is the set of server sessions to one address.
type addrSessions struct {
	mu    sync.Mutex
	conns map[*Conn]struct{}
}

// Owner is the client session a server session belongs to.
type Owner interface {
	// ServerGone is told that the server closed c; it runs on the
	// server watch's goroutine or a pooled one, never on the poller, and
	// contains its own panics.
	ServerGone(c *Conn)
}

// Add registers be, owned by owner, and starts watching its connection
// for the server's close.
func (r *Registry) Add(be *Conn, owner Owner) {
	be.Owner = owner
	be.reg = r
	v, ok := r.addrs.Load(be.Addr)
	if !ok {
		var loaded bool
		v, loaded = r.addrs.LoadOrStore(be.Addr, &addrSessions{conns: map[*Conn]struct{}{}})
		if !loaded && r.NewAddr != nil {
			r.NewAddr(be.Addr)
		}
	}
	set := v.(*addrSessions)
	set.mu.Lock()
	set.conns[be] = struct{}{}
	set.mu.Unlock()
	r.Total.Add(1)
	if nc, ok := be.NetConn.(*PolledConn); ok {
		nc.setOnGone(be.serverGoneLater) // netpoll's hang-up event
	} else if r.Watch != nil {
		r.Watch.add(be)
	}
}

// remove forgets be; Conn.Close calls it once.
func (r *Registry) remove(be *Conn) {
	if r.Watch != nil {
		r.Watch.remove(be)
	}
	v, ok := r.addrs.Load(be.Addr)
	if !ok {
		return
	}
	set := v.(*addrSessions)
	set.mu.Lock()
	if _, ok := set.conns[be]; ok {
		delete(set.conns, be)
		r.Total.Add(-1)
	}
	set.mu.Unlock()
}

// snapshot returns the server sessions to addr open now.
func (r *Registry) snapshot(addr string) []*Conn {
	v, ok := r.addrs.Load(addr)
	if !ok {
		return nil
	}
	set := v.(*addrSessions)
	set.mu.Lock()
	out := make([]*Conn, 0, len(set.conns))
	for be := range set.conns {
		out = append(out, be)
	}
	set.mu.Unlock()
	return out
}

// Count is the number of server sessions open to addr.
func (r *Registry) Count(addr string) int {
	v, ok := r.addrs.Load(addr)
	if !ok {
		return 0
	}
	set := v.(*addrSessions)
	set.mu.Lock()
	defer set.mu.Unlock()
	return len(set.conns)
}

// CloseAll closes every server session to addr, idle or busy, and
// returns how many it closed. A session whose command was using one sees
// its server I/O fail and handles that as a server break.
func (r *Registry) CloseAll(addr string) int {
	n := 0
	for _, be := range r.snapshot(addr) {
		if be.Close() {
			n++
		}
	}
	return n
}

// Each calls f with every open server session, address by address, until
// f returns false.
func (r *Registry) Each(f func(be *Conn) bool) {
	r.addrs.Range(func(k, _ any) bool {
		for _, be := range r.snapshot(k.(string)) {
			if !be.Closed.Load() && !f(be) {
				return false
			}
		}
		return true
	})
}

// OwnerOf returns the owner of the server session to addr whose server
// connection id is threadID.
func (r *Registry) OwnerOf(addr string, threadID uint32) Owner {
	for _, be := range r.snapshot(addr) {
		if be.ThreadID == threadID && !be.Closed.Load() {
			return be.Owner
		}
	}
	return nil
}

// OwnerAnywhere returns the owner of a server session, to any address,
// whose server connection id is threadID and that match accepts.
func (r *Registry) OwnerAnywhere(threadID uint32, match func(*Conn) bool) Owner {
	var owner Owner
	r.Each(func(be *Conn) bool {
		if be.ThreadID == threadID && match(be) {
			owner = be.Owner
			return false
		}
		return true
	})
	return owner
}
