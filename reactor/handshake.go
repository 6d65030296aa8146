package reactor

import (
	"context"
	"crypto/tls"
	"encoding/hex"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"time"

	"obgate/config"
	"obgate/mysqlproto"
	"obgate/route"
)

// fixedScramble is ODP's default handshake scramble (enable_proxy_scramble
// off): OBServer verifies proxied logins against it.
var fixedScramble = []byte("aaaaaaaabbbbbbbbbbbb")

// maxLoginPacket bounds packets read from a client before it logged in.
const maxLoginPacket = 1 << 20

// handleConn runs a new connection's login on its own goroutine, then
// hands the session to its transport.
func (srv *Server) handleConn(conn net.Conn) {
	defer srv.wg.Done()
	s := &Session{srv: srv, id: srv.newSessionID(), connectedAt: time.Now(), rawConn: conn}
	s.setSide(srv.cfg.Load())
	s.clientAddr = conn.RemoteAddr().String()
	s.lastActive.Store(s.connectedAt.UnixNano())
	s.curCmd.Store(-1)
	s.clientCloser.Store(&closerRef{conn})
	srv.active.Add(1)
	srv.sessions.Store(s.id, s)
	count := srv.clients.Add(1)
	defer s.containPanic(panicLogin)
	if tc, ok := conn.(*net.TCPConn); ok {
		cfg := srv.cfg.Load()
		_ = tc.SetKeepAliveConfig(keepAlive(cfg.ClientTCPKeepIdle, cfg.ClientTCPKeepIntvl, cfg.ClientTCPKeepCnt))
	}
	err := s.handshake(count)
	if err != nil {
		srv.metrics.newClientFail.Inc()
		s.logQuit(err)
		s.teardown()
		return
	}
	srv.metrics.newClientOK.Inc()
	s.serveTransport()
}

// setSide makes the session's server side for the routing mode in effect.
// It runs before any other goroutine can see the session, and the side
// never changes, so any goroutine may read s.side, s.ob and s.my.
func (s *Session) setSide(cfg *config.Config) {
	if cfg.ServerRoutingMode == "mysql" {
		s.my = &mysqlSide{s: s}
		s.side = s.my
		return
	}
	s.ob = &obSession{s: s}
	s.side = s.ob
}

// handshake logs the client in, within client_handshake_timeout, the way
// the session's routing mode does it (serverSide.login).
func (s *Session) handshake(count int64) error {
	cfg := s.srv.cfg.Load()
	deadline := time.Now().Add(cfg.ClientHandshakeTimeout)
	_ = s.rawConn.SetDeadline(deadline)
	ctx, cancel := context.WithDeadline(context.Background(), deadline)
	defer cancel()
	if err := s.side.login(ctx, count, cfg, deadline); err != nil {
		return err
	}
	_ = s.rawConn.SetDeadline(time.Time{})
	return nil
}

