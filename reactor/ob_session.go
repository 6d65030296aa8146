package reactor

import (
	"context"
	"errors"
	"fmt"
	"net"
	"slices"
	"time"

	"obgate/config"
	"obgate/mysqlproto"
	"obgate/route"
)

// obSession is the OceanBase-mode part of a client session: the cluster and
// tenant it logged into, the login kept for new server sessions, the
// server sessions it holds (at most one per server), and the session state
// it established on them.
//
// Owned by the goroutine running the session's command.
type obSession struct {
	cluster     *route.Cluster
	tenant      string
	login       *mysqlproto.HandshakeResponse // the client's login, replayed on new server sessions
	scramble    []byte                        // the scramble obgate showed the client
	proxySessID uint64

	servers []*serverConn // open server sessions
	last    *serverConn   // the one the previous statement used

	vars      sessionVars
	heldBegin []byte // BEGIN / START TRANSACTION held until the first real statement
	// begunWith is the held BEGIN sent with the current statement, given
	// back to heldBegin when the statement goes to another server.
	begunWith []byte
	// healthGen is the availability generation of the last plan.
	healthGen    uint64
	pinned       bool                     // temporary tables, user locks, SET TRANSACTION: stay on last
	trxSpecified bool                     // the server said SET TRANSACTION ran
	feedback     func(name, value []byte) // s.onFeedback, bound once
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
func (s *Session) obGreeting(cfg *config.Config) *mysqlproto.Handshake {
	g := ownGreeting(cfg, s.srv.GreetingVersion(cfg), obClientCapabilities)
	g.ConnectionID = s.id
	if s.srv.tlsConfig != nil {
		g.Capability |= mysqlproto.ClientSSL
	}
	return g
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
func (s *Session) obHandshake(ctx context.Context, count int64, cfg *config.Config) error {
	srv := s.srv
	greet := s.obGreeting(cfg)
	cpio, _, resp, err := s.greetAndRead(ctx, greet)
	if err != nil {
		return err
	}
	id := route.ParseUsername(resp.User, cfg.UsernameSeparators())
	s.caps = resp.Capability & greet.Capability
	denied := func(why string) error { return s.denyLogin(cpio, resp, why) }
	if id.IsProxySys() {
		s.setIdentity(resp, id)
		return s.adminLogin(cpio, greet, resp, cfg)
	}
	if srv.draining.Load() {
		_ = cpio.WritePacketFlush(mysqlproto.NewSQLError(mysqlproto.ERServerShutdown, "obgate is shutting down").AppendPacket(nil))
		return quit(QuitShutdown, nil)
	}
	if id.Tenant == "" && id.Cluster == "" && cfg.ProxyTenantName != "" {
		id.Tenant, id.Cluster = cfg.ProxyTenantName, srv.clusters.Default()
	}
	if cfg.EnableFullUsername && (id.Tenant == "" || id.Cluster == "") {
		return denied("enable_full_username requires user@tenant#cluster")
	}
	if id.Tenant == "" {
		id.Tenant = route.TenantSys
	}
	if id.Cluster == "" {
		id.Cluster = srv.clusters.Default()
	}
	if id.User == route.UserProxyRO && id.Tenant == route.TenantSys && !cfg.SkipProxyroCheck {
		return denied("proxyro@sys is for proxies only")
	}
	s.setIdentity(resp, id)
	if cfg.ClientMaxConnections > 0 && count > cfg.ClientMaxConnections {
		_ = cpio.WritePacketFlush(mysqlproto.NewSQLError(mysqlproto.ERTooManyUserConnections, "Too many sessions").AppendPacket(nil))
		return quit(QuitLimit, fmt.Errorf("%d client connections, client_max_connections is %d", count, cfg.ClientMaxConnections))
	}
	cluster, ok := srv.clusters.Get(id.Cluster)
	if !ok {
		_ = cpio.WritePacketFlush(mysqlproto.NewSQLError(mysqlproto.OBClusterNotExist,
			"cluster '%s' does not exist", id.Cluster).AppendPacket(nil))
		return quit(QuitAuthFailed, fmt.Errorf("unknown cluster %q", id.Cluster))
	}
	s.side = obSide{s}
	s.ob = &obSession{
		cluster: cluster, tenant: id.Tenant, login: resp, scramble: greet.AuthData,
		proxySessID: proxySessionID(s.rawConn.LocalAddr(), s.id),
	}
	s.ob.feedback = s.onFeedback
	s.cfg = cfg
	okPayload, err := s.obFirstLogin(ctx)
	if err != nil {
		var se *mysqlproto.SQLError
		if errors.As(err, &se) {
			_ = cpio.WritePacketFlush(se.AppendPacket(nil))
			return quit(QuitAuthFailed, err)
		}
		if isFDExhausted(err) {
			return s.refuseNoFD(cpio, err)
		}
		_ = cpio.WritePacketFlush(mysqlproto.NewSQLError(mysqlproto.CRConnHostError,
			"no server of tenant %s in cluster %s is available: %v", id.Tenant, id.Cluster, err).AppendPacket(nil))
		return quit(QuitNoServer, err)
	}
	ok2, _ := mysqlproto.ParseOK(okPayload, mysqlproto.ClientSessionTrack|mysqlproto.ClientProtocol41)
	s.status = ok2.Status
	if resp.Database != "" {
		s.ob.vars.setDB(resp.Database)
		s.setDB(resp.Database)
	}
	s.ob.vars.markSynced(&s.ob.last.sync)
	// The client gets a plain OK: the server's status and warnings, without
	// the OceanBase feedback variables meant for the proxy; an OceanBase
	// driver that may speak OB 2.0 learns it from ob_capability_flag.
	reply := mysqlproto.OK{Status: ok2.Status, Warnings: ok2.Warnings}
	if resp.Database != "" && s.caps.Has(mysqlproto.ClientSessionTrack) {
		reply.SessionState = mysqlproto.AppendSchemaState(nil, resp.Database)
	}
	if s.clientOBCaps = clientOB20Caps(resp, cfg.EnableOBProtocolV2WithClient); s.clientOBCaps != 0 {
		reply.SessionState = mysqlproto.AppendSystemVariableState(reply.SessionState,
			mysqlproto.OBCapabilityFlagVar, mysqlproto.FormatOBCapability(s.clientOBCaps))
	}
	if err := cpio.WritePacketFlush(mysqlproto.AppendOK(nil, reply, s.caps)); err != nil {
		return quit(QuitClientNetwork, err)
	}
	s.publishOB()
	return nil
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
	s.mu.Lock()
	s.identity = id
	s.user, s.db = resp.User, resp.Database
	s.mu.Unlock()
}

// obFirstLogin opens the session's first server session with the client's
// own login, trying the tenant's servers from a random start and moving on
// for the login errors ODP retries elsewhere.
func (s *Session) obFirstLogin(ctx context.Context) ([]byte, error) {
	ob := s.ob
	if _, err := ob.cluster.Ready(ctx); err != nil {
		return nil, err
	}
	rt, err := s.srv.router.Plan(ctx, &route.Request{Cluster: ob.cluster, Tenant: ob.tenant}, nil)
	if err != nil {
		return nil, err
	}
	cands := rt.Addrs
	attempts := max(int(s.cfg.ConnectObserverMaxRetries), len(cands))
	var lastErr error
	for i := range attempts {
		be, okp, err := s.openServer(ctx, cands[i%len(cands)], true)
		if err == nil {
			s.useServer(be)
			return okp, nil
		}
		lastErr = err
		var se *mysqlproto.SQLError
		if errors.As(err, &se) && !route.RetryableLoginERR(se.Code) || isFDExhausted(err) {
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
func (s *Session) pickServer(ctx context.Context, need routeNeed) (*serverConn, error) {
	ob := s.ob
	s.expireServers()
	req := route.Request{
		Cluster: ob.cluster, Tenant: ob.tenant,
		InTrans: s.serverInTrans(), Pinned: ob.pinned, ReadsLast: need == needLast,
		PreferLast: s.cfg.EnableCachedServer,
	}
	if ob.last != nil {
		req.Last = ob.last.addr
	}
	req.Tried = s.st.tried
	req.SeenGeneration = ob.healthGen
	req.StmtRoute = s.stmtRoute(s.cfg)
	rt, err := s.srv.router.Plan(ctx, &req, ob.routeBuf)
	ob.routeBuf = rt.Addrs
	if err != nil {
		return nil, err
	}
	ob.healthGen = rt.Generation
	s.st.routeBound = rt.Bound
	if rt.Bound {
		if ob.last.alive() {
			s.notePlan(&rt, ob.last.addr)
			return ob.last, nil
		}
		s.dropServer(ob.last)
		if req.InTrans {
			return nil, errTxnServerLost
		}
		// Its temporary tables, locks or LAST_INSERT_ID are gone: say so
		// once, then the session goes on without them.
		ob.pinned, ob.trxSpecified = false, false
		return nil, errPinnedServerLost
	}
	var lastErr error
	for _, addr := range rt.Addrs {
		if be := s.findServer(addr); be != nil {
			if be.alive() {
				s.notePlan(&rt, addr)
				return be, nil
			}
			s.dropServer(be)
		}
		be, _, err := s.openServer(ctx, addr, false)
		if err == nil {
			s.notePlan(&rt, addr)
			return be, nil
		}
		lastErr = err
	}
	return nil, fmt.Errorf("%w: %v", errNoServer, lastErr)
}

func (s *Session) findServer(addr string) *serverConn {
	for _, be := range s.ob.servers {
		if be.addr == addr {
			return be
		}
	}
	return nil
}

// dropServer closes a server session and forgets it.
func (s *Session) dropServer(be *serverConn) {
	ob := s.ob
	be.close()
	if i := slices.Index(ob.servers, be); i >= 0 {
		ob.servers = slices.Delete(ob.servers, i, i+1)
	}
	if ob.last == be {
		ob.last = nil
	}
	s.stmts.leftHome(be)
}

// dropBrokenServer drops a server session found broken by a command that
// does not route (COM_STMT_CLOSE, KILL of the session's own server). When
// it held the client's open transaction, the transaction is gone with
// it: the session enters the broken-transaction state, so that the
// client hears it from its next statement, which must not run elsewhere.
func (s *Session) dropBrokenServer(be *serverConn) {
	lostTxn := be == s.ob.last && s.serverInTrans()
	s.dropServer(be)
	if lostTxn {
		s.markTxnBroken()
	}
}

// expireServers closes server sessions idle for longer than
// server_idle_timeout, except the last one used.
func (s *Session) expireServers() {
	ob := s.ob
	if len(ob.servers) <= 1 {
		return
	}
	limit := s.cfg.ServerIdleTimeout
	now := time.Now()
	for i := 0; i < len(ob.servers); i++ {
		be := ob.servers[i]
		if be != ob.last && now.Sub(be.lastUsedAt()) > limit {
			s.dropServer(be)
			i--
		}
	}
}

// useServer makes be the session's current server session.
func (s *Session) useServer(be *serverConn) {
	ob := s.ob
	be.touch()
	if ob.last == be {
		return
	}
	if ob.last != nil {
		ob.last.current.Store(false)
	}
	be.current.Store(true)
	ob.last = be
	s.backend = be
	s.sharedBackend.Store(be)
	s.mu.Lock()
	s.backendAddr, s.backendID = be.addr, be.threadID
	s.mu.Unlock()
}

// serverInTrans reports whether the server side is inside a transaction.
func (s *Session) serverInTrans() bool {
	return s.ob.last != nil && s.ob.last.status.Has(mysqlproto.StatusInTrans)
}

// syncServer brings be up to date with the client's session state before
// a statement runs on it: the multi-statement option (COM_SET_OPTION), the
// database (COM_INIT_DB), the changed variables (one SET), and a held
// BEGIN. A server ERR on any step is returned as errServerState wrapping
// the SQL error.
func (s *Session) syncServer(be *serverConn) error {
	ob := s.ob
	if !ob.vars.inSync(&be.sync) {
		if lacking, on := ob.vars.multiStatementsLacking(&be.sync); lacking {
			if err := s.internalRoundTrip(be, setOptionPayload(on)); err != nil {
				return err
			}
		}
		if be.sync.dbVer != ob.vars.dbVer && ob.vars.db != "" {
			payload := append([]byte{byte(mysqlproto.ComInitDB)}, ob.vars.db...)
			if err := s.internalRoundTrip(be, payload); err != nil {
				return err
			}
		}
		if sql := ob.vars.resetSQL(&be.sync); sql != nil {
			payload := append([]byte{byte(mysqlproto.ComQuery)}, sql...)
			if err := s.internalRoundTrip(be, payload); err != nil {
				return err
			}
		}
		ob.vars.markSynced(&be.sync)
	}
	if ob.heldBegin != nil {
		payload := append([]byte{byte(mysqlproto.ComQuery)}, ob.heldBegin...)
		if err := s.internalRoundTrip(be, payload); err != nil {
			return err
		}
		ob.begunWith, ob.heldBegin = ob.heldBegin, nil
	}
	return nil
}

// internalRoundTrip runs one of obgate's own commands on be and reads its
// answer, which must be a single OK (or ERR). Its session-state report is
// learned like a client statement's.
func (s *Session) internalRoundTrip(be *serverConn, payload []byte) error {
	_, err := s.internalCommand(be, payload)
	return err
}

// internalPrepare prepares a statement on be for obgate itself and
// returns the server's statement id and counts.
func (s *Session) internalPrepare(be *serverConn, payload []byte) (id uint32, params, columns uint16, err error) {
	sc, err := s.internalCommand(be, payload)
	if err != nil {
		return 0, 0, 0, err
	}
	id, columns, params = sc.Prepared()
	return id, params, columns, nil
}

// internalCommand sends one of obgate's own commands to be and reads the
// whole answer, which may not carry rows (OK, ERR, or a prepare response).
// A server ERR comes back as errServerState wrapping the SQL error.
func (s *Session) internalCommand(be *serverConn, payload []byte) (*mysqlproto.ResponseScanner, error) {
	pkt, _ := mysqlproto.AppendPacket(make([]byte, 0, len(payload)+mysqlproto.HeaderLen), 0, payload)
	if err := be.writeRequest(pkt, true, true); err != nil {
		return nil, err
	}
	sc := new(mysqlproto.ResponseScanner)
	sc.Reset(mysqlproto.Command(payload[0]), s.caps, be.status)
	_ = be.conn.SetReadDeadline(time.Now().Add(s.cfg.ShortAsyncTaskTimeout))
	// The deadline is this command's only: mysql mode sets none for the
	// client's statements, which would otherwise inherit it.
	defer func() { _ = be.conn.SetReadDeadline(time.Time{}) }()
	buf := getChunk(4096)
	defer putChunk(buf)
	end, dec := 0, 0
	for {
		n, ev := sc.Scan(buf[dec:end])
		dec += n
		switch ev {
		case mysqlproto.ScanTerminator:
			p := sc.Packet()
			if sc.IsErr() {
				e, _ := mysqlproto.ParseERR(p)
				return nil, fmt.Errorf("%w: %w", errServerState, mysqlproto.SQLErrorFromERR(e))
			}
			be.status = sc.Status()
			if p[0] == mysqlproto.OKHeader {
				if ok, good := mysqlproto.ParseOK(p, mysqlproto.ClientSessionTrack); good && len(ok.SessionState) > 0 {
					s.side.learnState(ok.SessionState, ok.Status)
				}
			}
			continue
		case mysqlproto.ScanPrepared:
			continue
		case mysqlproto.ScanError:
			return nil, sc.Err()
		case mysqlproto.ScanNeedMore:
		default:
			return nil, fmt.Errorf("unexpected response to %s", mysqlproto.Command(payload[0]))
		}
		if sc.Done() {
			if dec != end {
				return nil, errors.New("server sent bytes after its response")
			}
			if err := be.finishResponse(); err != nil {
				return nil, err
			}
			return sc, nil
		}
		end = copy(buf, buf[dec:end])
		dec = 0
		if want := sc.Want(); want > len(buf) {
			nb := getChunk(want)
			copy(nb, buf[:end])
			putChunk(buf)
			buf = nb
		}
		k, err := be.read(buf[end:])
		if k == 0 && err != nil {
			return nil, err
		}
		end += k
	}
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

// closeServers closes every server session of an OceanBase-mode session.
func (s *Session) closeServers() {
	if s.ob == nil {
		return
	}
	for _, be := range s.ob.servers {
		be.close()
	}
	s.ob.servers = nil
	s.ob.last = nil
}
