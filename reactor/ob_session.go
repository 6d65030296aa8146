package reactor

import (
	"context"
	"errors"
	"fmt"
	"net"
	"time"

	"obgate/config"
	"obgate/internal/topology"
	"obgate/mysqlproto"
	"obgate/reactor/backend"
	"obgate/reactor/sessvars"
	"obgate/route"
)

// obIdentity is OceanBase mode's login and the names it gives the session
// (sideIdentity): the greeting, the client's login through the first
// server session, and EXPLAIN ROUTE.
type obIdentity struct{ *obSession }

// obSession is the server side of an OceanBase-mode client session (its
// serverSide, ob_side.go): the cluster and tenant it logged into, the login
// kept for new server sessions, the server sessions it holds (at most one
// per server) and how they are picked, opened and brought up to date
// (pickServer, openServer, syncServer), the session state it established on
// them, the routing state of the statement (ob_route.go), the rewriting of
// answers for the client (ob_forward.go) and its KILL (kill.go).
//
// Owned by the goroutine running the session's command.
type obSession struct {
	s *Session // the client session this is the server side of

	cluster     *route.Cluster
	tenant      string
	clientLogin *mysqlproto.HandshakeResponse // the client's login, replayed on new server sessions
	scramble    []byte                        // the scramble obgate showed the client
	proxySessID uint64

	// notReadyFirst is the candidate a ready-only plan put first and
	// found not ready (pickServer): the plan that may wait starts with it
	// instead of a fresh random order, which would favour the servers
	// that already have a ready session.
	notReadyFirst string

	vars      sessvars.Vars
	heldBegin []byte // BEGIN / START TRANSACTION held until the first real statement
	// begunWith is the held BEGIN sent with the current statement, given
	// back to heldBegin when the statement goes to another server.
	begunWith []byte
	// healthGen is the availability generation of the last plan.
	healthGen    uint64
	pinned       bool                     // temporary tables, user locks, SET TRANSACTION: stay on last
	trxSpecified bool                     // the server said SET TRANSACTION ran
	feedback     func(name, value []byte) // onFeedback, bound once
	publishedDB  uint64                   // vars.dbVer last copied to Session.db
	stateScratch []byte                   // client session-state being built
	okScratch    []byte                   // client OK being built
	snap         obSnapshot               // what publishOB last published
	routeBuf     []string                 // candidate list, reused by every routing decision
	route        obRouting                // the statement being routed, and what its plan used
	timeZone     *time.Location           // the session's time_zone (updateTimeZone); nil when unknown
	timeZoneText string                   // the value timeZone was read from
}

// obGreeting is the handshake obgate sends in OceanBase mode: obgate's
// own, as ODP's, with the fixed scramble unless enable_proxy_scramble.
func (o obIdentity) obGreeting(cfg *config.Config) *mysqlproto.Handshake {
	s := o.s
	g := ownGreeting(cfg, s.srv.GreetingVersion(cfg), obClientCapabilities)
	g.ConnectionID = s.id
	if s.srv.clientTLS(cfg) != nil {
		g.Capability |= mysqlproto.ClientSSL
	}
	return g
}

// greetingVersionWait bounds how long a login right after start waits for
// the default cluster's first load, whose server version the greeting
// carries (GreetingVersion); an administrator login while no cluster
// answers waits that long once.
const greetingVersionWait = time.Second

// awaitGreetingVersion waits, up to greetingVersionWait, for the default
// cluster's first metadata load when the greeting would otherwise carry
// the fallback version: a client that reads the version (Connector/J
// decides what reset() sends by it) must see the servers' own.
func (srv *Server) awaitGreetingVersion(ctx context.Context, cfg *config.Config) {
	if cfg.MySQLVersion != "" || srv.clusters == nil {
		return
	}
	c, ok := srv.clusters.Get(srv.clusters.Default())
	if !ok || c.Table() != nil {
		return
	}
	wctx, cancel := context.WithTimeout(ctx, greetingVersionWait)
	defer cancel()
	_, _ = c.Ready(wctx)
}

