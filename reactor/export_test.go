package reactor

import (
	"time"

	"obgate/internal/npbound"
)

// PeekIdleAfter is peekIdleAfter, for tests that must let a server session
// become idle long enough to be peeked at.
const PeekIdleAfter = peekIdleAfter

// ReadBoundPauses counts the times netpoll connections stopped being read
// because their input backlog reached its bound.
func ReadBoundPauses() uint64 { return npbound.Pauses() }

// PolledFinished counts the commands that started and ended on the
// poller; PollerHandOffs the commands the poller gave to a goroutine.
func PolledFinished() uint64 { return polledFinished.Load() }
func PollerHandOffs() uint64 { return pollerHandOffs.Load() }

// SweepAt runs one pass of the server's sweeper as if at now.
func (srv *Server) SweepAt(now time.Time) { srv.sweep(now) }
