package reactor

import "obgate/internal/npbound"

// PeekIdleAfter is peekIdleAfter, for tests that must let a server session
// become idle long enough to be peeked at.
const PeekIdleAfter = peekIdleAfter

// ReadBoundPauses counts the times netpoll connections stopped being read
// because their input backlog reached its bound.
func ReadBoundPauses() uint64 { return npbound.Pauses() }

// NetpollRequestCalls counts the times netpoll called a session's
// OnRequest.
func NetpollRequestCalls() uint64 { return netpollRequestCalls.Load() }

// NetpollLingerTimeouts counts the waits for a busy client's next request
// that ended without one.
func NetpollLingerTimeouts() uint64 { return netpollLingerTimeouts.Load() }