// obClientCapabilities are the capabilities obgate offers clients in
// OceanBase mode, as ODP does: no compression, no DEPRECATE_EOF (server
// sessions are opened with the client's flags, and OBServers answer
// result sets with EOF packets), session tracking and connect attributes.
const obClientCapabilities = mysqlproto.ClientLongPassword | mysqlproto.ClientFoundRows |
	mysqlproto.ClientLongFlag | mysqlproto.ClientConnectWithDB | mysqlproto.ClientNoSchema |
	mysqlproto.ClientODBC | mysqlproto.ClientLocalFiles | mysqlproto.ClientIgnoreSpace |
	mysqlproto.ClientProtocol41 | mysqlproto.ClientInteractive | mysqlproto.ClientIgnoreSIGPIPE |
	mysqlproto.ClientTransactions | mysqlproto.ClientReserved | mysqlproto.ClientSecureConnection |
	mysqlproto.ClientMultiStatements | mysqlproto.ClientMultiResults | mysqlproto.ClientPSMultiResults |
	mysqlproto.ClientPluginAuth | mysqlproto.ClientConnectAttrs | mysqlproto.ClientSessionTrack |
	mysqlproto.ClientPluginAuthLenEncData | mysqlproto.ClientCanHandleExpiredPasswords

// obHandshake logs a client in, OceanBase style: obgate's own greeting,
// the login name read for cluster and tenant, and the client's login
// forwarded to a server of the tenant (others tried on the login errors
// ODP retries). The login is kept so that later server sessions log in
// without the client.
func (o obIdentity) obHandshake(ctx context.Context, count int64, cfg *config.Config) error {
	s := o.s
	srv := s.srv
	srv.awaitGreetingVersion(ctx, cfg)
	greet := o.obGreeting(cfg)
	cpio, _, resp, err := s.greetAndRead(ctx, greet)
	if err != nil {
		return err
	}
	id := route.ParseUsername(resp.User, cfg.UsernameSeparators())
	s.caps = resp.Capability & greet.Capability
	denied := func(why string) error { return s.client.denyLogin(cpio, resp, why) }
	if id.IsProxySys() {
		s.setIdentity(resp, id)
		return s.adminLogin(cpio, greet, resp, cfg)
	}
	if refusal := srv.admission(count, cfg); refusal != nil {
		return refusal.answer(cpio)
	}
	if resp, err = nativeLogin(cpio, greet, resp); err != nil {
		return err
	}
	if id.Tenant == "" && id.Cluster == "" && cfg.ProxyTenantName != "" {
		id.Tenant, id.Cluster = cfg.ProxyTenantName, srv.clusters.Default()
	}
	if cfg.EnableFullUsername && (id.Tenant == "" || id.Cluster == "") {
		return denied("enable_full_username requires user@tenant#cluster")
	}
	if id.Tenant == "" {
		id.Tenant = topology.TenantSys
	}
	if id.Cluster == "" {
		id.Cluster = srv.clusters.Default()
	}
	if id.User == topology.UserProxyRO && id.Tenant == topology.TenantSys && !cfg.SkipProxyroCheck {
		return denied("proxyro@sys is for proxies only")
	}
	s.setIdentity(resp, id)
	cluster, ok := srv.clusters.Get(id.Cluster)
	if !ok {
		_ = cpio.WritePacketFlush(mysqlproto.NewSQLError(mysqlproto.OBClusterNotExist,
			"cluster '%s' does not exist", id.Cluster).AppendPacket(nil))
		return quit(QuitAuthFailed, fmt.Errorf("unknown cluster %q", id.Cluster))
	}
	o.cluster, o.tenant, o.clientLogin, o.scramble = cluster, id.Tenant, resp, greet.AuthData
	o.proxySessID = proxySessionID(s.client.rawConn.LocalAddr(), s.id)
	o.feedback = o.onFeedback
	s.series.setTenant(id.Cluster, id.Tenant)
	s.cfg = cfg
	okPayload, err := o.obFirstLogin(ctx)
	if err != nil {
		var se *mysqlproto.SQLError
		if errors.As(err, &se) {
			_ = cpio.WritePacketFlush(se.AppendPacket(nil))
			return quit(QuitAuthFailed, err)
		}
		if backend.IsFDExhausted(err) {
			return s.srv.noFD.atLogin(cpio, err)
		}
		_ = cpio.WritePacketFlush(mysqlproto.NewSQLError(mysqlproto.CRConnHostError,
			"no server of tenant %s in cluster %s is available: %v", id.Tenant, id.Cluster, err).AppendPacket(nil))
		return quit(QuitNoServer, err)
	}
	ok2, _ := mysqlproto.ParseOK(okPayload, mysqlproto.ClientSessionTrack|mysqlproto.ClientProtocol41)
	s.status = ok2.Status
	if resp.Database != "" {
		o.vars.SetDB(resp.Database)
		s.setDB(resp.Database)
	}
	o.vars.MarkSynced(&o.s.servers.Last().Sync)
	// The client gets a plain OK: the server's status and warnings, without
	// the OceanBase feedback variables meant for the proxy; an OceanBase
	// driver that may speak OB 2.0 learns it from ob_capability_flag.
	reply := mysqlproto.OK{Status: ok2.Status, Warnings: ok2.Warnings}
	if resp.Database != "" && s.caps.Has(mysqlproto.ClientSessionTrack) {
		reply.SessionState = mysqlproto.AppendSchemaState(nil, resp.Database)
	}
	if s.client.obCaps = clientOB20Caps(resp, cfg.EnableOBProtocolV2WithClient); s.client.obCaps != 0 {
		reply.SessionState = mysqlproto.AppendSystemVariableState(reply.SessionState,
			mysqlproto.OBCapabilityFlagVar, mysqlproto.FormatOBCapability(s.client.obCaps))
	}
	if err := cpio.WritePacketFlush(mysqlproto.AppendOK(nil, reply, s.caps)); err != nil {
		return quit(QuitClientNetwork, err)
	}
	o.publishOB()
	return nil
}

