package backend

import (
	"crypto/tls"
	"net"
	"sync/atomic"
	"time"

	"obgate/health"
	"obgate/mysqlproto"
	"obgate/reactor/connio"
	"obgate/reactor/sessvars"
)

// Conn is one connection to a server (a "server session"): a plain
// net.Conn read in bounded chunks (client_io_mode=net), or a netpoll
// connection in the client pollers whose input is bounded
// (PolledConn); either way TCP pushes back on the server when a client
// is slow. After the login its bytes move through a serverIO (io.go)
// chosen by how the login left the connection.
//
// The goroutine running the owning client session's command (or its
// login) uses it and owns the fields not marked otherwise; Close may be
// called from any goroutine to interrupt that command.
type Conn struct {
	NetConn net.Conn // the socket, or its *tls.Conn once TLS (tls.go)
	Sock    net.Conn // the socket: what Close closes
	Addr    string   // the server's address, as dialed
	TLS     bool     // the session runs over TLS (enable_server_ssl)
	// PendingTLS is the TLS configuration the login upgrades with
	// (StartTLS); set by PlanTLS, cleared by StartTLS.
	PendingTLS *tls.Config
	ThreadID   uint32      // the server's connection id
	Closed     atomic.Bool // Close ran (any goroutine may read it)
	// PeerGone is set by the server watch when the server closed the
	// connection (any goroutine may read it).
	PeerGone atomic.Bool

	// Owner is the client session it belongs to, set once by
	// Registry.Add before other goroutines can see the Conn.
	Owner      Owner
	reg        *Registry
	watchToken uint64

	// The framing the login negotiated, set before anything else is sent.
	OB20   *mysqlproto.OB20Framer       // OB 2.0 framing (OceanBase mode), or nil
	Comp   *mysqlproto.CompressedFramer // MySQL compressed protocol, or nil
	Extra  []byte                       // OB 2.0 extra info sent with each request
	OBCaps mysqlproto.OBCapability      // the OB 2.0 capabilities both sides have
	Status mysqlproto.ServerStatus      // after the last response
	Sync   sessvars.Synced              // how much of the client's session state it has
	Stmts  map[uint32]Stmt              // client statement id → this server's
	// LastUsed (unix nanoseconds) and Current (it is its owner's last
	// server session, Set.Use) are written by the owner, read by the idle
	// sweeper.
	LastUsed atomic.Int64
	Current  atomic.Bool

	sio serverIO // set by serverIO on first use after the login

	// Health is the server's health entry: statements are counted in and
	// out of it and failures reported to it. Set by Dialer.Dial.
	Health *health.Entry
}

// Stmt is a client statement as prepared on one server session.
type Stmt struct {
	ID    uint32 // the server's statement id
	Bound bool   // an execute with parameter types reached this server
}

// StmtGet is the server's id of client statement clientID here, and
// whether an execute with parameter types reached it; ok is false when it
// is not prepared here.
func (b *Conn) StmtGet(clientID uint32) (id uint32, bound, ok bool) {
	st, ok := b.Stmts[clientID]
	return st.ID, st.Bound, ok
}

// StmtSet records that client statement clientID is prepared here as
// serverID.
func (b *Conn) StmtSet(clientID, serverID uint32) {
	if b.Stmts == nil {
		b.Stmts = make(map[uint32]Stmt)
	}
	b.Stmts[clientID] = Stmt{ID: serverID}
}

// StmtBound records that an execute of clientID with parameter types
// reached this server session.
func (b *Conn) StmtBound(clientID uint32) {
	if st, ok := b.Stmts[clientID]; ok {
		st.Bound = true
		b.Stmts[clientID] = st
	}
}

// StmtDelete forgets client statement clientID here.
func (b *Conn) StmtDelete(clientID uint32) { delete(b.Stmts, clientID) }

// Close closes the connection once and removes it from the registry;
// safe from any goroutine. It reports whether this call closed it.
func (b *Conn) Close() bool {
	if !b.Closed.CompareAndSwap(false, true) {
		return false
	}
	if b.reg != nil {
		b.reg.remove(b)
	}
	// A TLS connection's socket is closed under it: no close_notify,
	// which could wait for a blocked write of another goroutine (and
	// b.conn is the login goroutine's to change until it is done).
	_ = b.Sock.Close()
	return true
}

// Lost reports whether the connection is gone: closed by obgate, or by
// the server (as far as obgate learned). Any goroutine.
func (b *Conn) Lost() bool { return b.Closed.Load() || b.PeerGone.Load() }

// serverGoneLater is serverGone for a netpoll connection's hang-up event:
// the poller must not wait for the session, so a pooled goroutine runs it.
func (b *Conn) serverGoneLater() {
	if b.Closed.Load() || b.PeerGone.Load() || b.Owner == nil {
		return
	}
	connio.Tasks.Run(nil, b.serverGone)
}

// serverGone runs on the server watch's goroutine (or, for a netpoll
// connection, a pooled one) when the server closed the connection.
func (b *Conn) serverGone() {
	if b.Closed.Load() || b.PeerGone.Swap(true) {
		return
	}
	if b.Owner != nil {
		b.Owner.ServerGone(b)
	}
}

// serverIO returns the session's serverIO, choosing it on first use from
// the framing the login negotiated (ob20, comp or neither); the login sets
// those fields before anything is sent through it.
func (b *Conn) serverIO() serverIO {
	if b.sio == nil {
		switch {
		case b.OB20 != nil:
			b.sio = newOB20ServerIO(b.NetConn, b.OB20, b.Extra, b.OBCaps)
		case b.Comp != nil:
			b.sio = &compServerIO{conn: b.NetConn, fr: b.Comp}
		default:
			b.sio = &plainServerIO{conn: b.NetConn}
		}
	}
	return b.sio
}

// WriteRequest sends one piece of a request: through the OB20 framer (the
// first piece carries the trace info, the last the LAST flag), the
// compressed framer, or as is.
func (b *Conn) WriteRequest(p []byte, first, last bool) error {
	return b.serverIO().writeRequest(p, first, last)
}

// FinishResponse consumes what the server sends after the MySQL packets of
// a response (the final OB 2.0 frame may carry none); the caller calls it
// once the response scanner is done.
func (b *Conn) FinishResponse() error {
	if b.OB20 != nil {
		return b.OB20.FinishResponse()
	}
	return nil
}

// Touch records that the server session ran a statement now.
func (b *Conn) Touch() { b.LastUsed.Store(time.Now().UnixNano()) }

// LastUsedAt is when the server session last ran a statement.
func (b *Conn) LastUsedAt() time.Time { return time.Unix(0, b.LastUsed.Load()) }

// Read reads response bytes: MySQL packets, unframed from OB20 (after both
// checksums were verified) or from the compressed protocol when the session
// speaks one.
func (b *Conn) Read(p []byte) (int, error) { return b.serverIO().read(p) }
