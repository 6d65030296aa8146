package reactor

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"runtime"
	"sync"
	"time"

	"github.com/cloudwego/netpoll"

	"obgate/config"
	"obgate/internal/npbound"
	"obgate/reactor/backend"
	"obgate/reactor/connio"
)

// serveTransport moves a logged-in session onto its command-phase
// transport. Plain TCP clients join netpoll when client_io_mode is netpoll:
// the connection's file descriptor is duplicated into a netpoll connection
// and the session holds no goroutine while idle. TLS clients and
// client_io_mode=net run a command loop on the current goroutine.
func (d *driver) serveTransport() {
	s := d.s
	tc, isTCP := s.client.rawConn.(*net.TCPConn)
	if isTCP && s.srv.poller != nil {
		if err := d.attachNetpoll(tc); err == nil {
			return
		} else {
			s.srv.log.Warn("netpoll attach failed; serving on net", "session", s.id, "err", err)
		}
	}
	name := "net"
	if _, isTLS := s.client.rawConn.(*tls.Conn); isTLS {
		name = "tls"
	}
	nc := connio.NewNetClient(s.client.rawConn, name)
	s.client.io, s.client.netClient = nc, nc
	s.client.wrapClientOB20(s.id)
	s.client.transportName.Store(s.client.io.Transport())
	s.srv.goroutineSessions.Add(1)
	defer s.srv.goroutineSessions.Add(-1)
	d.runNetLoop()
}

// runNetLoop serves commands on the current goroutine until the session
// ends, then tears it down.
func (d *driver) runNetLoop() {
	s := d.s
	defer d.teardown()
	defer d.containPanic(panicNetLoop)
	d.giveBackStatement()
	if !s.lifecycle.state.CompareAndSwap(int32(StateHandshake), int32(StateIdle)) {
		return
	}
	s.checkServerAfterLogin()
	for {
		if _, err := s.client.io.Peek(1); err != nil {
			s.client.closeTransport()
			return
		}
		if !s.lifecycle.state.CompareAndSwap(int32(StateIdle), int32(StateCommand)) {
			return
		}
		if !d.afterCommand(d.serveCommandContained()) {
			return
		}
	}
}

// attachNetpoll hands the client's socket to netpoll. The accepted
// connection is closed; a duplicate of its descriptor lives on.
func (d *driver) attachNetpoll(tc *net.TCPConn) error {
	s := d.s
	conn, err := backend.NetpollFromTCP(tc)
	if err != nil {
		return err
	}
	var rb *npbound.Bound
	if s.srv.poller.serverConns {
		if rb, err = npbound.New(conn, clientInputHigh, clientInputLow); err != nil {
			_ = conn.Close() // closes the duplicate only
			return err
		}
	} else {
		s.srv.poller.boundsUnavailable(s.srv, npbound.ErrLayout)
	}
	_ = tc.Close()
	_ = conn.SetReadTimeout(connio.ClientReadTimeout)
	_ = conn.SetWriteTimeout(connio.ClientWriteTimeout)
	nc := connio.NewNetpollClient(conn, rb)
	s.client.io = nc
	s.client.wrapClientOB20(s.id)
	if rb != nil {
		s.client.closer.Store(&closerRef{connio.NewPollerSafeCloser(conn, rb)})
	} else {
		s.client.closer.Store(&closerRef{conn})
	}
	s.client.transportName.Store(s.client.io.Transport())
	_ = conn.AddCloseCallback(d.onNetpollClose)
	if dc, ok := conn.(interface {
		SetOnDisconnect(netpoll.OnDisconnect) error
	}); ok {
		_ = dc.SetOnDisconnect(d.onClientGone)
	}
	if rb != nil {
		// The poller drives the session (poller.go).
		d.clientNP, d.resumeFn = nc, d.resumeOffPoller
		d.hooked.Store(true) // after clientNP: breakTransport reads it from any goroutine
		rb.SetOnInput(d.onClientInput)
	}
	d.giveBackStatement()
	if !s.lifecycle.state.CompareAndSwap(int32(StateHandshake), int32(StateIdle)) {
		_ = conn.Close() // killed during the handshake
		return nil
	}
	if d.hooked.Load() {
		s.checkServerAfterLogin()
		if !conn.IsActive() { // hung up before OnDisconnect was set
			if s.lifecycle.state.CompareAndSwap(int32(StateIdle), int32(StateClosing)) {
				_ = conn.Close()
			}
			return nil
		}
		d.onClientInput() // what came before the hook was set
		return nil
	}
	_ = conn.SetOnRequest(d.onRequest)
	s.checkServerAfterLogin()
	// A hang-up seen before OnRequest was set leaves closing to us.
	if !conn.IsActive() {
		_ = conn.Close()
	}
	return nil
}