// nativeLogin returns the client's login with a mysql_native_password
// token against the greeting's scramble, which is what OBServers verify
// and what obgate replays on every server session. A client that
// answered with another plugin (MySQL 8's clients default to
// caching_sha2_password; some send mysql_clear_password, the password
// itself) is asked again with an auth switch, so that no password in
// clear is ever kept or forwarded.
func nativeLogin(cpio *mysqlproto.PacketIO, greet *mysqlproto.Handshake, resp *mysqlproto.HandshakeResponse) (*mysqlproto.HandshakeResponse, error) {
	if resp.AuthPlugin == "" || resp.AuthPlugin == mysqlproto.AuthNativePassword || !resp.Capability.Has(mysqlproto.ClientPluginAuth) {
		return resp, nil
	}
	sw := mysqlproto.AuthSwitchRequest{Plugin: mysqlproto.AuthNativePassword, Data: greet.AuthData}
	if err := cpio.WritePacketFlush(sw.Append(nil)); err != nil {
		return nil, quit(QuitClientNetwork, err)
	}
	token, err := cpio.ReadPacket()
	if err != nil {
		return nil, quit(handshakeQuitSource(err), err)
	}
	r := *resp
	r.AuthPlugin, r.AuthResponse = mysqlproto.AuthNativePassword, append([]byte(nil), token...)
	return &r, nil
}

// clientOB20Caps decides whether a client gets OB 2.0 framing (ODP's rule,
// ob20-protocol.md §11.2): the option is on, the client is an OceanBase
// driver, and it asked for OB_PROTOCOL_V2 in __proxy_capability_flag. The
// grant is what obgate supports of the request.
func clientOB20Caps(resp *mysqlproto.HandshakeResponse, enabled bool) mysqlproto.OBCapability {
	if !enabled {
		return 0
	}
	switch t, _ := resp.Attr(mysqlproto.AttrMySQLClientType); t {
	case mysqlproto.ClientTypeOBLibOBClient, mysqlproto.ClientTypeOBJDBC:
	default:
		return 0
	}
	v, _ := resp.Attr(mysqlproto.AttrProxyCapabilityFlag)
	asked, ok := mysqlproto.ParseOBCapability(v)
	if !ok || !asked.Has(mysqlproto.OBCapProtocolV2) {
		return 0
	}
	return asked & (mysqlproto.OBCapProtocolV2 | mysqlproto.OBCapProxyNewExtraInfo)
}

func (s *Session) setIdentity(resp *mysqlproto.HandshakeResponse, id route.Identity) {
	s.published.mu.Lock()
	s.identity = id
	s.published.user, s.published.db = resp.User, resp.Database
	s.series.forget()
	s.published.mu.Unlock()
}

