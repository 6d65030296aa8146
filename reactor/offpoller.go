package reactor

// What of obgate's client I/O runs off the netpoll event loops, on Go's
// own network poller: logins (each on its own goroutine with plain net
// I/O) and sessions served on a goroutine (client_io_mode=net, TLS
// clients). cmd/obgate's CPU governor keeps every CPU while there is any:
// with one CPU, a goroutine woken by Go's poller waits until the event
// loop, blocked in epoll_wait, is relieved of the CPU by Go's sysmon.

// OffPollerIO returns the logins so far (odp_new_client_connections,
// successful or not) and the sessions now served on a goroutine
// transport. Any goroutine; three atomic loads.
func (srv *Server) OffPollerIO() (logins uint64, goroutineSessions int64) {
	m := srv.metrics
	return m.newClientOK.Get() + m.newClientFail.Get(), srv.goroutineSessions.Load()
}
