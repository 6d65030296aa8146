package reactor

import "obgate/reactor/backend"

// ServerGone is backend's Owner: the server closed be, one of the
// session's server sessions. The side decides what that means; a panic
// in it is contained and counted as the server watch's.
func (s *Session) ServerGone(be *backend.Conn) {
	s.srv.panics.guarded(panicServerWatch, s.id, func() { s.side.serverGone(be) })
}

// ownerSession is the client session behind a server session's owner, or
// nil.
func ownerSession(o backend.Owner) *Session {
	s, _ := o.(*Session)
	return s
}
