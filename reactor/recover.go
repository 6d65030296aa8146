package reactor

import (
	"errors"
	"fmt"
	"log/slog"
	"runtime/debug"

	"obgate/metrics"
	"obgate/mysqlproto"
)

// A panic in obgate's code is a bug, but it must cost one session, never
// the process. Every goroutine entry that runs session code defers
// containPanic; a command runs inside serveCommandContained so that its
// client still gets an ERR. A recovered panic is logged once with its
// stack and the session id, counted in obgate_panic_total{where}, and the
// session is closed through its usual teardown.

// panicSite says where a panic was recovered; it is the where label of
// obgate_panic_total.
type panicSite uint8

const (
	panicLogin             panicSite = iota // the login goroutine (handleConn)
	panicCommand                            // a command (serveCommand)
	panicNetLoop                            // the net transport's loop, outside a command
	panicNetpollRequest                     // netpoll's OnRequest, outside a command
	panicNetpollClose                       // netpoll's close callback
	panicNetpollDisconnect                  // netpoll's OnDisconnect
	panicAccept                             // the accept loop (Serve)
	panicSweeper                            // the idle sweeper (sweepLoop)
	panicServerWatch                        // the server watch's epoll loop
	panicPoller                             // the statement path on the poller (poller.go)
	panicHandover                           // a session's hand-over to a new process (handover.go)
	panicGreetingLook                       // mysql mode's first look at a server's greeting (mysqlgreeting.go)
	panicMemorySampler                      // the memory guard's sampler (memguard.go)
	panicAdoption                           // adopting a session handed over (AdoptSessions)
	numPanicSites
)

var panicSiteNames = [numPanicSites]string{"login", "command", "net_loop",
	"netpoll_request", "netpoll_close", "netpoll_disconnect", "accept",
	"idle_sweeper", "server_watch", "poller", "handover", "greeting_look",
	"memory_sampler", "adoption"}

func (p panicSite) String() string {
	if p < numPanicSites {
		return panicSiteNames[p]
	}
	return "unknown"
}

// ownsTeardown reports whether the goroutine of site is the one that tears
// session s down after recovering. netpoll's OnDisconnect runs on the
// poller next to a running command, so it only closes sockets; the login
// goroutine owns the session until it moved to its transport.
func (p panicSite) ownsTeardown(s *Session) bool {
	switch p {
	case panicNetpollDisconnect, panicAccept:
		return false
	case panicLogin:
		return s.State() == StateHandshake
	}
	return true
}

// internalError is the ERR a client gets when obgate's code panicked
// under its command.
func internalError() *mysqlproto.SQLError {
	return mysqlproto.NewSQLError(mysqlproto.ERUnknownError, "obgate internal error; the session is closed")
}

// panicGuard logs and counts the panics obgate recovers from (the
// Server's panics). Any goroutine.
type panicGuard struct {
	log     *slog.Logger
	metrics *reactorMetrics
}

// caughtPanic logs a recovered panic with its stack and counts it. sessID
// is 0 outside a session. Call it from the deferred function that
// recovered, so that the stack still shows where the panic happened. A
// logger that panics in turn is ignored. Any goroutine.
func (g panicGuard) caughtPanic(site panicSite, sessID uint32, v any) {
	g.metrics.panics[site].Inc()
	defer func() { _ = recover() }()
	g.log.Error("panic recovered; closing what it hit", "where", site.String(), "session", sessID,
		"panic", fmt.Sprint(v), "stack", string(debug.Stack()))
}

// recoverBackground, deferred first thing in a background loop, turns a
// panic into a log line and a count: the loop stops, the process goes on.
func (g panicGuard) recoverBackground(site panicSite) {
	if v := recover(); v != nil {
		g.caughtPanic(site, 0, v)
	}
}

// guarded runs f and recovers a panic in it (logged and counted under
// site), so that clean-up after a first panic cannot bring the process
// down with a second one. Any goroutine.
func (g panicGuard) guarded(site panicSite, sessID uint32, f func()) {
	defer func() {
		if v := recover(); v != nil {
			g.caughtPanic(site, sessID, v)
		}
	}()
	f()
}

// serveCommandContained runs serveCommand on the session's owning
// goroutine and turns a panic in it into an error that ends the session:
// afterCommand then sends the client ERR 1105 and closes the connection,
// and the transport tears the session down as after any other fatal error.
func (d *driver) serveCommandContained() error {
	s := d.s
	return d.containCommand(s.serveCommand)
}

// containCommand runs f, a command's work, so that a panic in it ends the
// session with ERR 1105 rather than the process.
func (d *driver) containCommand(f func() error) (err error) {
	s := d.s
	defer func() {
		if v := recover(); v != nil {
			s.srv.panics.caughtPanic(panicCommand, s.id, v)
			err = quitWith(QuitPanic, errors.New(fmt.Sprint(v)), internalError())
		}
	}()
	return f()
}

// containPanic is deferred at a goroutine entry that runs session s's code
// (the login goroutine, the net loop, netpoll's callbacks). On a panic it
// logs and counts it, closes the session's connections so that nothing
// stays blocked on them, and, when site's goroutine owns the session,
// tears it down; each of these steps is guarded. It must be the deferred
// function itself: recover only works there.
func (d *driver) containPanic(site panicSite) {
	s := d.s
	v := recover()
	if v == nil {
		return
	}
	srv := s.srv
	srv.panics.caughtPanic(site, s.id, v)
	owner := site.ownsTeardown(s)
	if owner {
		s.lifecycle.state.Store(int32(StateClosing))
		srv.metrics.quit(QuitPanic)
	}
	srv.panics.guarded(site, s.id, s.drv.interrupt)
	if owner {
		srv.panics.guarded(site, s.id, s.drv.teardown)
	}
}

// countPanicAt counts a panic recovered outside reactor (route's
// background work reports them by where). Any goroutine.
func (m *reactorMetrics) countPanicAt(where string) {
	m.reg.Counter(metrics.Panics, "where", where).Inc()
}