// onRequest is netpoll's OnRequest, for sessions the poller cannot drive
// (netpoll's layout is not the one internal/npbound knows): it serves the
// buffered commands one after another and returns when none is left (or
// the session ends). netpoll never runs it concurrently with itself or
// with the close callbacks of the same connection, and calls it again
// when input arrives after it returned.
func (d *driver) onRequest(_ context.Context, conn netpoll.Connection) error {
	s := d.s
	defer d.containPanic(panicNetpollRequest)
	for {
		if !s.lifecycle.state.CompareAndSwap(int32(StateIdle), int32(StateCommand)) {
			return conn.Close()
		}
		if !d.afterCommand(d.serveCommandContained()) {
			return conn.Close()
		}
		if s.client.io.Buffered() == 0 {
			return nil
		}
	}
}

// onClientGone is netpoll's OnDisconnect: the client hung up. A command
// still waiting for its server is cut short (its server connection is
// closed), as nobody will read the answer. It runs on the poller; it only
// closes a socket.
func (d *driver) onClientGone(context.Context, netpoll.Connection) {
	s := d.s
	defer d.containPanic(panicNetpollDisconnect)
	switch s.State() {
	case StateCommand:
		d.clientGone.Store(true) // before the close the owner may see
		if be := s.servers.Shared(); be != nil {
			be.Close()
		}
		if d.hooked.Load() {
			d.kickPolled()
		}
	case StateIdle:
		// netpoll leaves closing a connection without OnRequest to its
		// user; the session ends off the poller.
		if d.hooked.Load() && s.lifecycle.state.CompareAndSwap(int32(StateIdle), int32(StateClosing)) {
			connio.Tasks.Run(nil, s.client.closeTransport)
		}
	}
}

// onNetpollClose runs once when the netpoll connection is closed by either
// side, never while onRequest runs.
func (d *driver) onNetpollClose(netpoll.Connection) error {
	s := d.s
	defer d.containPanic(panicNetpollClose)
	if d.hooked.Load() && s.State() == StateCommand {
		// A command has an owner, which tears the session down when it
		// ends (afterCommand sees clientClosed).
		d.clientClosed.Store(true)
		if s.State() == StateCommand {
			d.kickPolled()
			return nil
		}
	}
	d.teardown()
	return nil
}

// afterCommand ends a command: it sends a pending error reply, decides
// whether the session goes on, and moves it back to idle. It reports
// whether the session continues; when it does not, the client connection
// is closed and teardown follows from the transport.
func (d *driver) afterCommand(err error) bool {
	s := d.s
	if st := s.st; st != nil { // nil: the poller ended a command that never began
		if st.kept != nil { // a command that ended before its answer did
			st.releaseKept()
		}
		st.rr.close() // a relay a panic cut short
	}
	s.activity.lastActive.Store(time.Now().UnixNano())
	s.activity.curCmd.Store(-1)
	s.side.commandDone()
	if err != nil {
		var se *sessionError
		if errors.As(err, &se) && se.reply != nil && s.client.io != nil && tellsClient(s.cfg, se) {
			_ = s.writeError(se.reply)
		}
		s.logQuit(err)
		d.endTransport()
		return false
	}
	if d.closeDue() {
		d.endTransport()
		return false
	}
	if s.srv.handover.Load() != nil && d.handOverAtIdle() {
		return false // a pooled goroutine owns the session now
	}
	d.giveBackStatement()
	s.lifecycle.state.Store(int32(StateIdle))
	// A close requested while the command ran saw StateCommand and left it
	// to us; look again now that the session is idle.
	if d.closeDue() && s.lifecycle.state.CompareAndSwap(int32(StateIdle), int32(StateClosing)) {
		d.endTransport()
		return false
	}
	return true
}

// endTransport closes the client connection at the end of the owner's
// command; teardown follows from its close callback, or here when that
// ran already while the command had its owner.
func (d *driver) endTransport() {
	s := d.s
	s.lifecycle.state.Store(int32(StateClosing))
	s.client.closeTransport()
	if d.clientClosed.Load() {
		d.teardown()
	}
}

// shouldClose reports whether a requested close applies now.
func (d *driver) shouldClose() bool {
	s := d.s
	switch s.lifecycle.closeReq.Load() {
	case closeNow:
		return true
	case closeWhenIdle:
		return !s.activity.inTrans.Load()
	}
	// A drain closes sessions once they are quiet (closeIfQuiet), not
	// at the end of a command, where the client's next one races it.
	return false
}

