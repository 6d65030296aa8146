package reactor

// The login of mysql routing mode: obgate's greeting in the servers'
// image, the client's login sent on to the server with its token asked
// again for the server's scramble, and what the session keeps to log in
// elsewhere later (mysql_move.go).

import (
	"context"
	"errors"
	"fmt"
	"time"

	"obgate/config"
	"obgate/mysqlproto"
	"obgate/reactor/backend"
	"obgate/route"
)

// mysqlLogin is mysql mode's login (sideIdentity): obgate's greeting
// in the image of the servers', the client's login relayed to a server,
// and the names the login gave.
type mysqlLogin struct{ *mysqlSide }

// mysqlHandshake logs a client in, mysql routing mode's way: obgate
// greets the client itself, in the image of the servers' greeting (their
// version and capabilities, a scramble of its own), and dials a server
// only once the client answered: a bare TCP connection, or one that never
// finishes its login, costs the servers nothing (a server counts aborted
// handshakes against max_connect_errors and then blocks obgate's address
// for every client). The client's login then goes to the server, its
// token asked again for the server's scramble (an auth switch: one more
// round trip per login with a password). Administrator logins and
// refused connections never reach a server.
func (m mysqlLogin) mysqlHandshake(ctx context.Context, count int64, cfg *config.Config, deadline time.Time) error {
	s := m.s
	srv := s.srv
	srv.learnGreetingOnce()
	srv.mysqlGreeting.await(ctx)
	greet := m.greeting(srv.mysqlGreeting.image.Load(), cfg)
	cpio, first, resp, err := s.greetAndRead(ctx, greet)
	if err != nil {
		return err
	}
	// Under mu: other sessions read these through Info while this one is
	// still logging in (SHOW PROXYSESSION, KILL).
	s.published.mu.Lock()
	s.identity = mysqlIdentity(resp.User)
	s.published.user, s.published.db = resp.User, resp.Database
	s.series.forget()
	s.published.mu.Unlock()
	s.caps = resp.Capability & greet.Capability

	if s.identity.IsProxySys() {
		return s.adminLogin(cpio, greet, resp, cfg)
	}
	if refusal := srv.admission(count, cfg); refusal != nil {
		return refusal.answer(cpio)
	}
	be, sh, spio, dberr := srv.dialFirst(ctx, serverAddrs(cfg))
	if be == nil {
		if backend.IsFDExhausted(dberr) {
			return s.srv.noFD.atLogin(cpio, dberr)
		}
		_ = cpio.WritePacketFlush(mysqlproto.NewSQLError(mysqlproto.CRConnHostError, "no server available: %v", dberr).AppendPacket(nil))
		return quit(QuitNoServer, dberr)
	}
	srv.mysqlGreeting.learn(sh)
	// Registered before it is published: a KILL that closes it (from
	// another goroutine, through the published server session) then
	// finds it in the registry and removes it. Published before the
	// login's OK reaches the client: from then on the client may look
	// itself up (SHOW PROXYSESSION) or be the target of a KILL.
	srv.servers.Add(be, s)
	s.servers.Publish(be)
	_ = be.NetConn.SetDeadline(deadline)
	if err := m.relayLogin(cpio, spio, be, sh, first, resp); err != nil {
		be.Close()
		return err
	}
	_ = be.NetConn.SetDeadline(time.Time{})
	s.servers.Use(be)
	return nil
}

// mysqlIdentity is who a login name names in mysql routing mode: a MySQL
// user name, sent to the server as it is (a name such as svc-app-admin is
// not read as cluster-tenant-user there); only root@proxysys and
// inspector@proxysys are obgate's own. A MySQL account named like them
// cannot log in through obgate.
func mysqlIdentity(name string) route.Identity {
	if id := route.ParseUsername(name, nil); id.IsProxySys() {
		return id
	}
	return route.Identity{User: name, ClusterID: -1}
}

// greeting builds the handshake obgate sends the client: the image of the
// servers' greeting sh (nil while none is known) with obgate's connection
// id, capabilities and a scramble of this session's own.
func (m mysqlLogin) greeting(sh *mysqlproto.Handshake, cfg *config.Config) *mysqlproto.Handshake {
	s := m.s
	var g mysqlproto.Handshake
	if sh != nil {
		g = *sh
		// Not MariaDB's extended type info: it adds a field to column
		// definitions, which obgate's own result sets (internal commands)
		// do not carry.
		g.Capability &= mysqlproto.ProxyCapabilities &^ mysqlproto.MariaDBClientExtendedTypeInfo
		g.AuthData = mysqlproto.NewScramble()
		if cfg.MySQLVersion != "" {
			g.ServerVersion = cfg.MySQLVersion
		}
	} else {
		g = *ownGreeting(cfg, s.srv.GreetingVersion(cfg), mysqlproto.ProxyCapabilities&^(mysqlproto.MariaDBClientProgress|mysqlproto.MariaDBClientExtendedTypeInfo))
		g.AuthData = mysqlproto.NewScramble()
	}
	g.ConnectionID = s.id
	g.Capability &^= mysqlproto.ClientSSL
	if s.srv.clientTLS(cfg) != nil {
		g.Capability |= mysqlproto.ClientSSL
	}
	return &g
}

