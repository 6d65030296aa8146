package reactor

import (
	"context"
	"io"
	"net"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"obgate/config"
	"obgate/internal/topology"
	"obgate/mysqlproto"
	"obgate/reactor/backend"
	"obgate/reactor/connio"
	"obgate/reactor/prepared"
	"obgate/route"
)

// Session is one client connection: its transport, its login and
// client-visible state, the command loop and the close ladder. What a
// routing mode does with servers is its side (serverSide: obSession or
// mysqlSide); what one command knows of itself is st (statement).
//
// Ownership: whoever runs the session's current step owns every field not
// marked shared: the handshake goroutine, then the command's owner (the
// poller or the goroutine it handed the command to, see driver; or the net
// loop). Other goroutines (admin commands,
// KILL from another session, the sweepers, shutdown) may only read what is
// marked shared and call requestClose.
type Session struct {
	srv *Server
	id  uint32 // shared, immutable: the client's connection id

	lifecycle lifecycle  // shared: state and close requests
	client    clientConn // the client connection and its transport

	// Client-visible state, owned.
	caps      mysqlproto.Capability   // negotiated with the client
	status    mysqlproto.ServerStatus // status flags the client was last told
	stmts     prepared.Table          // the client's prepared statements, under obgate's ids
	txnBroken bool                    // the open transaction's server broke (txnbroken.go)
	identity  route.Identity          // shared, immutable after login: what the login name said
	admin     bool                    // shared, immutable after login: root@proxysys

	cfg     *config.Config             // snapshot loaded at the start of the current command
	series  stmtSeries                 // the metrics its statements count in
	scanner mysqlproto.ResponseScanner // reads the answer being relayed
	// st is the command being served (or the login's own commands): a
	// pooled value the owner takes when the login or a command starts
	// and gives back at the session's next idle point, so that an idle
	// session holds none; nil while idle (statement_pool.go).
	st *statement

	ob *obSession // the side as its concrete type in OceanBase mode, else nil
	my *mysqlSide // the side as its concrete type in mysql mode, else nil
	// servers are the session's server sessions (owned; its Shared, the
	// current one, is for any goroutine).
	servers backend.Set

	published published // shared, under its mu: what SHOW PROXYSESSION and KILL read
	activity  activity  // shared counters
	drv       driver    // runs the command phase on the transport (poller.go)

	// side is what the session does per routing mode, made with the
	// session (routingMode.newSide); ob and my are side as its concrete type, for the
	// code of that mode. Shared, immutable. Last: six interfaces, kept
	// out of the way of the fields above.
	side serverSide
}

// lifecycle is a session's place on the close ladder (teardown,
// requestClose, afterCommand). Any goroutine may read it.
type lifecycle struct {
	state    atomic.Int32  // a SessionState
	closeReq atomic.Uint32 // closeNone, closeWhenIdle or closeNow
	// killsPending counts KILLs of this session in flight: until they are
	// answered, a break of its server connection is theirs
	// (route.Try.Stopped).
	killsPending atomic.Int32
	torndown     atomic.Bool // teardown ran or runs
	// endWhy is why the session ends, noted before its close (noteEnd);
	// loggedIn says the login finished. Both are for the diagnosis line.
	endWhy   atomic.Pointer[endCause]
	loggedIn atomic.Bool
	// handoverFailed says the new process of a hot upgrade refused the
	// session: it drains here (handover.go).
	handoverFailed atomic.Bool
}

// clientConn is the session's client connection.
type clientConn struct {
	io         connio.ClientIO         // the transport the command loop reads and writes (owned)
	netClient  *connio.NetClient       // set when client is a connio.NetClient, to free its buffer
	ob20Client *connio.OB20Client      // set when the client speaks OB 2.0, to free its buffer
	rawConn    net.Conn                // the accepted connection, until the transport takes it over
	obCaps     mysqlproto.OBCapability // OB 2.0 towards the client when it has OB_PROTOCOL_V2
	replySeq   uint8                   // sequence id of the next packet to the client
	// closer closes the client connection from any goroutine (the
	// layer that owns it now); transportName is "net", "netpoll" or
	// with a TLS or OB 2.0 layer (shared).
	closer        atomic.Pointer[closerRef]
	transportName atomic.Value // string
	addr          string       // shared, immutable
	connectedAt   time.Time    // shared, immutable
}

// published is what other goroutines read of a session, under mu; the
// owner updates it when it changes.
type published struct {
	mu         sync.Mutex
	db         string              // the current database
	user       string              // the login name as the client sent it
	varsPub    []VarInfo           // OceanBase mode: see publishOB
	serversPub []ServerSessionInfo // OceanBase mode: see publishOB
}

