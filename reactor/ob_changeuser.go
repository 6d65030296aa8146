package reactor

import (
	"errors"
	"fmt"
	"time"

	"obgate/internal/topology"
	"obgate/mysqlproto"
	"obgate/reactor/backend"
	"obgate/route"
)

// obUserChange is OceanBase mode's COM_CHANGE_USER: the exchange with
// the current server session, and what the session becomes after it.
type obUserChange struct{ *obSession }

// obChangeUser runs the client's COM_CHANGE_USER in OceanBase mode, as ODP
// does. The user name is rewritten to user@tenant (a name that gives
// another tenant or cluster is refused without reaching a server) and the
// rest goes to one server session as the client sent it: the auth
// response was computed against obgate's scramble, which an OBServer
// holds for a proxied connection (recovered from __proxy_scramble, or the
// fixed one), so it verifies there unchanged; auth switch rounds are
// relayed both ways.
//
// On success the session is the new user's: the saved login carries the
// new name, token, database and charset, so later server sessions log in
// as the new user; every other server session (logged in as the old user)
// is closed; the session state is reset as the new login left it;
// prepared statements are forgotten; SHOW PROXYSESSION shows the new user.
// A refusal resets the session state as MySQL does (variables, user
// variables, prepared statements and the transaction are gone, the user
// and database stay), and every server session is closed: the one that ran
// the change is closed by an OBServer or left in an unknown state, and the
// others still carry the old state.
//
// Called by the goroutine running the session's command.
func (o obUserChange) obChangeUser(n int, start time.Time) error {
	s := o.s
	pkt, err := s.readPacket(n)
	if err != nil {
		return err
	}
	cu, err := mysqlproto.ParseChangeUser(pkt[mysqlproto.HeaderLen:], s.caps)
	if err != nil {
		s.countStatement(route.StmtOther, true, start)
		return s.writeError(mysqlproto.NewSQLError(mysqlproto.ERUnknownComError, "Malformed COM_CHANGE_USER"))
	}
	id := route.ParseUsername(cu.User, s.cfg.UsernameSeparators())
	if e := o.changeUserRefusal(id); e != nil {
		s.countStatement(route.StmtOther, true, start)
		return s.writeError(e)
	}
	// The change ends any transaction, refused or not; a held BEGIN has
	// not started one on a server yet.
	o.heldBegin = nil
	be, err := o.serverFor(needAny)
	if err != nil {
		o.changeUserRefused(nil)
		s.countStatement(route.StmtOther, true, start)
		return s.st.writeErrorFor(err)
	}
	fwd := *cu
	fwd.User = id.User + "@" + o.tenant
	if !fwd.HasCharset {
		fwd.HasCharset, fwd.Charset = true, uint16(o.clientLogin.Charset)
	}
	if fwd.AuthPlugin == "" {
		fwd.AuthPlugin = mysqlproto.AuthNativePassword
	}
	res, err := o.changeUserExchange(be, fwd.Append(nil, serverLoginCaps(o.clientLogin.Capability)), fwd.AuthResponse, fwd.AuthPlugin)
	if err != nil {
		return err
	}
	if res.ok == nil {
		o.changeUserRefused(be)
		s.countStatement(route.StmtOther, true, start)
		if res.lost != nil {
			s.srv.log.Warn("server session failed during COM_CHANGE_USER", "session", s.id, "server", be.Addr, "err", res.lost)
			return s.writeError(lostServer(be.Addr))
		}
		return nil
	}
	o.changedUser(be, cu, id, res)
	s.countStatement(route.StmtOther, false, start)
	s.client.replySeq = res.okSeq
	return s.client.writePacket(o.clientOK(*res.ok))
}

// changeUserRefusal returns the error for a COM_CHANGE_USER that obgate
// does not forward: another tenant or cluster than the session's (a
// server session belongs to one tenant), obgate's own administrator, or
// proxyro@sys from a client.
func (o obUserChange) changeUserRefusal(id route.Identity) *mysqlproto.SQLError {
	s := o.s
	switch {
	case id.IsProxySys():
		return mysqlproto.NewSQLError(mysqlproto.ERNotSupportedYet, "COM_CHANGE_USER to %s is not supported; open a new connection", id.User+"@"+id.Tenant)
	case id.Tenant != "" && id.Tenant != o.tenant, id.Cluster != "" && id.Cluster != o.cluster.Name():
		return mysqlproto.NewSQLError(mysqlproto.ERNotSupportedYet,
			"COM_CHANGE_USER to another tenant or cluster is not supported; open a new connection")
	case id.User == topology.UserProxyRO && o.tenant == topology.TenantSys && !s.cfg.SkipProxyroCheck:
		return mysqlproto.NewSQLError(mysqlproto.ERAccessDenied, "Access denied for user '%s'", id.User+"@"+o.tenant)
	}
	return nil
}

