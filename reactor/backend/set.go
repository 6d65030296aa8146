package backend

import (
	"slices"
	"sync/atomic"
)

// Set is one client session's server sessions: at most one per server
// address (OceanBase mode holds one per server it routed to, mysql mode
// one in all), the one the last statement used, and that one published to
// other goroutines.
//
// Two notions of "the session's server session" coexist, as the command
// path needs both:
//   - Last is the open server session the last statement used; dropping
//     it clears Last, so the next statement picks again;
//   - Current is the server session of the statement in progress or the
//     last one, even once dropped: the one its answer, its failure and its
//     diagnosis speak of.
//
// The goroutine running the owning session's command (or its login) calls
// every method except Shared, which any goroutine may call. The zero Set
// is empty and ready.
type Set struct {
	conns   []*Conn
	last    *Conn
	current *Conn
	shared  atomic.Pointer[Conn]
}

// Current is the server session of the statement in progress or of the
// last one, or nil before the first.
func (s *Set) Current() *Conn { return s.current }

// Last is the open server session the last statement used, or nil when
// none or it was dropped.
func (s *Set) Last() *Conn { return s.last }

// Shared is Current as published for other goroutines (KILL, the
// session views, a close): the server session to interrupt or to name.
// Any goroutine.
func (s *Set) Shared() *Conn { return s.shared.Load() }

// Publish makes c what Shared returns before any statement used it: a
// login's server session, so that a KILL or a close during the login
// reaches it.
func (s *Set) Publish(c *Conn) { s.shared.Store(c) }

// All is the open server sessions, in the order they were added. The
// slice is the set's own: valid until the set changes, not to be kept or
// changed by the caller.
func (s *Set) All() []*Conn { return s.conns }

// Len is how many server sessions the set holds.
func (s *Set) Len() int { return len(s.conns) }

// On is the server session to addr, or nil.
func (s *Set) On(addr string) *Conn {
	for _, c := range s.conns {
		if c.Addr == addr {
			return c
		}
	}
	return nil
}

// Add adds c, a server session to an address the set has none to.
func (s *Set) Add(c *Conn) { s.conns = append(s.conns, c) }

// Use makes c, which the set holds or gets now, the one the statement
// runs on: Last, Current and Shared, marked current for the idle sweeper
// (Conn.Current) and touched. It reports whether that changed the
// server session.
func (s *Set) Use(c *Conn) (changed bool) {
	c.Touch()
	if s.last == c {
		return false
	}
	if !slices.Contains(s.conns, c) {
		s.conns = append(s.conns, c)
	}
	if s.last != nil {
		s.last.Current.Store(false)
	}
	c.Current.Store(true)
	s.last, s.current = c, c
	s.shared.Store(c)
	return true
}

// Drop closes c and forgets it; Current still names it.
func (s *Set) Drop(c *Conn) {
	c.Close()
	if i := slices.Index(s.conns, c); i >= 0 {
		s.conns = slices.Delete(s.conns, i, i+1)
	}
	if s.last == c {
		s.last = nil
	}
}

// CloseAll closes every server session and forgets them, with the one
// only published (a login's); Current still names the last one used.
func (s *Set) CloseAll() {
	for _, c := range s.conns {
		c.Close()
	}
	if c := s.shared.Load(); c != nil {
		c.Close()
	}
	s.conns, s.last = nil, nil
}
