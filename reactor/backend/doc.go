// Package backend owns server sessions: the connections obgate holds to
// servers on behalf of client sessions, in both routing modes.
//
//	Dialer, Dial   connect and read the greeting; plan TLS; tell the
//	               server's health entry how the connect went (dialer.go,
//	               dial.go, tls.go)
//	OwnLogin       log a server session in with a login obgate built
//	               (login.go)
//	Conn           one server session: its socket, framing, status, the
//	               client statements prepared on it, how much of the
//	               client's state it has (conn.go); the I/O a goroutine
//	               does on it (io.go) and the I/O the poller does without
//	               waiting (io_poll.go); whether it is still alive
//	               (liveness.go)
//	PolledConn     a server connection on netpoll whose input is bounded
//	               (polledconn.go)
//	Window         the part of an answer received and not yet relayed
//	               (window.go)
//	Command        obgate's own commands on a server session, read whole
//	               (command.go); SyncTo brings one up to date with a
//	               client's session state (sync.go)
//	Registry       every open server session by address, for KILL,
//	               health, the views and metrics; Watch learns of the
//	               ones a server closed (registry.go, watch.go)
//	Set            one client session's server sessions (set.go)
//
// It knows no client session type and makes no routing decision: a
// client session owns its server sessions through Owner (told when a
// server closed one) and InputWatcher (told, on the poller, of a server
// connection's reads and end); which server a statement goes to is
// decided above it.
package backend
