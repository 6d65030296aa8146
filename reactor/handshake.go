package reactor

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"time"

	"obgate/config"
	"obgate/mysqlproto"
	"obgate/reactor/connio"
)

// fixedScramble is ODP's default handshake scramble (enable_proxy_scramble
// off): OBServer verifies proxied logins against it.
var fixedScramble = []byte("aaaaaaaabbbbbbbbbbbb")

// maxLoginPacket bounds packets read from a client before it logged in:
// a real login is a few hundred bytes.
const maxLoginPacket = mysqlproto.MaxLoginPacket

// handleConn runs a new connection's login on its own goroutine, then
// hands the session to its transport. It gives back the login slot the
// accept loop took for src when the login ends.
func (srv *Server) handleConn(conn net.Conn, src netip.Addr) {
	defer srv.wg.Done()
	slot := true
	giveSlot := func() {
		if slot {
			slot = false
			srv.handshakes.Give(src)
		}
	}
	defer giveSlot()
	s := &Session{srv: srv, id: srv.newSessionID()}
	s.client.connectedAt, s.client.rawConn = time.Now(), conn
	srv.mode.newSide(s)    // before any other goroutine can see the session; the side never changes
	s.st = newStatement(s) // the login's own commands (init_sql, syncs)
	s.drv.s = s
	s.client.addr = conn.RemoteAddr().String()
	s.activity.lastActive.Store(s.client.connectedAt.UnixNano())
	s.activity.curCmd.Store(-1)
	s.client.closer.Store(&closerRef{conn})
	srv.active.Add(1)
	srv.sessions.Store(s.id, s)
	count := srv.clients.Add(1)
	defer s.drv.containPanic(panicLogin)
	if tc, ok := conn.(*net.TCPConn); ok {
		connio.TuneClientConn(tc, srv.cfg.Load())
	}
	err := s.handshake(count)
	giveSlot()
	if err != nil {
		srv.metrics.newClientFail.Inc()
		s.logQuit(err)
		s.drv.teardown()
		return
	}
	srv.metrics.newClientOK.Inc()
	s.lifecycle.loggedIn.Store(true)
	s.drv.serveTransport()
}

// handshake logs the client in, within client_handshake_timeout, the way
// the session's routing mode does it (serverSide.login).
func (s *Session) handshake(count int64) error {
	cfg := s.srv.cfg.Load()
	s.cfg = cfg // the login's commands (init_sql, syncs) read it
	deadline := time.Now().Add(cfg.ClientHandshakeTimeout)
	_ = s.client.rawConn.SetDeadline(deadline)
	ctx, cancel := context.WithDeadline(context.Background(), deadline)
	defer cancel()
	if err := s.side.login(ctx, count, cfg, deadline); err != nil {
		return err
	}
	_ = s.client.rawConn.SetDeadline(time.Time{})
	return nil
}

// greetAndRead sends the client obgate's greeting and reads its login: an
// SSLRequest first upgrades the connection to TLS (the session's raw
// connection becomes the TLS one). It returns the packet I/O to go on with,
// the raw response (borrowed from cpio) and the parsed response.
func (s *Session) greetAndRead(ctx context.Context, greet *mysqlproto.Handshake) (*mysqlproto.PacketIO, []byte, *mysqlproto.HandshakeResponse, error) {
	conn := s.client.rawConn
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
		tlsCfg := s.srv.clientTLS(s.cfg)
		if tlsCfg == nil {
			return nil, nil, nil, quit(QuitClientProto, errors.New("client asked for TLS, which is not enabled"))
		}
		tc := tls.Server(conn, tlsCfg)
		if err := tc.HandshakeContext(ctx); err != nil {
			return nil, nil, nil, quit(QuitClientNetwork, fmt.Errorf("TLS handshake: %w", err))
		}
		seq := cpio.Sequence()
		s.client.rawConn = tc
		s.client.closer.Store(&closerRef{tc})
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

// denyLogin refuses a login as MySQL does (ERR 1045, then close); why is
// for the log only.
func (c *clientConn) denyLogin(cpio *mysqlproto.PacketIO, resp *mysqlproto.HandshakeResponse, why string) error {
	msg := fmt.Sprintf("Access denied for user '%s'@'%s' (using password: %s)", resp.User, hostOnly(c.addr), yesNo(len(resp.AuthResponse) > 0))
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

// loginRefusal is why obgate serves no new client session now, whatever
// the routing mode: it is draining, or client_max_connections is reached.
// Administrator logins are not refused.
type loginRefusal struct {
	reply  *mysqlproto.SQLError
	source QuitSource
	cause  error
}

// admission returns the refusal for the count-th client connection, or
// nil when it may log in.
func (srv *Server) admission(count int64, cfg *config.Config) *loginRefusal {
	switch {
	case srv.draining.Load():
		return &loginRefusal{mysqlproto.NewSQLError(mysqlproto.ERServerShutdown, "obgate is shutting down"), QuitShutdown, nil}
	case srv.mem.high.Load():
		return srv.memoryRefusal()
	case cfg.ClientMaxConnections > 0 && count > cfg.ClientMaxConnections:
		if cfg.EnableClientConnectionLRUDisconnect && srv.closeLeastRecentlyUsed() {
			return nil
		}
		return &loginRefusal{mysqlproto.NewSQLError(mysqlproto.ERTooManyUserConnections, "Too many sessions"), QuitLimit,
			fmt.Errorf("%d client connections, client_max_connections is %d", count, cfg.ClientMaxConnections)}
	}
	return nil
}

// answer sends the refusal to the client and ends the login.
func (r *loginRefusal) answer(cpio *mysqlproto.PacketIO) error {
	_ = cpio.WritePacketFlush(r.reply.AppendPacket(nil))
	return quit(r.source, r.cause)
}

// closeLeastRecentlyUsed closes the client session idle for longest, to
// make room for a new one at client_max_connections
// (enable_client_connection_lru_disconnect). Sessions in a command or a
// transaction and administrator sessions are spared. It reports whether
// it found one; the count drops when that session's teardown ends.
func (srv *Server) closeLeastRecentlyUsed() bool {
	var victim *Session
	var oldest int64
	srv.eachSession(func(s *Session) {
		if s.State() != StateIdle || s.admin || s.activity.inTrans.Load() {
			return
		}
		if t := s.activity.lastActive.Load(); victim == nil || t < oldest {
			victim, oldest = s, t
		}
	})
	if victim == nil {
		return false
	}
	srv.log.Info("closed the least recently used client for a new one at client_max_connections",
		"session", victim.id, "idle", time.Since(time.Unix(0, oldest)).Round(time.Millisecond))
	victim.closeFor(closeNow, QuitLimit, reasonLRU)
	return true
}
