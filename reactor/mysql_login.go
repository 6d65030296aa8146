package reactor

// The login of mysql routing mode: the server's greeting relayed, the
// client's login sent on to the server, and what the session keeps to log
// in elsewhere later (mysql_move.go).

import (
	"context"
	"errors"
	"time"

	"obgate/config"
	"obgate/mysqlproto"
	"obgate/route"
)

// mysqlHandshake logs a client in, mysql routing mode's way: it relays the
// server's greeting (with obgate's connection id) so that the client's
// login reaches the server unchanged; administrator logins and refused
// connections get obgate's own greeting or answer.
func (m *mysqlSide) mysqlHandshake(ctx context.Context, count int64, cfg *config.Config, deadline time.Time) error {
	s := m.s
	srv := s.srv
	refusal := s.srv.admission(count, cfg)
	var (
		be    *serverConn
		sh    *mysqlproto.Handshake
		spio  *mysqlproto.PacketIO
		dberr error
	)
	if refusal == nil {
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
	greet := m.greeting(sh, cfg)
	m.move.scramble = greet.AuthData
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
	s.tm = nil
	s.mu.Unlock()
	s.caps = resp.Capability & greet.Capability

	if s.identity.IsProxySys() {
		closeBackend()
		return s.adminLogin(cpio, greet, resp, cfg)
	}
	if refusal != nil {
		return refusal.answer(cpio)
	}
	if be == nil {
		if isFDExhausted(dberr) {
			return s.refuseNoFD(cpio, dberr)
		}
		_ = cpio.WritePacketFlush(mysqlproto.NewSQLError(mysqlproto.CRConnHostError, "no server available: %v", dberr).AppendPacket(nil))
		return quit(QuitNoServer, dberr)
	}
	// Before the login's OK reaches the client: from then on the client
	// may look itself up (SHOW PROXYSESSION) or be the target of a KILL.
	s.mu.Lock()
	s.backendAddr, s.backendID = be.addr, be.threadID
	s.mu.Unlock()
	if err := m.relayLogin(cpio, spio, be, first, resp); err != nil {
		closeBackend()
		return err
	}
	_ = be.conn.SetDeadline(time.Time{})
	s.backend = be
	return nil
}

// greeting builds the handshake obgate sends the client: the server's own
// greeting with obgate's connection id and capabilities, or, when no
// server is involved, obgate's.
func (m *mysqlSide) greeting(sh *mysqlproto.Handshake, cfg *config.Config) *mysqlproto.Handshake {
	s := m.s
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
	if s.srv.clientTLS(cfg) != nil {
		g.Capability |= mysqlproto.ClientSSL
	}
	return &g
}

// relayLogin forwards the client's login to the server and relays the
// auth exchange until the server accepts or refuses it. Each side keeps
// its own sequence ids (they differ by one when the client used TLS).
func (m *mysqlSide) relayLogin(cpio, spio *mysqlproto.PacketIO, be *serverConn, first []byte, resp *mysqlproto.HandshakeResponse) error {
	s := m.s
	serverCaps := resp.Capability&mysqlproto.ProxyCapabilities | resp.Capability&mysqlproto.ClientMySQL
	if s.identity.User != resp.User {
		// A MySQL server knows nothing of tenants and clusters: strip them so
		// that the same login name works in both routing modes. The auth
		// response does not depend on the name, so it stays valid.
		r := *resp
		r.User = s.identity.User
		first = r.Append(nil)
	}
	loginCaps := serverCaps &^ mysqlproto.ClientSSL
	if be.pendingTLS != nil {
		loginCaps |= mysqlproto.ClientSSL
		var err error
		if spio, err = be.startTLS(spio, loginCaps, resp.MaxPacketSize, resp.Charset); err != nil {
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
			_ = cpio.WritePacketFlush(lostServer(be.addr).AppendPacket(nil))
			return quit(QuitServerNetwork, err)
		}
		if len(p) == 0 {
			return quit(QuitServerProto, mysqlproto.ErrMalformed)
		}
		if p[0] == mysqlproto.OKHeader {
			// init_sql runs before the client learns it is logged in.
			ok, _ := mysqlproto.ParseOK(p, s.caps)
			be.status = ok.Status
			if err := s.st.runInitSQL(be); err != nil {
				var se *mysqlproto.SQLError
				if errors.As(err, &se) {
					_ = cpio.WritePacketFlush(se.AppendPacket(nil))
					return quit(QuitServerProto, err)
				}
				_ = cpio.WritePacketFlush(lostServer(be.addr).AppendPacket(nil))
				return quit(QuitServerNetwork, err)
			}
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
