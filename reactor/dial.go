package reactor

import (
	"context"
	"errors"
	"fmt"

	"obgate/mysqlproto"
	"obgate/reactor/backend"
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
		be, h, pio, err := srv.dialer.Dial(ctx, "", addr)
		if err == nil {
			return be, h, pio, nil
		}
		srv.log.Debug("server connect failed", "addr", addr, "err", err)
		lastErr = err
		if backend.IsFDExhausted(err) {
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

// ServerSessionCount is the number of server sessions obgate holds to the
// server at addr, over all client sessions. Any goroutine may call it.
func (srv *Server) ServerSessionCount(addr string) int { return srv.servers.Count(addr) }

// CloseServerSessions closes every server session to addr, idle or busy,
// and returns how many it closed: for a server known to be dead. Client
// sessions that used one go on with another server session (a statement
// running on one gets an error, as for any server break). Any goroutine
// may call it.
func (srv *Server) CloseServerSessions(addr string) int { return srv.servers.CloseAll(addr) }