// activity counts what a session did; any goroutine may read it.
type activity struct {
	transCount atomic.Uint64
	stmtCount  atomic.Uint64
	lastActive atomic.Int64 // unix nanoseconds of the last command's end
	// bytesIn and bytesOut count the client's bytes relayed to and from
	// servers (countIn, countOut): written only by the command's owner,
	// read at teardown, after it.
	bytesIn, bytesOut int64
	// waitTimeout is the client's idle limit in nanoseconds (OceanBase
	// mode; 0 means none), written by the owner, read by the sweeper.
	waitTimeout atomic.Int64
	inTrans     atomic.Bool  // a transaction is open, as the client sees it
	curCmd      atomic.Int32 // the command in progress, -1 when none
}

// closerRef holds whichever layer closes the client connection now.
type closerRef struct{ io.Closer }

// Close request levels, stored in Session.closeReq.
const (
	closeNone uint32 = iota
	closeWhenIdle
	closeNow
)

// ID is the session id, shown to clients as their connection id.
func (s *Session) ID() uint32 { return s.id }

// State is the session's current state.
func (s *Session) State() SessionState { return SessionState(s.lifecycle.state.Load()) }

// IsAdmin reports whether the session is an obgate administrator session
// (root@proxysys), which never touches a server.
func (s *Session) IsAdmin() bool { return s.admin }

// IsRootSys reports whether the session is root@sys of an OceanBase
// cluster, which may run obgate's internal commands as ODP allows.
func (s *Session) IsRootSys() bool {
	return s.side.clusterOf() != nil && s.identity.User == route.UserRoot && s.identity.Tenant == topology.TenantSys
}

// Identity is what the login name said.
func (s *Session) Identity() route.Identity { return s.identity }

// SessionInfo is a snapshot of a session for SHOW PROXYSESSION.
type SessionInfo struct {
	ID          uint32
	User        string
	Identity    route.Identity
	ClientAddr  string
	DB          string
	State       SessionState
	Command     string
	Transport   string
	InTrans     bool
	TransCount  uint64
	StmtCount   uint64
	ServerAddr  string
	ServerID    uint32
	ConnectedAt time.Time
	LastActive  time.Time
	Admin       bool
	TLS         bool
}

// Info returns a consistent-enough snapshot of the session; any goroutine
// may call it.
func (s *Session) Info() SessionInfo {
	s.published.mu.Lock()
	info := SessionInfo{
		ID: s.id, User: s.published.user, Identity: s.identity, ClientAddr: s.client.addr,
		DB: s.published.db, ConnectedAt: s.client.connectedAt, Admin: s.admin,
	}
	s.published.mu.Unlock()
	if be := s.servers.Shared(); be != nil {
		info.ServerAddr, info.ServerID = be.Addr, be.ThreadID
	}
	info.State = s.State()
	if c := s.activity.curCmd.Load(); c >= 0 {
		info.Command = mysqlproto.Command(c).String()
	}
	// The transport's name is fixed once the session is idle.
	if info.State == StateIdle || info.State == StateCommand {
		if t, ok := s.client.transportName.Load().(string); ok {
			info.Transport = t
			info.TLS = strings.HasPrefix(t, "tls")
		}
	}
	info.InTrans = s.activity.inTrans.Load()
	info.TransCount = s.activity.transCount.Load()
	info.StmtCount = s.activity.stmtCount.Load()
	info.LastActive = time.Unix(0, s.activity.lastActive.Load())
	return info
}

func (s *Session) setDB(db string) {
	s.published.mu.Lock()
	changed := s.published.db != db
	s.published.db = db
	s.published.mu.Unlock()
	if changed {
		s.stmts.StateChanged() // texts name tables of another database now
	}
	s.series.forget() // the new database's statement series
}

// DB returns the session's current database as obgate last saw it.
func (s *Session) DB() string {
	s.published.mu.Lock()
	defer s.published.mu.Unlock()
	return s.published.db
}

// requestClose asks the session to end. closeNow interrupts a running
// command by closing its connections; closeWhenIdle lets a running command
// and an open transaction finish first. Any goroutine may call it.
func (s *Session) requestClose(level uint32) {
	for {
		cur := s.lifecycle.closeReq.Load()
		if cur >= level || s.lifecycle.closeReq.CompareAndSwap(cur, level) {
			break
		}
	}
	switch s.State() {
	case StateClosing, StateClosed:
		return
	case StateIdle:
		if level == closeWhenIdle && s.activity.inTrans.Load() {
			return // the owner closes it when the transaction ends
		}
		if s.lifecycle.state.CompareAndSwap(int32(StateIdle), int32(StateClosing)) {
			s.client.closeTransport()
			return
		}
		// Lost to a command that just started: it sees closeReq at its end.
		if level == closeWhenIdle {
			return
		}
	case StateCommand:
		if level == closeWhenIdle {
			return
		}
	}
	// closeNow on a handshake or a running command: break its I/O.
	s.drv.interrupt()
}

