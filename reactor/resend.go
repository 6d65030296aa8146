package reactor

// maxResends bounds how often one statement is sent again.
const maxResends = 2

// mayResend reports whether a statement whose server failed before any
// byte of the answer reached the client may be sent again to another
// server, without the client noticing. Only when running it twice cannot
// matter: OceanBase mode (obSide asks; another server session can take
// it), outside a
// transaction (nothing runs in autocommit behind a client that thinks it
// is in one), a read-only statement read whole (s.resendable), kept
// unchanged (no server-specific statement id patched in), and a failure of
// the server's connection or protocol. Not after a timeout: a statement
// that ran out of time would do so elsewhere too, and the server may still
// be running it.
func (s *Session) mayResend(o outcome) bool {
	if s.kept == nil || s.patchOn || !s.resendable || s.resends >= maxResends {
		return false
	}
	if s.inTrans.Load() || s.ob.pinned {
		return false
	}
	return o.fail == failServerTransport || o.fail == failServerProtocol
}

// resendKept sends the kept request to a server session the router picks
// (the failed one was dropped, so it is not among them). It reports false
// when no server session could take it; the client then gets the first
// failure's error.
func (s *Session) resendKept() bool {
	s.resends++
	be, err := s.routeStatement(needAny)
	if err != nil {
		return false
	}
	if err := be.writeRequest(s.kept, true, true); err != nil {
		s.dropServer(be)
		return false
	}
	s.srv.metrics.resent.Inc()
	s.srv.log.Debug("statement sent again after its server failed", "session", s.id, "server", be.addr)
	return true
}