// mysqlHandshake logs a client in, mysql routing mode's way: it relays the
// server's greeting (with obgate's connection id) so that the client's
// login reaches the server unchanged; administrator logins and refused
// connections get obgate's own greeting or answer.
func (s *Session) mysqlHandshake(ctx context.Context, count int64, cfg *config.Config, deadline time.Time) error {
	srv := s.srv
	overLimit := cfg.ClientMaxConnections > 0 && count > cfg.ClientMaxConnections
	var (
		be    *serverConn
		sh    *mysqlproto.Handshake
		spio  *mysqlproto.PacketIO
		dberr error
	)
	if !overLimit && !srv.draining.Load() {
		be, sh, spio, dberr = srv.dialFirst(ctx, serverAddrs(cfg))
		if be != nil {
			// Registered before it is published: a KILL that closes it
			// (from another goroutine, through sharedBackend) then finds
			// it in the registry and removes it.
			srv.servers.add(be, s)
			s.sharedBackend.Store(be)
			_ = be.conn.SetDeadline(deadline)
		}
	}
	closeBackend := func() {
		if be != nil {
			be.close()
			s.sharedBackend.Store(nil)
		}
	}
	greet := s.greeting(sh, cfg)
	s.my.move.scramble = greet.AuthData
	cpio, first, resp, err := s.greetAndRead(ctx, greet)
	if err != nil {
		closeBackend()
		return err
	}
	// Under mu: other sessions read these through Info while this one is
	// still logging in (SHOW PROXYSESSION, KILL).
	s.mu.Lock()
	s.identity = route.ParseUsername(resp.User, cfg.UsernameSeparators())
	s.user, s.db = resp.User, resp.Database
	s.mu.Unlock()
	s.caps = resp.Capability & greet.Capability

	if s.identity.IsProxySys() {
		closeBackend()
		return s.adminLogin(cpio, greet, resp, cfg)
	}
	if overLimit {
		_ = cpio.WritePacketFlush(mysqlproto.NewSQLError(mysqlproto.ERTooManyUserConnections, "Too many sessions").AppendPacket(nil))
		return quit(QuitLimit, fmt.Errorf("%d client connections, client_max_connections is %d", count, cfg.ClientMaxConnections))
	}
	if be == nil {
		if isFDExhausted(dberr) {
			return s.refuseNoFD(cpio, dberr)
		}
		reason := "obgate is shutting down"
		if !srv.draining.Load() {
			reason = fmt.Sprintf("no server available: %v", dberr)
		}
		_ = cpio.WritePacketFlush(mysqlproto.NewSQLError(mysqlproto.CRConnHostError, "%s", reason).AppendPacket(nil))
		return quit(QuitNoServer, dberr)
	}
	// Before the login's OK reaches the client: from then on the client
	// may look itself up (SHOW PROXYSESSION) or be the target of a KILL.
	s.mu.Lock()
	s.backendAddr, s.backendID = be.addr, be.threadID
	s.mu.Unlock()
	if err := s.relayLogin(cpio, spio, be, first, resp); err != nil {
		closeBackend()
		return err
	}
	_ = be.conn.SetDeadline(time.Time{})
	s.backend = be
	return nil
}

// greetAndRead sends the client obgate's greeting and reads its login: an
// SSLRequest first upgrades the connection to TLS (the session's raw
// connection becomes the TLS one). It returns the packet I/O to go on with,
// the raw response (borrowed from cpio) and the parsed response.
func (s *Session) greetAndRead(ctx context.Context, greet *mysqlproto.Handshake) (*mysqlproto.PacketIO, []byte, *mysqlproto.HandshakeResponse, error) {
	conn := s.rawConn
	cpio := mysqlproto.NewPacketIO(conn, conn)
	cpio.SetMaxPacket(maxLoginPacket)
	if err := cpio.WritePacketFlush(greet.Append(nil)); err != nil {
		return nil, nil, nil, quit(QuitClientNetwork, err)
	}
	first, err := cpio.ReadPacket()
	if err != nil {
		return nil, nil, nil, quit(handshakeQuitSource(err), err)
	}
	if mysqlproto.IsSSLRequest(first) {
		if s.srv.tlsConfig == nil {
			return nil, nil, nil, quit(QuitClientProto, errors.New("client asked for TLS, which is not enabled"))
		}
		tc := tls.Server(conn, s.srv.tlsConfig)
		if err := tc.HandshakeContext(ctx); err != nil {
			return nil, nil, nil, quit(QuitClientNetwork, fmt.Errorf("TLS handshake: %w", err))
		}
		seq := cpio.Sequence()
		s.rawConn = tc
		s.clientCloser.Store(&closerRef{tc})
		cpio = mysqlproto.NewPacketIO(tc, tc)
		cpio.SetMaxPacket(maxLoginPacket)
		cpio.SetSequence(seq)
		if first, err = cpio.ReadPacket(); err != nil {
			return nil, nil, nil, quit(handshakeQuitSource(err), err)
		}
	}
	resp, err := mysqlproto.ParseHandshakeResponse(first)
	if err != nil {
		_ = cpio.WritePacketFlush(mysqlproto.NewSQLError(mysqlproto.ERHandshakeError, "Bad handshake").AppendPacket(nil))
		return nil, nil, nil, quit(QuitClientProto, err)
	}
	return cpio, first, resp, nil
}

// greeting builds the handshake obgate sends the client: the server's own
// greeting with obgate's connection id and capabilities, or, when no
// server is involved, obgate's.
func (s *Session) greeting(sh *mysqlproto.Handshake, cfg *config.Config) *mysqlproto.Handshake {
	var g mysqlproto.Handshake
	if sh != nil {
		g = *sh
		// Not MariaDB's extended type info: it adds a field to column
		// definitions, which obgate's own result sets (internal commands)
		// do not carry.
		g.Capability &= mysqlproto.ProxyCapabilities &^ mysqlproto.MariaDBClientExtendedTypeInfo
	} else {
		g = *ownGreeting(cfg, s.srv.GreetingVersion(cfg), mysqlproto.ProxyCapabilities&^(mysqlproto.MariaDBClientProgress|mysqlproto.MariaDBClientExtendedTypeInfo))
	}
	g.ConnectionID = s.id
	g.Capability &^= mysqlproto.ClientSSL
	if s.srv.tlsConfig != nil {
		g.Capability |= mysqlproto.ClientSSL
	}
	return &g
}