// changeUserResult is how a COM_CHANGE_USER exchange ended.
type changeUserResult struct {
	ok     *mysqlproto.OK // the server's OK (session state copied); nil when refused or lost
	okSeq  uint8          // its sequence id
	token  []byte         // the client's last auth response
	plugin string         // the plugin it was computed with
	lost   error          // the server session failed; its ERR, if any, did not reach the client
}

// maxChangeUserRounds bounds the auth rounds of one COM_CHANGE_USER.
const maxChangeUserRounds = 8

// changeUserExchange sends the rewritten COM_CHANGE_USER payload req to
// be and relays the exchange that follows: auth switch and more-data
// packets to the client and its answers back, a final ERR to the client.
// The final OK is returned, not sent. token and plugin are the auth
// response req carries. A returned error ends the client session; a
// failed server session is reported in the result.
func (o obUserChange) changeUserExchange(be *backend.Conn, req []byte, token []byte, plugin string) (changeUserResult, error) {
	s := o.s
	res := changeUserResult{token: token, plugin: plugin}
	out, _ := mysqlproto.AppendPacket(nil, 0, req)
	if err := be.WriteRequest(out, true, true); err != nil {
		res.lost = err
		return res, nil
	}
	s.countIn(len(out))
	sp := serverPackets{be: be, timeout: o.answerTimeout()}
	for range maxChangeUserRounds {
		p, seq, err := sp.next()
		if err != nil {
			res.lost = err
			return res, nil
		}
		switch {
		case len(p) == 0:
		case p[0] == mysqlproto.OKHeader:
			ok, good := mysqlproto.ParseOK(p, mysqlproto.ClientSessionTrack)
			if !good || sp.buffered() > 0 {
				break
			}
			ok.SessionState = append([]byte(nil), ok.SessionState...)
			ok.Info = append([]byte(nil), ok.Info...)
			res.ok, res.okSeq = &ok, seq
			return res, nil
		case p[0] == mysqlproto.ERRHeader:
			if sp.buffered() > 0 {
				break
			}
			s.client.replySeq = seq
			return res, s.client.writePacket(p)
		case p[0] == mysqlproto.AuthSwitchRequestHeader || p[0] == mysqlproto.AuthMoreDataHeader:
			if perr := s.passwordGuard(be, p); perr != nil {
				s.client.replySeq = seq
				return res, s.writeError(perr.reply)
			}
			if sw, ok := mysqlproto.ParseAuthSwitchRequest(p); ok {
				res.plugin = sw.Plugin
			}
			fastOK := p[0] == mysqlproto.AuthMoreDataHeader && len(p) == 2 && p[1] == mysqlproto.CachingSha2FastAuthOK
			s.client.replySeq = seq
			if err := s.client.writePacket(p); err != nil {
				return res, err
			}
			if fastOK {
				continue // the server's OK follows without the client
			}
			reply, err := o.readAuthReply()
			if err != nil {
				return res, err
			}
			if p[0] == mysqlproto.AuthSwitchRequestHeader {
				res.token = append([]byte(nil), reply[mysqlproto.HeaderLen:]...)
			}
			if err := be.WriteRequest(reply, true, true); err != nil {
				res.lost = err
				return res, nil
			}
			s.countIn(len(reply))
			continue
		}
		res.lost = fmt.Errorf("unexpected answer to COM_CHANGE_USER: %x", p[:min(len(p), 16)])
		return res, nil
	}
	res.lost = errors.New("too many auth rounds in COM_CHANGE_USER")
	return res, nil
}

