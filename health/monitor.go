package health

import (
	"maps"
	"sync"
	"sync/atomic"
	"time"

	"obgate/config"
	"obgate/route"
)

// Monitor tracks server availability. Safe for concurrent use; Available
// may be called from any goroutine on the statement path.
type Monitor struct {
	cfg *config.Store
	now func() time.Time

	// entries is copied on write: entries are added rarely (a server's
	// first failure), read on every routing decision without a lock or an
	// allocation.
	entries atomic.Pointer[map[entryKey]*entry]
	addMu   sync.Mutex
}

type entryKey struct {
	cluster string // "" in mysql routing mode
	addr    string
}

// entry is one server's failure record. Fields are atomics: sessions
// report into it and read it concurrently.
type entry struct {
	connectFailedAt atomic.Int64 // unix nanoseconds of the last connect failure, 0 after a success
	connectFailures atomic.Uint64
}

// NewMonitor returns a Monitor reading its parameters from cfg.
func NewMonitor(cfg *config.Store) *Monitor {
	return &Monitor{cfg: cfg, now: time.Now}
}

var _ route.Availability = (*Monitor)(nil)

// Available reports whether addr may take new requests: the cluster's own
// view allows it (OceanBase mode) and no connection to it failed within
// congestion_retry_interval.
func (m *Monitor) Available(c *route.Cluster, addr string) bool {
	if c != nil {
		if t := c.Table(); t != nil {
			if srv, ok := t.Server(addr); ok && !srv.Usable() {
				return false
			}
		}
	}
	e := m.lookup(c, addr)
	if e == nil {
		return true
	}
	at := e.connectFailedAt.Load()
	if at == 0 {
		return true
	}
	cfg := m.cfg.Load()
	if !cfg.EnableCongestion {
		return true
	}
	return m.now().UnixNano()-at >= int64(cfg.CongestionRetryInterval)
}

// ConnectFailed records that a connection to addr failed (refused, timed
// out, or the server did not send its handshake).
func (m *Monitor) ConnectFailed(c *route.Cluster, addr string) {
	e := m.entry(c, addr)
	e.connectFailures.Add(1)
	e.connectFailedAt.Store(m.now().UnixNano())
}

// ConnectSucceeded records that a connection to addr was opened, which
// clears an earlier connect failure.
func (m *Monitor) ConnectSucceeded(c *route.Cluster, addr string) {
	if e := m.lookup(c, addr); e != nil && e.connectFailedAt.Load() != 0 {
		e.connectFailedAt.Store(0)
	}
}

func key(c *route.Cluster, addr string) entryKey {
	if c == nil {
		return entryKey{addr: addr}
	}
	return entryKey{cluster: c.Name(), addr: addr}
}

func (m *Monitor) lookup(c *route.Cluster, addr string) *entry {
	p := m.entries.Load()
	if p == nil {
		return nil
	}
	return (*p)[key(c, addr)]
}

// entry returns addr's entry, adding it when it is new.
func (m *Monitor) entry(c *route.Cluster, addr string) *entry {
	if e := m.lookup(c, addr); e != nil {
		return e
	}
	m.addMu.Lock()
	defer m.addMu.Unlock()
	k := key(c, addr)
	old := m.entries.Load()
	if old != nil {
		if e := (*old)[k]; e != nil {
			return e
		}
	}
	next := map[entryKey]*entry{}
	if old != nil {
		next = maps.Clone(*old)
	}
	e := new(entry)
	next[k] = e
	m.entries.Store(&next)
	return e
}
