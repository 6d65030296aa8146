package backend

import (
	"net"
	"testing"
)

func testConn(t *testing.T, addr string) *Conn {
	t.Helper()
	a, b := net.Pipe()
	t.Cleanup(func() { _ = a.Close(); _ = b.Close() })
	return &Conn{NetConn: a, Sock: a, Addr: addr}
}

// TestSetLastAndCurrent: dropping the last server session clears Last so
// that the next statement picks again, while Current and Shared go on
// naming it until another is used.
func TestSetLastAndCurrent(t *testing.T) {
	var s Set
	a, b := testConn(t, "a:1"), testConn(t, "b:1")
	if s.Current() != nil || s.Last() != nil || s.Shared() != nil || s.Len() != 0 {
		t.Fatal("the zero Set is not empty")
	}
	s.Add(a)
	if !s.Use(a) || s.Use(a) {
		t.Fatal("Use reports a change only when the server session changes")
	}
	if !a.Current.Load() || a.LastUsedAt().IsZero() {
		t.Fatal("Use neither marked nor touched the server session")
	}
	s.Use(b) // not added before: Use adds it
	if s.Len() != 2 || s.On("b:1") != b || s.On("a:1") != a || s.On("c:1") != nil {
		t.Fatalf("On and Len after Use of a new server session: len %d", s.Len())
	}
	if a.Current.Load() || !b.Current.Load() {
		t.Fatal("only the server session in use is marked current")
	}
	s.Drop(b)
	if !b.Closed.Load() || s.Len() != 1 || s.On("b:1") != nil {
		t.Fatal("Drop neither closed nor forgot the server session")
	}
	if s.Last() != nil {
		t.Fatal("Last names a dropped server session")
	}
	if s.Current() != b || s.Shared() != b {
		t.Fatal("Current and Shared no longer name the dropped server session of the last statement")
	}
	s.Drop(a) // not the last one: Last stays nil, the others stay
	if s.Len() != 0 || s.Current() != b {
		t.Fatal("dropping another server session changed Current")
	}
}

// TestSetCloseAllClosesPublished: a login's server session, only
// published, is closed by CloseAll as well as the ones in use.
func TestSetCloseAllClosesPublished(t *testing.T) {
	var s Set
	login, used := testConn(t, "a:1"), testConn(t, "b:1")
	s.Publish(login)
	if s.Shared() != login || s.Current() != nil || s.Len() != 0 {
		t.Fatal("Publish made the login's server session more than shared")
	}
	s.Use(used)
	s.Publish(login)
	s.CloseAll()
	if !login.Closed.Load() || !used.Closed.Load() {
		t.Fatal("CloseAll left a server session open")
	}
	if s.Len() != 0 || s.Last() != nil {
		t.Fatal("CloseAll kept server sessions")
	}
}

// TestSetDropDuringBackwardWalk: dropping while walking All backwards, as
// the idle expiry does, visits every server session once.
func TestSetDropDuringBackwardWalk(t *testing.T) {
	var s Set
	var conns []*Conn
	for _, addr := range []string{"a:1", "b:1", "c:1", "d:1"} {
		c := testConn(t, addr)
		conns = append(conns, c)
		s.Add(c)
	}
	visited := 0
	all := s.All()
	for i := len(all) - 1; i >= 0; i-- {
		visited++
		if c := all[i]; c.Addr != "b:1" {
			s.Drop(c)
		}
	}
	if visited != 4 || s.Len() != 1 || s.All()[0] != conns[1] {
		t.Fatalf("visited %d, kept %d", visited, s.Len())
	}
}
