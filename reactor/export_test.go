package reactor

import (
	"time"

	"obgate/internal/npbound"
	"obgate/reactor/admission"
	"obgate/reactor/backend"
	"obgate/reactor/connio"
	"obgate/reactor/handover"
)

// PeekIdleAfter is peekIdleAfter, for tests that must let a server session
// become idle long enough to be peeked at.
const PeekIdleAfter = backend.PeekIdleAfter

// ReadBoundPauses counts the times netpoll connections stopped being read
// because their input backlog reached its bound.
func ReadBoundPauses() uint64 { return npbound.Pauses() }

// PolledFinished counts the commands that started and ended on the
// poller; PollerHandOffs the commands the poller gave to a goroutine.
func PolledFinished() uint64 { return polledFinished.Load() }
func PollerHandOffs() uint64 { return pollerHandOffs.Load() }

// PolledPrepares counts the statements the poller prepared again on
// another server session before an execute.
func PolledPrepares() uint64 { return polledPrepares.Load() }

// PreparesOffPoller counts the prepares the poller sent whose answer a
// goroutine read.
func PreparesOffPoller() uint64 { return preparesOffPoller.Load() }

// FollowedOffPoller counts commands a goroutine served after a hand-off
// because they arrived before it gave the session back to the poller.
func FollowedOffPoller() uint64 { return followedOffPoller.Load() }

// SweepAt runs one pass of the server's sweeper as if at now.
func (srv *Server) SweepAt(now time.Time) { srv.sweep(now) }

// HandoverTestState is an encoded hand-over state of routing mode mode
// ('m' or 'o') with one server session per servers.
func HandoverTestState(mode byte, servers int) []byte {
	h := &handover.State{Mode: mode, SessionID: 0x7fff0001, User: "root"}
	for range servers {
		h.Servers = append(h.Servers, handover.Server{Addr: "127.0.0.1:1"})
	}
	if mode == handover.ModeOB {
		h.Servers = nil
		h.OB = &handover.OB{Cluster: "nowhere"}
	}
	return h.Encode()
}

// SetClientWriteRoom makes the poller's writes to client sockets take at
// most room bytes at once (-1: none; 0: as the kernel takes them), until
// the test ends.
func SetClientWriteRoom(tb interface{ Cleanup(func()) }, room int64) {
	connio.ClientWriteRoom.Store(room)
	tb.Cleanup(func() { connio.ClientWriteRoom.Store(0) })
}

// PreparesReused is how many prepares were answered from kept statements.
func PreparesReused() uint64 { return preparesReused.Load() }

// SetServerWriteRoom makes the poller's writes to server sockets take at
// most room bytes at once (-1: none; 0: as the kernel takes them), until
// the test ends.
func SetServerWriteRoom(tb interface{ Cleanup(func()) }, room int64) {
	backend.WriteRoom.Store(room)
	tb.Cleanup(func() { backend.WriteRoom.Store(0) })
}

// SetStuckGrace sets how long Shutdown waits for the sessions it closed
// after its context ended; the returned func restores it.
func SetStuckGrace(d time.Duration) (restore func()) {
	old := stuckGrace
	stuckGrace = d
	return func() { stuckGrace = old }
}

// AddUnendingSession puts on the server's books a session that no close
// can end: it is in StateCommand with no owner and no connection, as a
// session whose teardown was lost would be. end tears it down.
func (srv *Server) AddUnendingSession() (id uint32, end func()) {
	s := &Session{srv: srv, id: srv.newSessionID()}
	s.client.connectedAt = time.Now()
	srv.mode.newSide(s)
	s.drv.s = s
	s.client.addr = "127.0.0.1:1"
	s.activity.lastActive.Store(s.client.connectedAt.UnixNano())
	s.activity.curCmd.Store(3)
	s.lifecycle.state.Store(int32(StateCommand))
	srv.active.Add(1)
	srv.sessions.Store(s.id, s)
	srv.clients.Add(1)
	return s.id, s.drv.teardown
}

// DescribeSessions says where each session on the server's books stands
// on its way out (as a *StuckSessionsError does).
func (srv *Server) DescribeSessions() []string { return srv.stuckSessions().Sessions }

// FixedScramble is ODP's fixed handshake scramble (enable_proxy_scramble
// off).
var FixedScramble = fixedScramble

// AdminFailLimit is how many failed administrator logins block an
// address.
const AdminFailLimit = admission.AdminFailLimit

// WithoutReadBounds makes servers started until the test ends act as if
// netpoll's layout were not the one npbound knows (npbound.ErrLayout):
// the documented fallback, server connections on net and client input
// unbounded, served by netpoll's OnRequest instead of the poller path.
func WithoutReadBounds(tb interface{ Cleanup(func()) }) {
	probeNetpoll = func() bool { return false }
	tb.Cleanup(func() { probeNetpoll = npbound.Probe })
}