// relayLogin forwards the client's login to the server sh greeted with,
// and relays the auth exchange until the server accepts or refuses it.
// The client answered obgate's scramble, not the server's: a token is
// asked again for the server's (switchToken). Each side keeps its own
// sequence ids.
func (m mysqlLogin) relayLogin(cpio, spio *mysqlproto.PacketIO, be *backend.Conn, sh *mysqlproto.Handshake, first []byte, resp *mysqlproto.HandshakeResponse) error {
	s := m.s
	serverCaps := resp.Capability&mysqlproto.ProxyCapabilities | resp.Capability&mysqlproto.ClientMySQL
	if lacking := s.caps & layoutCapabilities &^ sh.Capability; lacking != 0 {
		// The greeting promised what this server cannot do (the servers
		// differ, or one was upgraded): the client's next login is greeted
		// in this server's image.
		err := fmt.Errorf("server %s lacks capabilities %#x the greeting offered", be.Addr, uint64(lacking))
		_ = cpio.WritePacketFlush(mysqlproto.NewSQLError(mysqlproto.ERHandshakeError, "Bad handshake: %v; connect again", err).AppendPacket(nil))
		return quit(QuitServerProto, err)
	}
	m.move.scramble = append([]byte(nil), sh.AuthData...)
	if len(resp.AuthResponse) > 0 {
		r, err := m.switchToken(cpio, be, sh, resp)
		if err != nil {
			return err
		}
		resp = r
		first = r.Append(nil)
	}
	loginCaps := serverCaps &^ mysqlproto.ClientSSL
	if be.PendingTLS != nil {
		loginCaps |= mysqlproto.ClientSSL
		var err error
		if spio, err = be.StartTLS(spio, loginCaps, resp.MaxPacketSize, resp.Charset); err != nil {
			_ = cpio.WritePacketFlush(mysqlproto.NewSQLError(mysqlproto.CRConnHostError, "%v", err).AppendPacket(nil))
			return quit(QuitServerNetwork, err)
		}
	}
	mysqlproto.PatchResponseCapability(first, loginCaps)
	if err := spio.WritePacketFlush(first); err != nil {
		return quit(QuitServerNetwork, err)
	}
	for round := range 16 {
		p, err := spio.ReadPacket()
		if err != nil {
			_ = cpio.WritePacketFlush(lostServer(be.Addr).AppendPacket(nil))
			return quit(QuitServerNetwork, err)
		}
		if len(p) == 0 {
			return quit(QuitServerProto, mysqlproto.ErrMalformed)
		}
		if p[0] == mysqlproto.OKHeader {
			// init_sql runs before the client learns it is logged in.
			ok, _ := mysqlproto.ParseOK(p, s.caps)
			be.Status = ok.Status
			if err := s.st.runInitSQL(be); err != nil {
				var se *mysqlproto.SQLError
				if errors.As(err, &se) {
					_ = cpio.WritePacketFlush(se.AppendPacket(nil))
					return quit(QuitServerProto, err)
				}
				_ = cpio.WritePacketFlush(lostServer(be.Addr).AppendPacket(nil))
				return quit(QuitServerNetwork, err)
			}
		}
		if err := s.passwordGuard(be, p); err != nil {
			_ = cpio.WritePacketFlush(err.reply.AppendPacket(nil))
			return quit(QuitAuthFailed, err)
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
				// server's scramble (no auth switch of the server's).
				m.keepMoveLogin(resp, serverCaps)
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

// layoutCapabilities change what the server's packets look like: a
// client that took one from obgate's greeting needs a server that has it.
const layoutCapabilities = mysqlproto.ClientProtocol41 | mysqlproto.ClientDeprecateEOF |
	mysqlproto.ClientSessionTrack | mysqlproto.ClientPluginAuth | mysqlproto.MariaDBClientProgress

// switchToken asks the client, with an auth switch, for its token
// against the server's scramble in sh, with the server's default plugin,
// and returns the login to send the server with that token. A client
// that cannot switch plugins (no CLIENT_PLUGIN_AUTH, older than MySQL
// 5.5) cannot log in with a password.
func (m mysqlLogin) switchToken(cpio *mysqlproto.PacketIO, be *backend.Conn, sh *mysqlproto.Handshake, resp *mysqlproto.HandshakeResponse) (*mysqlproto.HandshakeResponse, error) {
	s := m.s
	if !resp.Capability.Has(mysqlproto.ClientPluginAuth) {
		err := errors.New("the client cannot switch authentication plugins (no CLIENT_PLUGIN_AUTH)")
		_ = cpio.WritePacketFlush(mysqlproto.NewSQLError(mysqlproto.ERHandshakeError, "Bad handshake: %v, which obgate needs in mysql routing mode", err).AppendPacket(nil))
		return nil, quit(QuitClientProto, err)
	}
	sw := mysqlproto.AuthSwitchRequest{Plugin: sh.AuthPlugin, Data: sh.AuthData}
	if sw.Plugin == "" {
		sw.Plugin = mysqlproto.AuthNativePassword
	}
	req := sw.Append(nil)
	if err := s.passwordGuard(be, req); err != nil {
		_ = cpio.WritePacketFlush(err.reply.AppendPacket(nil))
		return nil, quit(QuitAuthFailed, err)
	}
	if err := cpio.WritePacketFlush(req); err != nil {
		return nil, quit(QuitClientNetwork, err)
	}
	token, err := cpio.ReadPacket()
	if err != nil {
		return nil, quit(handshakeQuitSource(err), err)
	}
	r := *resp
	r.AuthPlugin = sw.Plugin
	r.AuthResponse = append([]byte(nil), token...)
	r.Capability |= mysqlproto.ClientPluginAuth
	return &r, nil
}
