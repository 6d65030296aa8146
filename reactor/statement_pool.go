package reactor

import "sync"

// statementPool holds the statement values of idle sessions: a session
// takes one when its login or a command starts and gives it back at its
// next idle point, so that an idle session holds none (about 750 bytes
// each) and a busy process reuses a few, buffers included.
var statementPool = sync.Pool{New: func() any { return new(statement) }}

// newStatement is a statement value of s from the pool (empty: given
// back reset, or new).
func newStatement(s *Session) *statement {
	st := statementPool.Get().(*statement)
	st.s = s
	return st
}

// takeStatement gives the command that starts an empty statement value:
// the one the session holds (a command that follows on the same owner
// without an idle point), or one from the pool. The command's owner
// calls it.
func (d *driver) takeStatement() {
	s := d.s
	if s.st == nil {
		s.st = newStatement(s)
		return
	}
	*s.st = s.st.next()
}

// giveBackStatement returns the session's statement value to the pool
// before the session becomes idle (or ends); whoever owns the session
// calls it, and nothing reads s.st until the next command takes one.
func (d *driver) giveBackStatement() {
	s := d.s
	st := s.st
	if st == nil {
		return
	}
	s.st = nil
	st.rr.close()
	if st.kept != nil {
		st.releaseKept()
	}
	*st = st.next()
	st.s = nil
	statementPool.Put(st)
}
