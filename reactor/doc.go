// Package reactor runs client sessions: it accepts connections, logs
// clients in, and for each command forwards the request to a server and
// streams the response back, tracking only what it must (response
// boundaries, server status flags, session-state changes).
//
// # Types
//
//	Session       one client connection: login, close ladder, command
//	              loop, client-visible state (session.go, handshake.go,
//	              command.go), made of named parts: lifecycle (the close
//	              ladder, shared), client (clientConn: the connection and
//	              its transport), published (what other goroutines read,
//	              under its mutex), activity (shared counters), series
//	              (the metrics its statements count in) and servers (its
//	              server sessions, a backend.Set)
//	driver        the session's command phase on its transport
//	              (Session.drv): netpoll or a net loop (transport.go),
//	              and on netpoll the statement path on the poller
//	              (poller.go)
//	statement     one command being served (Session.st, pooled: taken
//	              when a command starts, given back at the next idle
//	              point, statement_pool.go): its state, and the methods that forward it,
//	              relay the answer (relay.go: one loop, which can stop
//	              where it would wait and go on later), resend it
//	              (retry.go), run prepared statements (prepared.go) and
//	              KILL (kill.go). It never asks where it runs: the
//	              driver gives each command a pace (pace.go), whose
//	              operations that would wait say so (mayWait) on the
//	              poller, and which sends, awaits and replies in its own
//	              way; the driver then serves the command again on a
//	              goroutine
//	serverSide    what a routing mode does with servers (side.go), in
//	              six role interfaces: identity (the login), commands,
//	              answers (what they teach and hold), servers (choosing
//	              and syncing a statement's server session, failures),
//	              events (KILL, broken transactions, servers that closed)
//	              and the hand-over's records. obSession (ob_*.go) routes among
//	              many server sessions per client; mysqlSide (mysql_*.go)
//	              keeps one, and moves it. Both keep them in the
//	              session's backend.Set
//	commands      the command table: per COM_ code what obgate does with
//	              it beyond relaying, and each routing mode's column of
//	              what that mode does of its own (commands.go)
//
// Below reactor, in packages of their own that know no session type:
//
//	backend       server sessions: connect (Dialer: TLS and the health
//	              entry's verdict), the connection on net or netpoll
//	              (PolledConn, its bounded input), framings and the I/O
//	              the poller and goroutines do on them, the answer
//	              window, liveness, the watch and registry that find and
//	              close them, obgate's own commands and the sync of a
//	              client's state (SyncTo), and one client session's set
//	              of them (Set). It tells its owners through Owner and
//	              InputWatcher
//	connio        the client transports (net, netpoll, OB 2.0 framing),
//	              pooled answer buffers, the task pool, socket helpers
//	sessvars      OceanBase mode's session variables and what each server
//	              session has of them
//	handover      a handed-over session's state, its encoding and link
//	admission     logins in progress and failed administrator logins
//	sessionid     client session id layouts
//	prepared      a session's prepared statements under obgate's ids,
//	              their caps, and the closed ones kept for the next
//	              prepare of the same text
//
// The routing mode is asked once, when the Server is made (modeFor,
// mode.go). What differs by mode is then a policy: per session, its side
// (the serverSide roles, and its column of the command table); per
// Server, its routingMode (ob_mode.go, mysql_mode.go), which makes each
// session's side and says the shape of a session adopted in a hot
// upgrade, the detect targets, the greeting's look and the id layout.
// Which outcome may be resent, what an ERR says of a location and
// what counts against a server are decided by route and health (their
// outcome.go); a statement reports its outcome and obeys.
//
// # Goroutines and callbacks
//
// A connection's login runs on its own goroutine with plain net I/O. Then
// the session moves to its command-phase transport (client_io_mode):
//
//	transport  who runs a command                           idle cost
//	netpoll    the poller itself for the common statement;  no goroutine
//	           a pooled goroutine (connio.TaskPool) for the rest
//	net, tls   the session's own goroutine                  one goroutine
//
// netpoll: the statement path on the poller (poller.go). obgate sets no
// OnRequest: internal/npbound hooks every read of the session's client
// and server connections, and the poller, after netpoll published the
// bytes, calls the session's driver:
//
//	event (on the poller)   driver method   what it may do
//	client bytes arrived    onClientInput   idle session: serve the
//	                                        buffered command when the fast
//	                                        path takes it (pollable), else
//	                                        hand it to a goroutine
//	server bytes arrived    ServerInput     relay what came of the answer
//	                                        the command awaits (stepPolled);
//	                                        at its end the bookkeeping, then
//	                                        the next buffered command
//	client hang-up          onClientGone    close the server socket, kick
//	                                        an awaiting command (whose
//	                                        failed read is then the
//	                                        client's, client_left.go); an
//	                                        idle session is closed off the
//	                                        poller
//	server hang-up          disconnected    kick an awaiting command
//	client close callback   onNetpollClose  teardown, unless a command has
//	                                        an owner (it tears down at its
//	                                        end); any goroutine
//
// The commands the poller takes (the command table's polled) are
// COM_QUERY, COM_STMT_EXECUTE, COM_STMT_PREPARE and COM_STMT_CLOSE, the
// four a driver's query with arguments sends; COM_STMT_CLOSE, which has
// no answer, ends where its requests went out, and with the client's next
// command already buffered it is sent with MSG_MORE, so that the kernel
// sends it together with that command (connio.WriteNowMore). An execute whose
// server session has not prepared the statement yet prepares it there
// first, on the poller too: the prepare goes out, the poller consumes its
// answer as it arrives and then serves the execute again from its start;
// a damaged or overdue answer goes to a goroutine (prepare_polled.go). A
// prepare of a text the session closed a moment before is answered from
// the statement obgate kept (prepared_keep.go, prepared/kept.go): the
// poller writes that answer itself, and what the client's socket does not
// take goes to a goroutine (resumeReply).
//
// Both routing modes serve the common statement there: mysql mode on its
// one server session, OceanBase mode on the server session the router
// picks from cached state when it is open and in step; OB 2.0 frames are
// built into a pooled chunk and unframed from the connection's input
// buffer (backend/io_poll.go). Clients that speak OB 2.0 themselves, TLS
// clients, compressed server sessions and the admin session are served
// on goroutines.
//
// Rules on the poller: nothing waits. Requests and answers are written
// straight to the sockets (connio.WriteNow) as far as the kernel takes them at
// once; answers are relayed from the server connection's input buffer
// without a copy of obgate's own. Whatever would wait — a dial, a login, a
// round trip before the statement, a resend, an ERR reply, a write the
// kernel did not take whole, an upload, a broken connection, the end of
// the session — goes to a pooled goroutine (handOff) that runs the same
// straight-line code as the net transport from where the poller stopped,
// then serves the following commands until the client is quiet. One
// owner at a time: whoever moved the session from StateIdle to
// StateCommand runs the command and is the only reader and writer of its
// client connection and the only one that closes it; a command awaiting
// its answer on the poller is run by whoever wins poll's
// compare-and-swap (the poller's next server read, or a kick). Other
// goroutines shut sockets down (breakTransport) and never close the
// client connection while a command has an owner, as netpoll frees a
// connection's buffers at Close.
//
// When netpoll's internals are not the ones npbound knows, sessions fall
// back to netpoll's OnRequest on a pooled goroutine (onRequest; netpoll
// serialises it with the close callbacks) and server connections stay on
// net.
//
// Server connections follow their client's transport. With netpoll they
// join the same pollers (backend.PolledConn): the poller reads a server's answer
// into the connection's buffer, which the relay views (backend.Window); a
// goroutine waiting for it is woken by netpoll, the poller's own relay
// step is called by the read hook. netpoll reads without limit, so obgate
// bounds every netpoll connection's input from outside (internal/npbound):
// the poller stops reading a connection whose backlog reached its
// high-water mark, and the consumer lets it read again below the low-water
// mark, so a slow client slows its server through TCP and a pipelining
// client is not read ahead of its session. With net, server connections
// are plain net.Conns read in bounded chunks by the goroutine running the
// command, only while it can write to the client.
//
// # Closing
//
// Other goroutines never touch a session's connections directly: they call
// requestClose, which either moves an idle session to StateClosing (by
// compare-and-swap, so a command cannot start on it) and closes the client
// connection, or asks the running command's owner to finish it (breaking
// its sockets for closeNow). The owner (the close callback of an idle
// netpoll session, the command's owner at its end, the net loop, or the
// login goroutine) runs teardown exactly once.
//
// # Hand-over
//
// In a hot upgrade the old process hands sessions to the new one
// (handover.go). The session's owner does it, at an idle point: afterCommand
// gives the session to a pooled goroutine instead of storing StateIdle, and
// the drain takes idle sessions by the same compare-and-swap that starts a
// command. That owner freezes the connections that move (npbound Freeze:
// the poller reads nothing more of them, not even an event it fetched
// already), offers the state and the descriptors, and then either closes
// its copies without a word to either peer (taken) or thaws them and makes
// the session idle again (refused, or a next command was already read).
// Freeze waits for the poller's event in progress, so it never runs on the
// poller. The new process builds the session before it registers it, then
// attaches it to its transport like a session whose login just ended.
//
// # Faults
//
// Nothing a session does takes the process down. Every goroutine entry
// above (login, net loop, the poller's read hooks, the goroutines the
// poller hands commands to, netpoll's close and disconnect callbacks)
// recovers a panic, and a command runs inside
// serveCommandContained, so a bug costs its session only: the client gets
// ERR 1105, the session is torn down by its owner as after any fatal
// error, and obgate_panic_total{where} counts it (recover.go). Serve never
// returns on an accept failure: it backs off, and when descriptors run out
// it refuses waiting clients with ERR 1040 through a reserved descriptor
// (accept.go, refuse.go).
package reactor
