package reactor

import (
	"net"
	"syscall"
	"time"

	"obgate/internal/burstlog"
	"obgate/reactor/backend"

	"golang.org/x/sys/unix"
)

// Accept failures never end Serve: only a closed listener does. Running
// out of file descriptors (EMFILE, ENFILE) is answered with the classic
// reserve-descriptor trick: Serve holds one spare descriptor, and when
// accept fails for want of one and a client is waiting, it closes the
// spare, accepts the client, tells it "Too many connections" (ERR 1040 in
// place of the greeting, as a MySQL server at max_connections does),
// closes it and takes the spare again. Every other failure (ENOBUFS, ENOMEM, EPERM from
// a firewall, EINTR, ...) and EMFILE without a spare wait before the next
// accept, doubling from 5 ms up to 1 s.

const (
	acceptDelayMin = 5 * time.Millisecond
	acceptDelayMax = time.Second
	// spareAcceptWait bounds the accept made with the spare descriptor, in
	// case the client that was waiting went away (the spare must not stay
	// closed while nobody connects), and each wait for a client while
	// descriptors are out (so that Shutdown is seen).
	spareAcceptWait = 100 * time.Millisecond
)

// acceptGuard carries one Serve call through accept failures. Only that
// Serve goroutine uses it.
type acceptGuard struct {
	srv   *Server
	spare int // the reserved descriptor, or -1 while none is held
	delay time.Duration
}

func newAcceptGuard(srv *Server) *acceptGuard {
	g := &acceptGuard{srv: srv, spare: -1}
	g.reserve()
	return g
}

// reserve opens the spare descriptor unless it is held; when none is left
// it tries again after the next accept.
func (g *acceptGuard) reserve() {
	if g.spare >= 0 {
		return
	}
	if fd, err := unix.Open("/dev/null", unix.O_RDONLY|unix.O_CLOEXEC, 0); err == nil {
		g.spare = fd
	}
}

// close gives the spare descriptor back when Serve ends.
func (g *acceptGuard) close() {
	if g.spare >= 0 {
		_ = unix.Close(g.spare)
		g.spare = -1
	}
}

// accepted resets the backoff after a successful accept and takes the
// spare again if it was lost.
func (g *acceptGuard) accepted() {
	g.delay = 0
	g.reserve()
}

// failed handles an accept error that is not a closed listener: it refuses
// the waiting client through the spare when descriptors ran out, and
// otherwise waits before Serve accepts again. A panic in here is contained:
// Serve goes on.
func (g *acceptGuard) failed(ln net.Listener, err error) {
	handled := false
	g.srv.panics.guarded(panicAccept, 0, func() {
		handled = backend.IsFDExhausted(err) && g.outOfFDs(ln, err)
	})
	if handled {
		return
	}
	g.delay = min(max(2*g.delay, acceptDelayMin), acceptDelayMax)
	g.srv.acceptFailures.Note(err)
	time.Sleep(g.delay)
}

// outOfFDs handles accept failing for want of a descriptor (acceptErr).
// Linux fails accept so whether or not a client waits, and the spare must
// not be given up while nobody needs it (another goroutine could take the
// freed descriptor), so it first waits until a client is waiting: if one
// was there at once it is refused with the spare; if one came later, Serve
// accepts again, since descriptors may have come back meanwhile. It
// reports false when Serve should back off instead (no spare, or the
// listener cannot be watched).
func (g *acceptGuard) outOfFDs(ln net.Listener, acceptErr error) bool {
	if g.spare < 0 {
		return false
	}
	sc, ok := ln.(syscall.Conn)
	if !ok {
		return g.refuseWithSpare(ln, acceptErr) // cannot watch it; the accept is bounded
	}
	rc, err := sc.SyscallConn()
	if err != nil {
		return false
	}
	for waited := false; ; waited = true {
		ready, err := clientWaiting(rc, spareAcceptWait)
		switch {
		case err != nil:
			return false // closed, most likely: the next accept says so
		case ready && waited:
			return true
		case ready:
			return g.refuseWithSpare(ln, acceptErr)
		case g.srv.draining.Load():
			return true
		}
	}
}

// clientWaiting waits up to limit for a connection to be waiting on the
// listening socket behind rc, without accepting it.
func clientWaiting(rc syscall.RawConn, limit time.Duration) (bool, error) {
	ready := false
	var perr error
	err := rc.Control(func(fd uintptr) {
		fds := []unix.PollFd{{Fd: int32(fd), Events: unix.POLLIN}}
		n, err := unix.Poll(fds, int(limit/time.Millisecond))
		if err != nil && err != unix.EINTR {
			perr = err
		}
		ready = n > 0 && fds[0].Revents&unix.POLLIN != 0
	})
	if err == nil {
		err = perr
	}
	return ready, err
}

// refuseWithSpare frees the spare descriptor, accepts one waiting client
// with it and refuses that client (acceptErr is the failure that led
// here). It reports whether a client was refused; the spare is taken
// again either way.
func (g *acceptGuard) refuseWithSpare(ln net.Listener, acceptErr error) bool {
	if g.spare < 0 {
		return false
	}
	_ = unix.Close(g.spare)
	g.spare = -1
	defer g.reserve()
	if d, ok := ln.(interface{ SetDeadline(time.Time) error }); ok {
		_ = d.SetDeadline(time.Now().Add(spareAcceptWait))
		defer func() { _ = d.SetDeadline(time.Time{}) }()
	}
	conn, err := ln.Accept()
	if err != nil {
		return false
	}
	g.srv.noFD.atGreeting(conn, acceptErr)
	return true
}

// burstInterval is the shortest time between two warnings of one kind
// about refused clients or failed accepts.
const burstInterval = time.Second

// initGuards sets up the rate-limited warnings of the accept path; called
// once from NewServer.
func (srv *Server) initGuards() {
	srv.noFD = fdRefusals{count: srv.metrics.refusedFD, burst: burstlog.New(burstInterval, func(n int64, err error) {
		srv.log.Warn("refusing new clients with ERR 1040: obgate is out of file descriptors",
			"refused", n, "reason", "fd_exhausted", "err", err)
	})}
	srv.handshakeRefusals = burstlog.New(burstInterval, func(n int64, _ error) {
		cfg := srv.cfg.Load()
		srv.log.Warn("refusing new clients with ERR 1040: too many logins in progress",
			"refused", n, "reason", "handshakes", "client_max_handshakes", cfg.ClientMaxHandshakes,
			"client_max_handshakes_per_ip", cfg.ClientMaxHandshakesPerIP)
	})
	srv.acceptFailures = burstlog.New(burstInterval, func(n int64, err error) {
		srv.log.Warn("accept failed; retrying", "failures", n, "err", err)
	})
	srv.noServerTLS = burstlog.New(burstInterval, func(n int64, err error) {
		srv.log.Warn("server refused by server_ssl_verify", "refused", n, "err", err)
	})
}
