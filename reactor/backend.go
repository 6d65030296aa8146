package reactor

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"sync/atomic"
	"time"

	"obgate/health"
	"obgate/mysqlproto"
	"obgate/reactor/connio"
	"obgate/reactor/sessvars"
	"obgate/route"
)

// serverConn is one connection to a server (a "server session"): a plain
// net.Conn read in bounded chunks (client_io_mode=net), or a netpoll
// connection in the client pollers whose input is bounded
// (npServerConn); either way TCP pushes back on the server when a client
// is slow. After the login its bytes move through a serverIO (serverio.go)
// chosen by how the login left the connection.
//
// The goroutine running the owning session's command uses it; close may be
// called from any goroutine to interrupt that command.
type serverConn struct {
	conn net.Conn // the socket, or its *tls.Conn once tls (servertls.go)
	sock net.Conn // the socket: what close closes
	addr string
	tls  bool // the session runs over TLS (enable_server_ssl)
	// pendingTLS is the TLS configuration the login upgrades with
	// (startTLS); set by planTLS, cleared by startTLS.
	pendingTLS *tls.Config
	threadID   uint32 // the server's connection id
	closed     atomic.Bool
	// peerGone is set by the server watch when the server closed the
	// connection (any goroutine may read it).
	peerGone atomic.Bool

	// Set once by serverRegistry.add, before other goroutines can see be.
	owner      *Session
	reg        *serverRegistry
	watchToken uint64

	// OceanBase mode.
	ob20   *mysqlproto.OB20Framer       // OB 2.0 framing after login, or nil
	comp   *mysqlproto.CompressedFramer // MySQL compressed protocol, or nil
	extra  []byte                       // OB20 extra info sent with each request
	obCaps mysqlproto.OBCapability
	status mysqlproto.ServerStatus // after the last response
	sync   sessvars.Synced         // how much of the client's session state it has
	stmts  map[uint32]serverStmt   // client statement id → this server's
	// lastUsed (unix nanoseconds) and current (it is its owner's last
	// server session) are written by the owner, read by the idle sweeper.
	lastUsed atomic.Int64
	current  atomic.Bool

	sio serverIO // set by serverIO on first use after the login

	// health is the server's health entry: statements are counted in and
	// out of it and failures reported to it. Set by Server.dial.
	health *health.Entry
}

// serverStmt is a client statement as prepared on one server session.
type serverStmt struct {
	id    uint32 // the server's statement id
	bound bool   // an execute with parameter types reached this server
}

func (b *serverConn) stmtGet(clientID uint32) (id uint32, bound, ok bool) {
	st, ok := b.stmts[clientID]
	return st.id, st.bound, ok
}

func (b *serverConn) stmtSet(clientID, serverID uint32) {
	if b.stmts == nil {
		b.stmts = make(map[uint32]serverStmt)
	}
	b.stmts[clientID] = serverStmt{id: serverID}
}

func (b *serverConn) stmtBound(clientID uint32) {
	if st, ok := b.stmts[clientID]; ok {
		st.bound = true
		b.stmts[clientID] = st
	}
}

func (b *serverConn) stmtDelete(clientID uint32) { delete(b.stmts, clientID) }

// close closes the connection once and removes it from the registry;
// safe from any goroutine. It reports whether this call closed it.
func (b *serverConn) close() bool {
	if !b.closed.CompareAndSwap(false, true) {
		return false
	}
	if b.reg != nil {
		b.reg.remove(b)
	}
	// A TLS connection's socket is closed under it: no close_notify,
	// which could wait for a blocked write of another goroutine (and
	// b.conn is the login goroutine's to change until it is done).
	_ = b.sock.Close()
	return true
}

// serverGoneLater is serverGone for a netpoll connection's hang-up event:
// the poller must not wait for the session, so a pooled goroutine runs it.
func (b *serverConn) serverGoneLater() {
	if b.closed.Load() || b.peerGone.Load() || b.owner == nil {
		return
	}
	connio.Tasks.Run(nil, func() { b.owner.srv.guarded(panicServerWatch, b.owner.id, b.serverGone) })
}

// serverGone runs on the server watch's goroutine when the server closed
// the connection.
func (b *serverConn) serverGone() {
	if b.closed.Load() || b.peerGone.Swap(true) {
		return
	}
	if b.owner != nil {
		b.owner.side.serverGone(b)
	}
}

// errNoServer reports that no listed server accepted a connection.
var errNoServer = errors.New("no server accepted a connection")

// dialFirst connects to the first server, in the router's order, that
// accepts a TCP connection and sends a handshake (mysql routing mode). It
// returns the connection, its parsed handshake and the packet I/O that
// read it.
func (srv *Server) dialFirst(ctx context.Context, addrs []string) (*serverConn, *mysqlproto.Handshake, *mysqlproto.PacketIO, error) {
	if len(addrs) == 0 {
		return nil, nil, nil, errNoServer
	}
	rt, err := srv.router.Plan(ctx, &route.Request{Servers: addrs}, nil)
	if err != nil {
		return nil, nil, nil, err
	}
	var lastErr error
	for _, addr := range rt.Addrs {
		be, h, pio, err := srv.dial(ctx, nil, addr)
		if err == nil {
			return be, h, pio, nil
		}
		srv.log.Debug("server connect failed", "addr", addr, "err", err)
		lastErr = err
		if isFDExhausted(err) {
			// Every other server would fail the same way; the caller
			// tells the client "Too many connections".
			return nil, nil, nil, fmt.Errorf("%w: %w", errNoServer, err)
		}
		if ctx.Err() != nil {
			break
		}
	}
	return nil, nil, nil, fmt.Errorf("%w: %v", errNoServer, lastErr)
}