// ownGreeting is a handshake of obgate's own (no server behind it):
// version version (see GreetingVersion), native password auth, ODP's fixed
// scramble unless enable_proxy_scramble asks for one per session.
func ownGreeting(cfg *config.Config, version string, caps mysqlproto.Capability) *mysqlproto.Handshake {
	g := &mysqlproto.Handshake{
		ServerVersion: version,
		Capability:    caps,
		Charset:       byte(mysqlproto.CharsetUTF8MB4),
		Status:        mysqlproto.StatusAutocommit,
		AuthPlugin:    mysqlproto.AuthNativePassword,
		AuthData:      fixedScramble,
	}
	if cfg.EnableProxyScramble {
		g.AuthData = mysqlproto.NewScramble()
	}
	return g
}

// fallbackServerVersion is the version obgate greets with when
// mysql_version is empty and no server's version is known yet: a MySQL
// 5.7 that drivers treat as one (MariaDB Connector/J sends
// COM_RESET_CONNECTION only to servers it takes for MySQL 5.7.3 or later).
const fallbackServerVersion = "5.7.25"

// GreetingVersion is the server version obgate's own handshake carries:
// mysql_version when it is set; otherwise, as a client would see the
// servers themselves, the version the default cluster's servers greet
// with (a client names its cluster only after the greeting), falling back
// to fallbackServerVersion. Any goroutine may call it.
func (srv *Server) GreetingVersion(cfg *config.Config) string {
	if cfg.MySQLVersion != "" {
		return cfg.MySQLVersion
	}
	if srv.clusters != nil {
		if c, ok := srv.clusters.Get(srv.clusters.Default()); ok {
			if v := c.ServerVersion(); v != "" {
				return v
			}
		}
	}
	return fallbackServerVersion
}

// relayLogin forwards the client's login to the server and relays the
// auth exchange until the server accepts or refuses it. Each side keeps
// its own sequence ids (they differ by one when the client used TLS).
func (s *Session) relayLogin(cpio, spio *mysqlproto.PacketIO, be *serverConn, first []byte, resp *mysqlproto.HandshakeResponse) error {
	serverCaps := resp.Capability&mysqlproto.ProxyCapabilities | resp.Capability&mysqlproto.ClientMySQL
	if s.identity.User != resp.User {
		// A MySQL server knows nothing of tenants and clusters: strip them so
		// that the same login name works in both routing modes. The auth
		// response does not depend on the name, so it stays valid.
		r := *resp
		r.User = s.identity.User
		first = r.Append(nil)
	}
	mysqlproto.PatchResponseCapability(first, serverCaps)
	if err := spio.WritePacketFlush(first); err != nil {
		return quit(QuitServerNetwork, err)
	}
	for round := range 16 {
		p, err := spio.ReadPacket()
		if err != nil {
			_ = cpio.WritePacketFlush(lostServer(be.addr).AppendPacket(nil))
			return quit(QuitServerNetwork, err)
		}
		if len(p) == 0 {
			return quit(QuitServerProto, mysqlproto.ErrMalformed)
		}
		if err := cpio.WritePacketFlush(p); err != nil {
			return quit(QuitClientNetwork, err)
		}
		switch p[0] {
		case mysqlproto.OKHeader:
			ok, _ := mysqlproto.ParseOK(p, s.caps)
			s.status = ok.Status
			if round == 0 {
				// Accepted at once: the client's token answered the
				// greeting's scramble (no auth switch).
				s.my.keepMoveLogin(resp, serverCaps)
			}
			return nil
		case mysqlproto.ERRHeader:
			e, _ := mysqlproto.ParseERR(p)
			return quit(QuitAuthFailed, mysqlproto.SQLErrorFromERR(e))
		case mysqlproto.AuthMoreDataHeader:
			if len(p) == 2 && p[1] == mysqlproto.CachingSha2FastAuthOK {
				continue // the server sends OK next
			}
		}
		cp, err := cpio.ReadPacket()
		if err != nil {
			return quit(handshakeQuitSource(err), err)
		}
		if err := spio.WritePacketFlush(cp); err != nil {
			return quit(QuitServerNetwork, err)
		}
	}
	return quit(QuitServerProto, errors.New("authentication exchange did not finish"))
}