// drainQuiet is how long a session must have been idle, outside a
// transaction, before a drain (Shutdown) closes it. A session closed
// right after an answer races the client's next command, which a pooled
// driver has often written before the close reaches it (the driver then
// reports a broken connection); one closed after a quiet spell is most
// likely resting in the client's pool, where the driver notices the
// close before its next use (go-sql-driver's connection check, JDBC
// pools' validation) and opens a new connection, to the new process
// after a hot upgrade.
const drainQuiet = 20 * time.Millisecond

// closeIfQuiet closes the session when it is idle outside a transaction
// and has been for quiet; otherwise it leaves it alone (Shutdown looks
// again). The client is told first, as a MySQL server that shuts down
// tells its idle clients (sayShutdown). Any goroutine may call it.
func (s *Session) closeIfQuiet(quiet time.Duration) {
	if s.State() != StateIdle || s.activity.inTrans.Load() || time.Since(time.Unix(0, s.activity.lastActive.Load())) < quiet {
		return
	}
	if s.lifecycle.state.CompareAndSwap(int32(StateIdle), int32(StateClosing)) {
		s.lifecycle.closeReq.Store(closeWhenIdle)
		s.drv.sayShutdown()
		s.client.closeTransport()
	}
}

// shutdownGoodbye is the ERR a MySQL server sends its idle clients when
// it shuts down (1053, 08S01), as an unsolicited packet with sequence 0.
var shutdownGoodbye = func() []byte {
	payload := mysqlproto.NewSQLError(mysqlproto.ERServerShutdown, "Server shutdown in progress").AppendPacket(nil)
	pkt := make([]byte, mysqlproto.HeaderLen, mysqlproto.HeaderLen+len(payload))
	mysqlproto.PutHeader(pkt, len(payload), 0)
	return append(pkt, payload...)
}()

// sayShutdown writes shutdownGoodbye to the client of an idle session
// being closed by a drain, without waiting: a pooled driver that checks
// its connection before use then takes a new one without an error, and
// a client that reads sees why. Clients on OB 2.0 framing, administrator
// sessions and a client whose socket buffer is full get only the close.
// The caller moved the session from StateIdle to StateClosing, so no
// command writes meanwhile.
func (d *driver) sayShutdown() {
	s := d.s
	if s.client.ob20Client != nil || s.admin {
		return
	}
	if d := d; d.hooked.Load() {
		_, _ = d.clientNP.TryWrite(shutdownGoodbye)
		return
	}
	if c := s.client.rawConn; c != nil && s.client.netClient != nil {
		// net and TLS clients: the connection's Write is safe beside the
		// loop's pending Read.
		_ = c.SetWriteDeadline(time.Now().Add(100 * time.Millisecond))
		_, _ = c.Write(shutdownGoodbye)
	}
}

// interrupt closes the session's connections so that whatever its owner
// is blocked on fails. The owner then tears the session down.
func (d *driver) interrupt() {
	s := d.s
	if be := s.servers.Shared(); be != nil {
		be.Close()
	}
	d.breakTransport()
}

// breakTransport makes the owner's use of the client connection fail. A
// session the poller drives has its socket shut down (netpoll frees a
// connection's buffers at Close, which only the owner may call) and a
// command awaiting its answer on the poller moved to a goroutine; other
// transports are closed. Any goroutine.
func (d *driver) breakTransport() {
	s := d.s
	if d.hooked.Load() {
		d.clientNP.Shutdown()
		d.kickPolled()
		return
	}
	s.client.closeTransport()
}

// serverAnswers reports whether addr sends a handshake within
// detect_server_timeout (at most one second): a live server.
func (srv *Server) serverAnswers(addr string) bool {
	timeout := min(srv.cfg.Load().DetectServerTimeout, time.Second)
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	be, _, _, err := backend.Dial(ctx, addr, net.Dialer{Timeout: timeout}, srv.dialer.OnPoller)
	if err != nil {
		return false
	}
	be.Close()
	return true
}

// checkServerAfterLogin closes a session whose server closed its
// connection while the session was still logging in, when the watch could
// not act on it yet. The session has just become idle.
func (s *Session) checkServerAfterLogin() {
	if s.side.closedIdle() {
		s.requestClose(closeNow)
	}
}
