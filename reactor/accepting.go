package reactor

// Accepting reports whether the SQL port takes new clients: Serve has
// taken a listener and Shutdown has not been called. It is false before
// Serve starts and from the first moment of a drain. The readiness probe
// of the metrics port calls it; any goroutine may.
func (srv *Server) Accepting() bool {
	if srv.draining.Load() {
		return false
	}
	srv.mu.Lock()
	defer srv.mu.Unlock()
	return len(srv.listeners) > 0
}