// dial opens a server session's connection to addr of cluster c (nil in
// mysql routing mode) and reads its handshake, and tells the server's
// health entry how that went. The handshake must come within
// short_async_task_timeout, and within detect_server_timeout when that is
// shorter: a server that cannot greet in that time would be found dead by
// the detect task anyway, and a statement should not wait longer for it.
func (srv *Server) dial(ctx context.Context, c *route.Cluster, addr string) (*serverConn, *mysqlproto.Handshake, *mysqlproto.PacketIO, error) {
	cfg := srv.cfg.Load()
	entry := srv.health.Entry(c.Name(), addr)
	timeout := min(cfg.ShortAsyncTaskTimeout, cfg.DetectServerTimeout)
	start := time.Now()
	tlsCfg, required, err := srv.tls.server.For(cfg, addr)
	if err != nil {
		// obgate's own files, not the server's failure.
		return nil, nil, nil, err
	}
	be, h, pio, err := srv.dialServer(ctx, addr, connio.ServerDialer(cfg, timeout), tlsCfg == nil)
	if err == nil {
		err = be.planTLS(h, tlsCfg, required)
	}
	switch {
	case err == nil:
		entry.ConnectSucceeded()
		be.health = entry
		return be, h, pio, nil
	case isFDExhausted(err):
		// obgate's own shortage, not the server's.
	case errors.Is(err, errServerNoTLS):
		// obgate's settings refused it: the server works. Every dial
		// would say so: one line per burst.
		srv.noServerTLS.Note(err)
	case ctx.Err() != nil:
		// The client gave up (or its login deadline passed) while obgate
		// was connecting: a failure only when the connect had taken
		// min_congested_connect_timeout already, as ODP counts it.
		if time.Since(start) >= cfg.MinCongestedConnectTimeout {
			entry.AliveFailed("connect_abandoned")
		}
	default:
		var se *mysqlproto.SQLError
		if errors.As(err, &se) {
			// The server greeted with an ERR: it is alive but refuses
			// sessions now (too many connections, starting up).
			entry.AliveFailed("connect_refused_by_server")
		} else {
			entry.ConnectFailed()
		}
	}
	srv.metrics.serverConnectFailures.Inc()
	return nil, nil, nil, err
}

// dialServer opens a connection to addr with d and reads its handshake
// within d.Timeout. The connection joins the pollers when they take
// server connections and mayPoll (not one that will run TLS).
func (srv *Server) dialServer(ctx context.Context, addr string, d net.Dialer, mayPoll bool) (*serverConn, *mysqlproto.Handshake, *mysqlproto.PacketIO, error) {
	timeout := d.Timeout
	conn, err := d.DialContext(ctx, "tcp", addr)
	if err != nil {
		return nil, nil, nil, err
	}
	if mayPoll && srv.poller != nil && srv.poller.serverConns {
		nc, err := attachServerNetpoll(conn.(*net.TCPConn))
		if err != nil {
			conn.Close()
			return nil, nil, nil, err
		}
		conn = nc
	}
	deadline := time.Now().Add(timeout)
	if dl, ok := ctx.Deadline(); ok && dl.Before(deadline) {
		deadline = dl
	}
	_ = conn.SetDeadline(deadline)
	pio := mysqlproto.NewPacketIO(conn, conn)
	greeting, err := pio.ReadPacket()
	if err != nil {
		conn.Close()
		return nil, nil, nil, fmt.Errorf("read handshake from %s: %w", addr, err)
	}
	if len(greeting) > 0 && greeting[0] == mysqlproto.ERRHeader {
		conn.Close()
		e, _ := mysqlproto.ParseERR(greeting)
		return nil, nil, nil, mysqlproto.SQLErrorFromERR(e)
	}
	h, err := mysqlproto.ParseHandshake(greeting)
	if err != nil {
		conn.Close()
		return nil, nil, nil, fmt.Errorf("handshake from %s: %w", addr, err)
	}
	_ = conn.SetDeadline(time.Time{})
	return &serverConn{conn: conn, sock: conn, addr: addr, threadID: h.ConnectionID}, h, pio, nil
}

// serverIO returns the session's serverIO, choosing it on first use from
// the framing the login negotiated (ob20, comp or neither); the login sets
// those fields before anything is sent through it.
func (b *serverConn) serverIO() serverIO {
	if b.sio == nil {
		switch {
		case b.ob20 != nil:
			b.sio = newOB20ServerIO(b.conn, b.ob20, b.extra, b.obCaps)
		case b.comp != nil:
			b.sio = &compServerIO{conn: b.conn, fr: b.comp}
		default:
			b.sio = &plainServerIO{conn: b.conn}
		}
	}
	return b.sio
}

// writeRequest sends one piece of a request: through the OB20 framer (the
// first piece carries the trace info, the last the LAST flag), the
// compressed framer, or as is.
func (b *serverConn) writeRequest(p []byte, first, last bool) error {
	return b.serverIO().writeRequest(p, first, last)
}

// finishResponse consumes what the server sends after the MySQL packets of
// a response (the final OB 2.0 frame may carry none); the caller calls it
// once the response scanner is done.
func (b *serverConn) finishResponse() error {
	if b.ob20 != nil {
		return b.ob20.FinishResponse()
	}
	return nil
}

// touch records that the server session ran a statement now.
func (b *serverConn) touch() { b.lastUsed.Store(time.Now().UnixNano()) }

// lastUsedAt is when the server session last ran a statement.
func (b *serverConn) lastUsedAt() time.Time { return time.Unix(0, b.lastUsed.Load()) }

// read reads response bytes: MySQL packets, unframed from OB20 (after both
// checksums were verified) or from the compressed protocol when the session
// speaks one.
func (b *serverConn) read(p []byte) (int, error) { return b.serverIO().read(p) }