// teardown releases everything the session holds. It runs exactly once,
// on the goroutine that owns the session at its end; even if releasing
// panics, the session leaves the server's books.
func (d *driver) teardown() {
	s := d.s
	if !s.lifecycle.torndown.CompareAndSwap(false, true) {
		return
	}
	defer d.unregister()
	s.lifecycle.state.Store(int32(StateClosing))
	d.stopAnswerTimer()
	s.diagSessionEnded()
	s.servers.CloseAll()
	s.client.closeTransport()
	s.client.freeBuffers()
	d.giveBackStatement()
}

// unregister removes a torn-down session from the server's books; teardown
// defers it.
func (d *driver) unregister() {
	s := d.s
	s.srv.sessions.Delete(s.id)
	s.srv.clients.Add(-1)
	s.lifecycle.state.Store(int32(StateClosed))
	s.srv.active.Done()
}

// logQuit logs why a session ended: routine ends at debug level, the rest
// as warnings.
func (s *Session) logQuit(err error) {
	src := sourceOf(err)
	s.lifecycle.noteEnd(src, err, "")
	s.srv.metrics.quit(src)
	level := slog.LevelWarn
	if src.Normal() || isDisconnect(err) {
		level = slog.LevelDebug
	}
	if !s.srv.log.Enabled(context.Background(), level) {
		return
	}
	s.srv.log.Log(context.Background(), level, "session ended",
		"session", s.id, "client", s.client.addr, "user", s.published.userName(), "reason", src.String(), "err", err)
}

func (p *published) userName() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.user
}

// pollerSet prepares netpoll once per process. With it, client
// connections join netpoll after their login, and server connections
// join the same pollers when they are dialed. serverConns says that
// netpoll's reads can be bounded (probeNPLayout): without that, server
// connections stay on net and client input is unbounded.
type pollerSet struct {
	serverConns bool
	warnOnce    sync.Once
}

// boundsUnavailable logs, once, that netpoll's reads cannot be bounded in
// this build (see internal/npbound): server connections stay on net and
// client input is not bounded.
func (p *pollerSet) boundsUnavailable(srv *Server, err error) {
	p.warnOnce.Do(func() {
		srv.log.Warn("netpoll read bounds unavailable: server connections stay on net", "err", err)
	})
}

var pollerOnce sync.Once

// pollerCount is the number of netpoll pollers, from ODP's parameters:
// work_thread_num, or with automatic_match_work_thread (the default) a
// count that fits the machine, at most work_thread_num: one poller per 20
// CPUs obgate may use (GOMAXPROCS), netpoll's own rule. Each poller
// busy-polls while events come, so more pollers than that cost CPU: on 2
// CPUs, 2 pollers made BenchmarkForward/netpoll-parallel 1.6x slower than
// one.
func pollerCount(cfg *config.Config) int {
	n := int(max(cfg.WorkThreadNum, 1))
	if cfg.AutomaticMatchWorkThread {
		n = min(n, runtime.GOMAXPROCS(0)/20+1)
	}
	return n
}

// npBufferSize is the size netpoll gives a connection's first input and
// output buffer nodes (netpoll's default is 8 KiB each).
const npBufferSize = 512

// newPollerSet configures netpoll with n pollers, once per process (the
// first server's count holds for the process).
func newPollerSet(n int) (*pollerSet, error) {
	var err error
	pollerOnce.Do(func() {
		netpoll.SetLoggerOutput(io.Discard)
		// Buffers start small: an idle connection keeps its first output
		// node, and a statement's packets are mostly a few hundred
		// bytes. Input reads grow (doubling) for large answers; a
		// bounded connection gives its input node back once everything
		// read was consumed (npbound), so an idle one holds none.
		netpoll.LinkBufferCap = npBufferSize
		err = netpoll.Configure(netpoll.Config{PollerNum: n, BufferSize: npBufferSize})
		if err == nil {
			// Callbacks run on obgate's pool: gopool keeps no idle workers
			// and its task wrapper allocates per request.
			netpoll.SetRunner(connio.Tasks.Run)
		}
	})
	if err != nil {
		return nil, fmt.Errorf("reactor: configure netpoll: %w", err)
	}
	return &pollerSet{serverConns: probeNetpoll()}, nil
}

// probeNetpoll says whether netpoll's reads can be bounded in this build
// (npbound.Probe); tests replace it to run the fallback.
var probeNetpoll = npbound.Probe

func (p *pollerSet) close() {}

// Input backlog bounds of a netpoll client connection: it stops being
// read once it has pipelined high bytes ahead of what its session
// consumed, and resumes at low (as a server connection does, see
// serverInputHigh).
const (
	clientInputHigh = 4 * connio.ChunkSize
	clientInputLow  = connio.ChunkSize
)
