package reactor

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"obgate/config"
	"obgate/health"
	"obgate/internal/burstlog"
	"obgate/internal/tlsconf"
	"obgate/metrics"
	"obgate/mysqlproto"
	"obgate/reactor/admission"
	"obgate/reactor/backend"
	"obgate/reactor/handover"
	"obgate/reactor/sessionid"
	"obgate/route"
)

// Interceptor answers ODP internal commands (SHOW PROXYCONFIG, PING PROXY,
// SELECT PROXY_VERSION(), ...) and every statement of an administrator
// session. reactor calls it on the session's owning goroutine; it must
// answer through the Reply and return promptly.
type Interceptor interface {
	// Intercept is called for an administrator session's COM_QUERY and for
	// a normal session's statements that may be internal commands. It
	// returns false when query is not one it handles; a normal session then
	// forwards the statement, an administrator session gets an error.
	Intercept(sess *Session, query []byte, info route.StmtInfo, reply *Reply) bool
}

// Options configure a Server.
type Options struct {
	Config      *config.Store
	Metrics     *metrics.Registry
	Logger      *slog.Logger
	Interceptor Interceptor
	// Version is obgate's version, sent in its own handshakes and shown by
	// SELECT PROXY_VERSION().
	Version string
	// Clusters are the OceanBase clusters served; required unless
	// server_routing_mode is mysql.
	Clusters *route.Clusters
	// Health decides which servers may take new requests, and Router
	// orders a statement's candidates by asking it; both are required.
	// The process builds them (internal/assemble), starts the monitor's
	// detect task over DetectTargets and closes it after Shutdown.
	Health *health.Monitor
	Router *route.Router
	// Diagnosis receives the diagnosis log (diag.go); nil writes none.
	Diagnosis *slog.Logger
	// ServerTLS is the TLS configuration towards servers, shared with the
	// side connections (give the same to route.NewClusters); nil gets one
	// of the Server's own.
	ServerTLS *tlsconf.Server
	// SessionIDs, when set, replaces proxy_id in the session ids: a hot
	// upgrade's new process gets its parent's, with the upgrade bit
	// flipped.
	SessionIDs *SessionIDBase
}

// Server accepts client connections and runs their sessions.
type Server struct {
	cfg         *config.Store
	log         *slog.Logger
	diag        diagLog // the diagnosis log
	panics      panicGuard
	interceptor Interceptor
	version     string
	metrics     *reactorMetrics
	tls         tlsState
	poller      *pollerSet
	clusters    *route.Clusters
	mode        routingMode // server_routing_mode, fixed at start (mode.go)
	health      *health.Monitor
	dialer      backend.Dialer // opens server sessions' connections
	router      *route.Router

	servers backend.Registry // open server sessions by server address
	hashes  userHashes       // mysql.user hashes (mysql routing mode)

	ids               sessionid.Generator
	stopSweep         chan struct{}
	memDone           chan struct{}
	mem               memGuard // proxy_mem_limited (memguard.go)
	stopSweepOnce     sync.Once
	sweepDone         chan struct{}
	proxyID           int64    // proxy_id in effect (random when configured as 0)
	upgradeBit        bool     // the upgrade bit of this process's session ids
	sessions          sync.Map // uint32 → *Session
	clients           atomic.Int64
	goroutineSessions atomic.Int64 // offpoller.go

	noFD          fdRefusals               // clients refused for want of descriptors
	adminFailures admission.AdminFailures  // failed administrator logins by source
	handshakes    admission.HandshakeSlots // logins in progress (admitHandshake)
	// mysqlGreeting is the image of client greetings in mysql routing
	// mode (mysqlgreeting.go).
	mysqlGreeting  greetingImage
	acceptFailures *burstlog.Log
	// handshakeRefusals: clients refused at client_max_handshakes.
	handshakeRefusals *burstlog.Log
	noServerTLS       *burstlog.Log // servers refused for offering no TLS (server_ssl_verify)

	mu        sync.Mutex
	listeners []net.Listener
	draining  atomic.Bool
	// handover is the link a hot upgrade hands sessions over on
	// (handover.go); nil while none.
	handover atomic.Pointer[handover.Link]
	wg       sync.WaitGroup // handshake goroutines and net-transport loops
	active   sync.WaitGroup // every session until torn down
}

