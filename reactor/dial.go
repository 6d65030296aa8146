package reactor

import (
	"context"
	"errors"
	"fmt"
	"net"
	"time"

	"obgate/mysqlproto"
	"obgate/reactor/backend"
	"obgate/reactor/connio"
	"obgate/route"
)

// errNoServer reports that no listed server accepted a connection.
var errNoServer = errors.New("no server accepted a connection")

// dialFirst connects to the first server, in the router's order, that
// accepts a TCP connection and sends a handshake (mysql routing mode). It
// returns the connection, its parsed handshake and the packet I/O that
// read it.
func (srv *Server) dialFirst(ctx context.Context, addrs []string) (*backend.Conn, *mysqlproto.Handshake, *mysqlproto.PacketIO, error) {
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
func (srv *Server) dial(ctx context.Context, c *route.Cluster, addr string) (*backend.Conn, *mysqlproto.Handshake, *mysqlproto.PacketIO, error) {
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
		err = be.PlanTLS(h, tlsCfg, required)
	}
	switch {
	case err == nil:
		entry.ConnectSucceeded()
		be.Health = entry
		return be, h, pio, nil
	case isFDExhausted(err):
		// obgate's own shortage, not the server's.
	case errors.Is(err, backend.ErrServerNoTLS):
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

// dialServer is backend.Dial on netpoll when the pollers take server
// connections and mayPoll (not one that will run TLS).
func (srv *Server) dialServer(ctx context.Context, addr string, d net.Dialer, mayPoll bool) (*backend.Conn, *mysqlproto.Handshake, *mysqlproto.PacketIO, error) {
	return backend.Dial(ctx, addr, d, mayPoll && srv.poller != nil && srv.poller.serverConns)
}

// ServerSessionCount is the number of server sessions obgate holds to the
// server at addr, over all client sessions. Any goroutine may call it.
func (srv *Server) ServerSessionCount(addr string) int { return srv.servers.Count(addr) }

// CloseServerSessions closes every server session to addr, idle or busy,
// and returns how many it closed: for a server known to be dead. Client
// sessions that used one go on with another server session (a statement
// running on one gets an error, as for any server break). Any goroutine
// may call it.
func (srv *Server) CloseServerSessions(addr string) int { return srv.servers.CloseAll(addr) }