// obFirstLogin opens the session's first server session with the client's
// own login, trying the tenant's servers from a random start and moving on
// for the login errors ODP retries elsewhere.
func (o obIdentity) obFirstLogin(ctx context.Context) ([]byte, error) {
	s := o.s
	if _, err := o.cluster.Ready(ctx); err != nil {
		return nil, err
	}
	rt, err := s.srv.router.Plan(ctx, &route.Request{Cluster: o.cluster, Tenant: o.tenant}, nil)
	if err != nil {
		return nil, err
	}
	cands := rt.Addrs
	attempts := max(int(s.cfg.ConnectObserverMaxRetries), len(cands))
	var lastErr error
	for i := range attempts {
		be, okp, err := o.openServer(ctx, cands[i%len(cands)], true)
		if err == nil {
			o.s.servers.Use(be)
			return okp, nil
		}
		lastErr = err
		var se *mysqlproto.SQLError
		if errors.As(err, &se) && !route.RetryableLoginERR(se.Code) || backend.IsFDExhausted(err) {
			return nil, err
		}
		if ctx.Err() != nil {
			break
		}
	}
	return nil, lastErr
}

// routeNeed says why a statement must stay where the last one ran.
type routeNeed uint8

const (
	needAny  routeNeed = iota
	needLast           // depends on the last server: LAST_INSERT_ID(), FOUND_ROWS()...
)

var errTxnServerLost = errors.New("the server session of the open transaction is gone")

// errPinnedServerLost reports that the server session holding state the
// statement needs (temporary tables, locks, LAST_INSERT_ID) is gone.
var errPinnedServerLost = errors.New("the server session this session depends on is gone")

// pickServer returns the server session for the next statement, as the
// router orders the candidates: the last one when the session must stay
// there (a broken one is then an error, never a silent move), else the
// first candidate with a live or new server session. Idle server sessions
// that broke are dropped on the way, so a broken idle server session never
// carries a request.
func (o *obSession) pickServer(ctx context.Context, need routeNeed) (*backend.Conn, error) {
	s := o.s
	o.expireServers()
	req := route.Request{
		Cluster: o.cluster, Tenant: o.tenant,
		InTrans: o.serverInTrans(), Pinned: o.pinned, ReadsLast: need == needLast,
		PreferLast: s.cfg.EnableCachedServer,
	}
	last := s.servers.Last()
	if last != nil {
		req.Last = last.Addr
	}
	req.Tried = s.st.tried
	req.SeenGeneration = o.healthGen
	req.StmtRoute = o.stmtRoute(s.cfg)
	readyOnly := s.drv.pace().readyOnly()
	req.NoWait = readyOnly
	rt, err := s.srv.router.Plan(ctx, &req, o.routeBuf)
	o.routeBuf = rt.Addrs
	if err != nil {
		return nil, err // with NoWait, planned again and answered where it may wait (refuse)
	}
	o.healthGen = rt.Generation
	s.st.routeBound = rt.Bound
	if rt.Bound {
		if readyOnly && !o.readyNow(last) {
			return nil, errWouldWait
		}
		if last.Alive() {
			o.notePlan(&rt, last.Addr)
			return last, nil
		}
		o.drop(last)
		if req.InTrans {
			return nil, errTxnServerLost
		}
		// Its temporary tables, locks or LAST_INSERT_ID are gone: say so
		// once, then the session goes on without them.
		o.pinned, o.trxSpecified = false, false
		return nil, errPinnedServerLost
	}
	first := o.notReadyFirst
	o.notReadyFirst = ""
	if !readyOnly && first != "" {
		moveToFront(rt.Addrs, first)
	}
	var lastErr error
	for _, addr := range rt.Addrs {
		if readyOnly {
			// The first candidate, when its server session is open and
			// ready, else where it may wait (a dial, a sync, a broken
			// server session), starting with this candidate.
			be := o.s.servers.On(addr)
			if !o.readyNow(be) {
				o.notReadyFirst = addr
				return nil, errWouldWait
			}
			o.notePlan(&rt, addr)
			return be, nil
		}
		if be := o.s.servers.On(addr); be != nil {
			if be.Alive() {
				o.notePlan(&rt, addr)
				return be, nil
			}
			s.diagServerLost(be, nil)
			o.drop(be)
		}
		be, _, err := o.openServer(ctx, addr, false)
		if err == nil {
			o.notePlan(&rt, addr)
			return be, nil
		}
		lastErr = err
	}
	return nil, fmt.Errorf("%w: %v", errNoServer, lastErr)
}

