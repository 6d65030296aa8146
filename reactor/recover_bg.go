package reactor

import "runtime/debug"

// recoverBackground ends a background goroutine's panic with a log line
// and its stack instead of ending the process. Deferred first thing in
// every background loop.
func (srv *Server) recoverBackground(what string) {
	if r := recover(); r != nil {
		srv.log.Error("background work panicked; it has stopped", "what", what, "panic", r, "stack", string(debug.Stack()))
	}
}