// adminLogin authenticates root@proxysys (or inspector@proxysys) against
// obproxy_sys_password (inspector_password): SHA1 hex of the password,
// checked as mysql_native_password against the scramble obgate sent.
func (s *Session) adminLogin(cpio *mysqlproto.PacketIO, greet *mysqlproto.Handshake, resp *mysqlproto.HandshakeResponse, cfg *config.Config) error {
	denied := func(why string) error { return s.denyLogin(cpio, resp, why) }
	var stored string
	switch s.identity.User {
	case route.UserRoot:
		stored = cfg.ObproxySysPassword
	case route.UserInspector:
		stored = cfg.InspectorPassword
	default:
		return denied("unknown proxysys user")
	}
	if !cfg.SkipProxySysPrivateCheck && !isPrivateAddr(s.clientAddr) {
		return denied("proxysys login from a public address")
	}
	token := resp.AuthResponse
	if resp.AuthPlugin != "" && resp.AuthPlugin != mysqlproto.AuthNativePassword {
		sw := mysqlproto.AuthSwitchRequest{Plugin: mysqlproto.AuthNativePassword, Data: greet.AuthData}
		if err := cpio.WritePacketFlush(sw.Append(nil)); err != nil {
			return quit(QuitClientNetwork, err)
		}
		p, err := cpio.ReadPacket()
		if err != nil {
			return quit(handshakeQuitSource(err), err)
		}
		token = p
	}
	stage1, err := hex.DecodeString(stored)
	if err != nil {
		return denied("stored password is not SHA1 hex")
	}
	if !mysqlproto.VerifyNativeStage1(greet.AuthData, token, stage1) {
		return denied("wrong password")
	}
	s.mu.Lock() // Info and KILL from other sessions read it
	s.admin = true
	s.mu.Unlock()
	s.status = mysqlproto.StatusAutocommit
	ok := mysqlproto.AppendOK(nil, mysqlproto.OK{Status: s.status}, s.caps)
	if err := cpio.WritePacketFlush(ok); err != nil {
		return quit(QuitClientNetwork, err)
	}
	_ = s.rawConn.SetDeadline(time.Time{})
	return nil
}

// denyLogin refuses a login as MySQL does (ERR 1045, then close); why is
// for the log only.
func (s *Session) denyLogin(cpio *mysqlproto.PacketIO, resp *mysqlproto.HandshakeResponse, why string) error {
	msg := fmt.Sprintf("Access denied for user '%s'@'%s' (using password: %s)", resp.User, hostOnly(s.clientAddr), yesNo(len(resp.AuthResponse) > 0))
	_ = cpio.WritePacketFlush(mysqlproto.NewSQLError(mysqlproto.ERAccessDenied, "%s", msg).AppendPacket(nil))
	return quit(QuitAuthFailed, errors.New(why))
}

// serverAddrs lists the servers of mysql routing mode: rootservice_list
// (-r), else test_server_addr.
func serverAddrs(cfg *config.Config) []string {
	if addrs := cfg.RootserviceAddrs(); len(addrs) > 0 {
		return addrs
	}
	return cfg.TestServerAddrs()
}

// lostServer is the error a client gets when its server connection broke
// before any byte of the answer reached it.
func lostServer(addr string) *mysqlproto.SQLError {
	return mysqlproto.NewSQLError(mysqlproto.CRServerLost, "Lost connection to server at '%s'", addr)
}

func handshakeQuitSource(err error) QuitSource {
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		return QuitTimeout
	}
	if isDisconnect(err) {
		return QuitClientNetwork
	}
	return QuitClientProto
}

// isPrivateAddr reports whether host:port is loopback or in a private range.
func isPrivateAddr(hostport string) bool {
	ap, err := netip.ParseAddrPort(hostport)
	if err != nil {
		return false
	}
	a := ap.Addr().Unmap()
	return a.IsLoopback() || a.IsPrivate() || a.IsLinkLocalUnicast()
}

func hostOnly(hostport string) string {
	if h, _, err := net.SplitHostPort(hostport); err == nil {
		return h
	}
	return hostport
}

func yesNo(b bool) string {
	if b {
		return "YES"
	}
	return "NO"
}
