// Package reactor runs client sessions: it accepts connections, logs
// clients in, and for each command forwards the request to a server and
// streams the response back, tracking only what it must (response
// boundaries, server status flags, session-state changes).
//
// # Types
//
//	Session       one client connection: transport, login, close ladder,
//	              command loop, client-visible state (session.go,
//	              transport.go, command.go)
//	statement     one command being served (Session.st, made anew per
//	              command): its state, and the methods that forward it,
//	              relay the answer, resend it (retry.go), run prepared
//	              statements (prepared.go) and KILL (kill.go)
//	serverSide    what a routing mode does with servers (side.go): the
//	              login, finding and syncing a statement's server session,
//	              learning from answers, failure handling, KILL, teardown.
//	              obSession (ob_*.go) holds many server sessions per
//	              client; mysqlSide (mysql_*.go) one, and moves it
//	commands      the command table: per COM_ code what obgate does with
//	              it beyond relaying (commands.go)
//
// Nothing outside the two serverSide types asks which mode a session is
// in. Which outcome may be resent, what an ERR says of a location and what
// counts against a server are decided by route and health (their
// outcome.go); a statement reports its outcome and obeys.
//
// # Goroutines and callbacks
//
// A connection's login runs on its own goroutine with plain net I/O. Then
// the session moves to its command-phase transport (client_io_mode):
//
//	transport  who runs a command                         idle cost
//	netpoll    netpoll's OnRequest task, on a pooled       no goroutine
//	           goroutine (taskPool; the default)
//	net, tls   the session's own goroutine                 one goroutine
//
// netpoll mapping:
//
//	netpoll callback   session method     may run concurrently with
//	OnRequest          onRequest          KILL / shutdown (requestClose)
//	OnDisconnect       onClientGone       onRequest (closes sockets only)
//	CloseCallback      onNetpollClose     requestClose; never onRequest
//
// netpoll serialises OnRequest calls of one connection and runs the close
// callbacks only when no OnRequest is running. onRequest serves the
// commands that arrive one after another (after a busy client's command it
// waits up to a millisecond for the next request, then returns; netpoll
// calls it again when more input arrives) and is the only writer of the
// client connection, so there is never more than one writer per
// connection and never a write after the buffers are freed.
//
// Server connections follow their client's transport. With netpoll they
// join the same pollers (npServerConn): the poller reads a server's answer
// and wakes the command waiting for it, which relays it from the
// connection's buffer (respWindow); the server's hang-up event marks an
// idle server session gone. netpoll reads without limit, so obgate bounds
// every netpoll connection's input from outside (internal/npbound): the poller
// stops reading a connection whose backlog reached its high-water mark,
// and the consumer lets it read again below the low-water mark, so a slow
// client slows its server through TCP and a pipelining client is not read
// ahead of its session. With net, server connections are plain net.Conns
// read in bounded chunks by the goroutine running the command, only while
// it can write to the client.
//
// # Closing
//
// Other goroutines never touch a session's connections directly: they call
// requestClose, which either moves an idle session to StateClosing (by
// compare-and-swap, so a command cannot start on it) and closes the client
// connection, or asks the running command's owner to finish it. The owner
// (netpoll's close callback, the net loop, or the login goroutine) runs
// teardown exactly once.
//
// # Faults
//
// Nothing a session does takes the process down. Every goroutine entry
// above (login, net loop, netpoll's OnRequest, close and disconnect
// callbacks) recovers a panic, and a command runs inside
// serveCommandContained, so a bug costs its session only: the client gets
// ERR 1105, the session is torn down by its owner as after any fatal
// error, and obgate_panic_total{where} counts it (recover.go). Serve never
// returns on an accept failure: it backs off, and when descriptors run out
// it refuses waiting clients with ERR 1040 through a reserved descriptor
// (accept.go, refuse.go).
package reactor
