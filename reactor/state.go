package reactor

// SessionState is where a client session is in its life. Transitions:
//
//	StateHandshake → StateIdle      login done, transport attached
//	StateHandshake → StateClosing   login failed, timed out or was killed
//	StateIdle      → StateCommand   a command arrived (only the transport's
//	                                goroutine makes this move)
//	StateCommand   → StateIdle      the command's response was sent
//	StateCommand   → StateClosing   the command ended the session
//	StateIdle      → StateClosing   the client left, or a close was requested
//	StateClosing   → StateClosed    resources released
//
// The move into StateClosing is made by compare-and-swap, so exactly one
// goroutine tears a session down.
type SessionState int32

const (
	StateHandshake SessionState = iota
	StateIdle
	StateCommand
	StateClosing
	StateClosed
)

var stateNames = [...]string{"HANDSHAKE", "IDLE", "COMMAND", "CLOSING", "CLOSED"}

func (s SessionState) String() string {
	if s >= 0 && int(s) < len(stateNames) {
		return stateNames[s]
	}
	return "UNKNOWN"
}

// canMove reports whether from → to is a legal transition.
func canMove(from, to SessionState) bool {
	switch from {
	case StateHandshake:
		return to == StateIdle || to == StateClosing
	case StateIdle:
		return to == StateCommand || to == StateClosing
	case StateCommand:
		return to == StateIdle || to == StateClosing
	case StateClosing:
		return to == StateClosed
	}
	return false
}
