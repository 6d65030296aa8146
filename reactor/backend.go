package reactor

import (
	"context"
	"errors"
	"fmt"
	"net"
	"sync/atomic"
	"syscall"
	"time"

	"obgate/mysqlproto"
)

// serverConn is one connection to a server (a "server session"). It is a
// plain net.Conn read in bounded chunks: obgate reads from a server only
// while it can write to the client, so TCP pushes back on the server when
// a client is slow.
//
// The goroutine running the owning session's command uses it; close may be
// called from any goroutine to interrupt that command.
type serverConn struct {
	conn     net.Conn
	addr     string
	threadID uint32 // the server's connection id
	closed   atomic.Bool

	// OceanBase mode.
	ob20     *mysqlproto.OB20Framer       // OB 2.0 framing after login, or nil
	comp     *mysqlproto.CompressedFramer // MySQL compressed protocol, or nil
	extra    []byte                       // OB20 extra info sent with each request
	obCaps   mysqlproto.OBCapability
	status   mysqlproto.ServerStatus // after the last response
	sync     syncState               // how much of the client's session state it has
	stmts    map[uint32]serverStmt   // client statement id → this server's
	lastUsed time.Time

	// Liveness peek (see alive); peekFn is b.peek, bound once.
	rc      syscall.RawConn
	peekFn  func(uintptr)
	peekN   int
	peekErr error
	peekBuf [1]byte
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

// close closes the connection once; safe from any goroutine.
func (b *serverConn) close() {
	if b.closed.CompareAndSwap(false, true) {
		_ = b.conn.Close()
	}
}

// errNoServer reports that no listed server accepted a connection.
var errNoServer = errors.New("no server accepted a connection")

// backendPicker hands out server addresses round-robin.
type backendPicker struct {
	next atomic.Uint64
}

// dialFirst connects to the first of addrs, in round-robin order, that
// accepts a TCP connection and sends a handshake. It returns the connection,
// its parsed handshake and the raw handshake payload.
func (srv *Server) dialFirst(ctx context.Context, addrs []string) (*serverConn, *mysqlproto.Handshake, *mysqlproto.PacketIO, error) {
	if len(addrs) == 0 {
		return nil, nil, nil, errNoServer
	}
	cfg := srv.cfg.Load()
	start := int(srv.picker.next.Add(1) - 1)
	var lastErr error
	for i := range addrs {
		addr := addrs[(start+i)%len(addrs)]
		be, h, pio, err := srv.dialServer(ctx, addr, cfg.ShortAsyncTaskTimeout, keepAlive(cfg.ServerTCPKeepIdle, cfg.ServerTCPKeepIntvl, cfg.ServerTCPKeepCnt))
		if err == nil {
			return be, h, pio, nil
		}
		srv.metrics.serverConnectFailures.Inc()
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

// dialServer opens a connection to addr and reads its handshake.
func (srv *Server) dialServer(ctx context.Context, addr string, timeout time.Duration, ka net.KeepAliveConfig) (*serverConn, *mysqlproto.Handshake, *mysqlproto.PacketIO, error) {
	d := net.Dialer{Timeout: timeout, KeepAliveConfig: ka}
	conn, err := d.DialContext(ctx, "tcp", addr)
	if err != nil {
		return nil, nil, nil, err
	}
	_ = conn.SetDeadline(time.Now().Add(timeout))
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
	return &serverConn{conn: conn, addr: addr, threadID: h.ConnectionID}, h, pio, nil
}

// keepAlive builds TCP keepalive settings from ODP's keepidle/keepintvl/
// keepcnt items (seconds; 0 leaves the system default).
func keepAlive(idle, intvl, cnt int64) net.KeepAliveConfig {
	return net.KeepAliveConfig{
		Enable:   true,
		Idle:     time.Duration(idle) * time.Second,
		Interval: time.Duration(intvl) * time.Second,
		Count:    int(cnt),
	}
}

// writeRequest sends one piece of a request: through the OB20 framer (the
// first piece carries the trace info, the last the LAST flag) or as is.
func (b *serverConn) writeRequest(p []byte, first, last bool) error {
	if b.comp != nil {
		if first {
			b.comp.BeginRequest()
		}
		_, err := b.comp.Write(p)
		return err
	}
	if b.ob20 == nil {
		_, err := b.conn.Write(p)
		return err
	}
	if first {
		b.ob20.BeginRequest()
	}
	var extra []byte
	if first {
		extra = b.extra
	}
	flags := mysqlproto.OB20NewExtraInfo
	if !b.obCaps.Has(mysqlproto.OBCapProxyNewExtraInfo) {
		flags = 0
	}
	if last {
		flags |= mysqlproto.OB20LastPacket
	}
	return b.ob20.WriteFrame(p, extra, flags)
}

// read reads response bytes: MySQL packets, unframed from OB20 when the
// session speaks it (after both checksums were verified).
func (b *serverConn) read(p []byte) (int, error) {
	switch {
	case b.ob20 != nil:
		return b.ob20.Read(p)
	case b.comp != nil:
		return b.comp.Read(p)
	}
	return b.conn.Read(p)
}