// NewServer builds a Server from its options. It loads the client TLS
// certificate when enable_client_ssl is on, and refuses to start when it
// cannot (later changes of the files are picked up as they come).
func NewServer(opts Options) (*Server, error) {
	if opts.Config == nil {
		return nil, errors.New("reactor: Options.Config is required")
	}
	if opts.Health == nil || opts.Router == nil {
		return nil, errors.New("reactor: Options.Health and Options.Router are required")
	}
	if opts.Logger == nil {
		opts.Logger = slog.Default()
	}
	if opts.Metrics == nil {
		opts.Metrics = metrics.New()
	}
	mode, err := modeFor(opts.Config.Load().ServerRoutingMode, opts.Clusters)
	if err != nil {
		return nil, err
	}
	srv := &Server{
		mode:        mode,
		cfg:         opts.Config,
		log:         opts.Logger,
		interceptor: opts.Interceptor,
		version:     opts.Version,
		clusters:    opts.Clusters,
		health:      opts.Health,
		router:      opts.Router,
		diag:        diagLog{log: opts.Diagnosis, cfg: opts.Config},
	}
	serverTLS := opts.ServerTLS
	if serverTLS == nil {
		serverTLS = tlsconf.NewServer(opts.Logger)
	}
	srv.tls.init(serverTLS)
	srv.metrics = newReactorMetrics(opts.Metrics, srv)
	srv.panics = panicGuard{log: srv.log, metrics: srv.metrics}

	if w, err := backend.NewWatch(func(v any) { srv.panics.caughtPanic(panicServerWatch, 0, v) }); err == nil {
		srv.servers.Watch = w
		w.Start()
	} else {
		srv.log.Warn("server close events cannot be watched; broken idle server sessions are found by a peek", "err", err)
	}
	srv.initGuards()
	if cfg := opts.Config.Load(); cfg.ObproxySysPassword == "" {
		srv.log.Warn("root@proxysys has no password (obproxy_sys_password is empty): it may log in from loopback addresses only; set one to administer obgate from elsewhere")
	}
	// The background loops start once the metrics they feed exist.
	srv.stopSweep, srv.sweepDone, srv.memDone = make(chan struct{}), make(chan struct{}), make(chan struct{})
	go func() {
		defer close(srv.sweepDone)
		srv.sweepLoop(srv.stopSweep)
	}()
	go func() {
		defer close(srv.memDone)
		srv.memLoop(srv.stopSweep)
	}()
	if opts.Clusters != nil {
		opts.Clusters.SetPanicHook(srv.metrics.countPanicAt)
	}
	srv.watchHealth()
	cfg := opts.Config.Load()
	proxyID := cfg.ProxyID
	if opts.SessionIDs != nil {
		proxyID, srv.upgradeBit = opts.SessionIDs.ProxyID, opts.SessionIDs.UpgradeBit
	}
	srv.ids.Layout, srv.proxyID = sessionid.NewLayout(cfg.ClientSessionIDVersion, proxyID, srv.mode.markedIDs(), srv.upgradeBit)
	if opts.SessionIDs != nil {
		srv.ids.Resume(opts.SessionIDs.Seq)
	}
	if cfg.EnableClientSSL {
		if _, err := srv.tls.client.Get(srv.log, cfg.ClientSSLCertFile, cfg.ClientSSLKeyFile); err != nil {
			return nil, fmt.Errorf("reactor: load client TLS certificate: %w", err)
		}
	}
	if cfg.ClientIOMode == "netpoll" {
		p, err := newPollerSet(pollerCount(cfg))
		if err != nil {
			return nil, err
		}
		srv.poller = p
	}
	srv.dialer = backend.Dialer{Config: srv.cfg, Health: srv.health, TLS: srv.tls.server,
		OnPoller: srv.poller != nil && srv.poller.serverConns,
		NoTLS:    srv.noServerTLS, Failed: srv.metrics.serverConnectFailures}
	return srv, nil
}

// SetInterceptor installs the internal-command handler. Call it before
// Serve.
func (srv *Server) SetInterceptor(i Interceptor) { srv.interceptor = i }

// Clusters returns the OceanBase clusters served (nil in mysql mode).
func (srv *Server) Clusters() *route.Clusters { return srv.clusters }

// Health returns the monitor that keeps the servers' blocklists.
func (srv *Server) Health() *health.Monitor { return srv.health }

// Config returns the configuration store.
func (srv *Server) Config() *config.Store { return srv.cfg }

// Version returns obgate's version string.
func (srv *Server) Version() string { return srv.version }

// ErrServerClosed is what Serve returns when Shutdown began before it:
// the listener is closed at once and nothing was accepted. A Serve that
// was running when Shutdown began returns nil.
var ErrServerClosed = errors.New("reactor: server is shutting down")

// Serve accepts connections on ln until ln is closed or Shutdown is
// called; accept failures are waited out, never returned. Each
// connection's login runs on its own goroutine; afterwards the session
// lives on netpoll (no goroutine while idle) or on a goroutine of its own
// (TLS, client_io_mode=net).
func (srv *Server) Serve(ln net.Listener) error {
	srv.mu.Lock()
	if srv.draining.Load() {
		srv.mu.Unlock()
		_ = ln.Close() // as Shutdown closes the listeners it found
		return ErrServerClosed
	}
	srv.listeners = append(srv.listeners, ln)
	srv.mu.Unlock()
	guard := newAcceptGuard(srv)
	defer guard.close()
	for {
		conn, err := ln.Accept()
		if err != nil {
			if srv.draining.Load() || errors.Is(err, net.ErrClosed) {
				return nil
			}
			guard.failed(ln, err) // see accept.go: never ends Serve
			continue
		}
		guard.accepted()
		src, ok := srv.admitHandshake(conn)
		if !ok {
			continue
		}
		srv.wg.Add(1)
		go srv.handleConn(conn, src)
	}
}