// readyNow reports whether be can take the statement with nothing
// before it (a ready-only plan): it is open and alive, on netpoll in a
// framing the poller drives, and has the client's whole session state,
// with no BEGIN held for it (syncServer would send nothing).
func (o *obSession) readyNow(be *backend.Conn) bool {
	if be == nil || o.heldBegin != nil || !o.vars.InSync(&be.Sync) || be.PollIO() == nil || !be.Alive() {
		return false
	}
	if np, ok := be.NetConn.(*backend.PolledConn); ok {
		np.WatchInput(&o.s.drv)
	}
	return true
}

// drop closes a server session and forgets it.
func (o *obSession) drop(be *backend.Conn) {
	s := o.s
	s.servers.Drop(be)
	s.stmts.LeftHome(be)
}

// dropBroken drops a server session found broken by a command that
// does not route (COM_STMT_CLOSE, KILL of the session's own server). When
// it held the client's open transaction, the transaction is gone with
// it: the session enters the broken-transaction state, so that the
// client hears it from its next statement, which must not run elsewhere.
func (o *obSession) dropBroken(be *backend.Conn) {
	s := o.s
	lostTxn := be == o.s.servers.Last() && o.serverInTrans()
	s.diagServerLost(be, nil)
	o.drop(be)
	if lostTxn {
		s.markTxnBroken()
	}
}

// expireServers closes server sessions idle for longer than
// server_idle_timeout, except the last one used.
func (o *obSession) expireServers() {
	s := o.s
	if s.servers.Len() <= 1 {
		return
	}
	limit := s.cfg.ServerIdleTimeout
	now := time.Now()
	// Backwards: a drop shifts only the sessions after the one dropped.
	all := s.servers.All()
	for i := len(all) - 1; i >= 0; i-- {
		if be := all[i]; be != s.servers.Last() && now.Sub(be.LastUsedAt()) > limit {
			o.drop(be)
		}
	}
}

// serverInTrans reports whether the server side is inside a transaction.
func (o *obSession) serverInTrans() bool {
	last := o.s.servers.Last()
	return last != nil && last.Status.Has(mysqlproto.StatusInTrans)
}

// syncServer brings be up to date with the client's session state before
// a statement runs on it: the multi-statement option (COM_SET_OPTION), the
// database (COM_INIT_DB), the changed variables (one SET), and a held
// BEGIN. A server ERR on any step is returned as backend.ErrServerState wrapping
// the SQL error.
func (o *obSession) syncServer(be *backend.Conn) error {
	opt := o.s.st.commandOptions()
	if err := be.SyncTo(&o.vars, opt); err != nil {
		return err
	}
	if o.heldBegin != nil {
		payload := append([]byte{byte(mysqlproto.ComQuery)}, o.heldBegin...)
		if err := be.RoundTrip(payload, opt); err != nil {
			return err
		}
		o.begunWith, o.heldBegin = o.heldBegin, nil
	}
	return nil
}

// proxySessionID is ODP's proxy session id: listen address and a sequence.
func proxySessionID(local net.Addr, id uint32) uint64 {
	ta, ok := local.(*net.TCPAddr)
	if !ok {
		return uint64(id)
	}
	ip4 := ta.IP.To4()
	var ip uint64
	if ip4 != nil {
		ip = uint64(ip4[0])<<24 | uint64(ip4[1])<<16 | uint64(ip4[2])<<8 | uint64(ip4[3])
	}
	return ip<<32 | uint64(ta.Port&0xffff)<<16 | uint64(id&0xffff)
}

// moveToFront moves addr, when addrs holds it, to the front, keeping the
// order of the others.
func moveToFront(addrs []string, addr string) {
	for i, a := range addrs {
		if a == addr {
			copy(addrs[1:i+1], addrs[:i])
			addrs[0] = addr
			return
		}
	}
}