// readAuthReply reads the client's answer to an auth round, header
// included, and sets the sequence id of the next packet to the client.
func (o obUserChange) readAuthReply() ([]byte, error) {
	s := o.s
	hdr, err := s.client.io.Peek(mysqlproto.HeaderLen)
	if err != nil {
		return nil, quit(QuitClientNetwork, err)
	}
	n, seq := mysqlproto.ParseHeader(hdr)
	if n >= mysqlproto.MaxPayloadLen {
		return nil, quitWith(QuitClientProto, mysqlproto.ErrPacketTooLarge,
			mysqlproto.NewSQLError(mysqlproto.ERNetPacketTooLarge, "auth response too large"))
	}
	pkt, err := s.readPacket(n)
	if err != nil {
		return nil, err
	}
	s.client.replySeq = seq + 1
	return pkt, nil
}

// changedUser makes the session the new user's after the server accepted
// a COM_CHANGE_USER on be.
func (o obUserChange) changedUser(be *backend.Conn, cu *mysqlproto.ChangeUser, id route.Identity, res changeUserResult) {
	s := o.s
	login := *o.clientLogin
	login.User = cu.User
	login.AuthResponse, login.AuthPlugin = res.token, res.plugin
	login.Database = cu.Database
	if cu.HasCharset && cu.Charset > 0 && cu.Charset < 256 {
		login.Charset = byte(cu.Charset)
	}
	if cu.HasAttrs {
		login.Attrs = cu.Attrs
	}
	o.clientLogin = &login
	o.resetOB(be)
	o.vars.SetDB(cu.Database)
	o.vars.Learn(res.ok.SessionState, res.ok.Status, o.feedback)
	o.vars.MarkSynced(&be.Sync)
	be.Status = res.ok.Status
	s.status = res.ok.Status
	s.activity.inTrans.Store(s.status.Has(mysqlproto.StatusInTrans))
	s.stmts.Reset()
	o.publishedDB = o.vars.DBVersion()
	s.published.mu.Lock()
	s.published.user = cu.User
	s.identity.User = id.User
	s.published.db = o.vars.DB()
	s.published.mu.Unlock()
	s.series.forget()
	o.publishOB()
}

// changeUserRefused resets the session after a COM_CHANGE_USER that did
// not succeed on be (nil when it found no server session).
func (o obUserChange) changeUserRefused(be *backend.Conn) {
	s := o.s
	if be != nil {
		o.drop(be)
	}
	o.resetOB(nil)
	s.status &^= mysqlproto.StatusInTrans
	s.activity.inTrans.Store(false)
	s.stmts.Reset()
	o.publishOB()
}

// serverPackets reads whole packets from a server session, for the
// exchanges obgate relays packet by packet.
type serverPackets struct {
	be      *backend.Conn
	timeout time.Duration // for each read
	buf     []byte
	r, w    int
}

// next returns the next packet's payload (borrowed until the next call)
// and sequence id. Packets are bounded by mysqlproto.MaxInspectLen.
func (sp *serverPackets) next() ([]byte, uint8, error) {
	for {
		if avail := sp.w - sp.r; avail >= mysqlproto.HeaderLen {
			n, seq := mysqlproto.ParseHeader(sp.buf[sp.r:])
			if n > mysqlproto.MaxInspectLen {
				return nil, 0, fmt.Errorf("server sent a packet of %d bytes in an auth exchange", n)
			}
			if avail >= mysqlproto.HeaderLen+n {
				p := sp.buf[sp.r+mysqlproto.HeaderLen : sp.r+mysqlproto.HeaderLen+n]
				sp.r += mysqlproto.HeaderLen + n
				return p, seq, nil
			}
			if need := mysqlproto.HeaderLen + n; need > len(sp.buf)-sp.r {
				nb := make([]byte, max(need, 4096))
				sp.w = copy(nb, sp.buf[sp.r:sp.w])
				sp.buf, sp.r = nb, 0
			}
		}
		if sp.buf == nil {
			sp.buf = make([]byte, 4096)
		}
		if sp.w == len(sp.buf) {
			sp.w = copy(sp.buf, sp.buf[sp.r:sp.w])
			sp.r = 0
		}
		_ = sp.be.NetConn.SetReadDeadline(time.Now().Add(sp.timeout))
		k, err := sp.be.Read(sp.buf[sp.w:])
		sp.w += k
		if k == 0 && err != nil {
			return nil, 0, err
		}
	}
}

// buffered is the number of bytes read past the last packet returned.
func (sp *serverPackets) buffered() int { return sp.w - sp.r }