// Shutdown stops accepting, lets running statements and open transactions
// finish, closes each session once it has been idle outside a transaction
// for drainQuiet (looking every 50ms), and closes what is left when ctx
// ends. After HandOverSessions, the sessions that can move are handed
// over at their next idle point instead of closed. It returns when every
// session is gone, with ctx's error when ctx ended first; a session still
// there stuckGrace after that is named in a *StuckSessionsError, and
// Shutdown returns without it.
func (srv *Server) Shutdown(ctx context.Context) error {
	srv.draining.Store(true)
	srv.mu.Lock()
	for _, ln := range srv.listeners {
		_ = ln.Close()
	}
	srv.mu.Unlock()
	srv.drainLook()
	done := make(chan struct{})
	go func() {
		srv.active.Wait()
		srv.wg.Wait()
		close(done)
	}()
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	for {
		select {
		case <-done:
			srv.closePoller()
			return nil
		case <-tick.C:
			// Sessions that went quiet since the last look.
			srv.drainLook()
		case <-ctx.Done():
			srv.eachSession(func(s *Session) { s.closeFor(closeNow, QuitShutdown, "drain_timeout") })
			grace := time.NewTimer(stuckGrace)
			defer grace.Stop()
			select {
			case <-done:
			case <-grace.C:
				stuck := srv.stuckSessions()
				srv.log.Error("shutdown: sessions did not end after they were closed; stopping without them",
					"count", len(stuck.Sessions), "sessions", strings.Join(stuck.Sessions, "; "))
				srv.closePoller()
				return stuck
			}
			srv.closePoller()
			return ctx.Err()
		}
	}
}

// drainLook hands over (handover.go) or closes the sessions that are
// quiet now.
func (srv *Server) drainLook() {
	h := srv.handover.Load()
	srv.eachSession(func(s *Session) {
		if h != nil && s.drv.handOverIfIdle(h) {
			return
		}
		s.closeIfQuiet(drainQuiet)
	})
}

// Close closes every listener and session at once.
func (srv *Server) Close() error {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_ = srv.Shutdown(ctx)
	return nil
}

// Draining reports whether Shutdown was called.
func (srv *Server) Draining() bool { return srv.draining.Load() }

func (srv *Server) closePoller() {
	if srv.poller != nil {
		srv.poller.close()
	}
	if srv.servers.Watch != nil {
		srv.servers.Watch.Close()
	}
	srv.stopSweepOnce.Do(func() {
		close(srv.stopSweep)
		<-srv.sweepDone
		<-srv.memDone
		srv.metrics.unsubsCfg()
	})
}

// newSessionID returns a cs_id that no live session uses (see
// sessionid.go). The sequence wraps around; ids still in use are skipped.
func (srv *Server) newSessionID() uint32 {
	for {
		id := srv.ids.Next()
		if _, taken := srv.sessions.Load(id); !taken {
			return id
		}
	}
}

// ProxyID is the proxy id carried in this process's client session ids.
func (srv *Server) ProxyID() int64 { return srv.proxyID }

// SessionIDBase is what a hot upgrade's new process lays its session
// ids out with: its parent's proxy id, the other upgrade bit
// (sessionid.go), and the sequence number its parent reached, from which
// it goes on, so that after two upgrades (the bit back where it was) the
// ids of sessions handed over twice do not meet new ones either.
type SessionIDBase struct {
	ProxyID    int64
	UpgradeBit bool
	Seq        uint32
}

// SessionIDs is this process's base now; a new process takes it with the
// upgrade bit flipped.
func (srv *Server) SessionIDs() SessionIDBase {
	return SessionIDBase{ProxyID: srv.proxyID, UpgradeBit: srv.upgradeBit, Seq: srv.ids.Seq()}
}

// Session returns the live session with id.
func (srv *Server) Session(id uint32) (*Session, bool) {
	v, ok := srv.sessions.Load(id)
	if !ok {
		return nil, false
	}
	return v.(*Session), true
}

// Sessions returns a snapshot of every live session, ordered by id.
func (srv *Server) Sessions() []SessionInfo {
	var out []SessionInfo
	srv.eachSession(func(s *Session) { out = append(out, s.Info()) })
	sortSessionInfos(out)
	return out
}

// KillSession closes session id at once (KILL PROXYSESSION).
func (srv *Server) KillSession(id uint32) error {
	s, ok := srv.Session(id)
	if !ok {
		return mysqlproto.NewSQLError(mysqlproto.ERNoSuchThread, "Unknown thread id: %d", id)
	}
	s.closeFor(closeNow, QuitKilled, "kill_proxysession")
	return nil
}

func (srv *Server) eachSession(f func(*Session)) {
	srv.sessions.Range(func(_, v any) bool {
		f(v.(*Session))
		return true
	})
}

// ClientCount is the number of open client connections.
func (srv *Server) ClientCount() int64 { return srv.clients.Load() }
