package config

import (
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
)

// Store holds the running configuration and applies changes to it (ALTER PROXYCONFIG). All
// methods are safe for concurrent use by any goroutine.
//
// A Store keeps two snapshots. The running one (Load) is what the process uses. The saved
// one (Saved) is what the config file holds and what the next start will use. They differ
// only in need_reboot items changed since startup; Pending lists those.
type Store struct {
	running atomic.Pointer[Config]

	mu       sync.Mutex // serialises Set and Subscribe; guards the fields below
	saved    *Config
	subs     []*subscription
	path     string   // config file; "" keeps changes in memory only
	warnings []string // from Load; never changed afterwards
}

type subscription struct {
	fn func(old, new *Config)
}

// NewStore returns a Store that starts from c (Default() if nil) and keeps changes in memory
// only; tests and tools use it. Load returns one backed by the config file. c must not be
// modified afterwards.
func NewStore(c *Config) *Store {
	if c == nil {
		c = Default()
	}
	s := &Store{saved: c}
	s.running.Store(c)
	return s
}

// Load returns the running snapshot: one atomic load, no locks, no allocation. The result
// must not be modified. Callers on hot paths load once per unit of work (a command, a probe)
// and read fields from that snapshot.
func (s *Store) Load() *Config { return s.running.Load() }

// Saved returns the snapshot that the config file holds: the running values plus any
// need_reboot values set since startup. SHOW PROXYCONFIG prints these values.
func (s *Store) Saved() *Config {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.saved
}

// Pending returns the need_reboot items whose saved value differs from the running one, in
// registry order; they take effect at the next start.
func (s *Store) Pending() []*Item {
	s.mu.Lock()
	saved := s.saved
	s.mu.Unlock()
	running := s.Load()
	var out []*Item
	for _, it := range registry {
		if !it.Equal(saved, running) {
			out = append(out, it)
		}
	}
	return out
}

// IsPending reports whether the item has a saved value that waits for a restart.
func (s *Store) IsPending(it *Item) bool {
	s.mu.Lock()
	saved := s.saved
	s.mu.Unlock()
	return !it.Equal(saved, s.Load())
}

// Path returns the config file this store writes, or "" for a memory-only store.
func (s *Store) Path() string { return s.path }

// Warnings returns what Load skipped in the config file (unknown names), one line each.
func (s *Store) Warnings() []string { return slices.Clone(s.warnings) }

// Set implements ALTER PROXYCONFIG SET name = value. It validates value against the item's
// kind and range, the rules tying items together, and what --check-config checks
// (Problems: servers to route to, TLS files that load; a change that makes one of those
// fail is refused), writes the config file, then
// publishes: a dynamic item goes into a new running snapshot at once and subscribers are
// called; a need_reboot item is only saved and shows in Pending until the next start.
// Passwords are given in plaintext and stored as their SHA1 hex, as ODP does. If the file
// cannot be written nothing changes and the error says why.
//
// The returned item is the one named (also when err says its value was invalid); it is nil if
// the name is unknown. Setting a value equal to the current one succeeds and changes nothing.
func (s *Store) Set(name, value string) (*Item, error) {
	it, err := lookup(name)
	if err != nil {
		return nil, err
	}
	if it.fixed {
		return it, fmt.Errorf("%w: %s can only be set at startup", ErrNotAlterable, it.name)
	}

	s.mu.Lock()
	defer s.mu.Unlock()

	saved := s.saved.clone()
	if err := saved.set(it, value, fromAlter); err != nil {
		return it, err
	}
	if err := saved.validate(); err != nil {
		return it, err
	}
	// What --check-config would refuse at the next start is refused now.
	if err := brokenBy(s.saved, saved); err != nil {
		return it, fmt.Errorf("%w: %s: nothing changed: %w", ErrInvalidValue, it.name, err)
	}
	old := s.running.Load()
	running := old
	if !it.reboot {
		running = old.clone()
		it.store(running, it.get(saved), saved.text[it.index])
		if err := running.validate(); err != nil {
			return it, err
		}
	}
	if it.Value(saved) == it.Value(s.saved) {
		return it, nil
	}
	if s.path != "" {
		if err := writeConfigFile(s.path, saved); err != nil {
			return it, err
		}
	}
	s.saved = saved
	if running != old {
		s.running.Store(running)
		for _, sub := range s.subs {
			sub.fn(old, running)
		}
	}
	return it, nil
}

// Subscribe registers fn to be called after each change of the running snapshot, with the
// snapshot before and after. Components that hold derived state (timers, pools) use it;
// readers that load a snapshot per unit of work do not need it.
//
// fn runs on the goroutine that called Set, while the store is locked, so calls are ordered
// and never concurrent. It must return quickly and must not call Set, Saved, Pending,
// IsPending, Subscribe or a cancel function (Load is fine). The returned function cancels the
// subscription; any goroutine may call it, more than once.
func (s *Store) Subscribe(fn func(old, new *Config)) (cancel func()) {
	sub := &subscription{fn: fn}
	s.mu.Lock()
	s.subs = append(s.subs, sub)
	s.mu.Unlock()
	return func() {
		s.mu.Lock()
		defer s.mu.Unlock()
		for i, x := range s.subs {
			if x == sub {
				s.subs = append(s.subs[:i:i], s.subs[i+1:]...)
				return
			}
		}
	}
}
