package reactor

// Who may try to log in as root@proxysys or inspector@proxysys, and how
// often. An administrator session changes the configuration of the whole
// process (init_sql runs SQL on every new server session with each
// user's privileges), so its login is guarded more than a user's:
//   - with no password set (obproxy_sys_password / inspector_password
//     empty, obgate's default), only from a loopback address: ODP ships a
//     compiled hash whose preimage nobody knows, which keeps its admin
//     closed until an operator sets a password; obgate keeps it usable
//     on the machine itself (make demo, a local mysql client) and closed
//     to the network;
//   - with a password, from private or loopback addresses unless
//     skip_proxy_sys_private_check (ODP's rule);
//   - a source address that failed five times within a minute is
//     refused for a minute (admission.AdminFailures), so a password
//     cannot be guessed at network speed.

import (
	"bytes"
	"encoding/hex"
	"errors"
	"fmt"
	"net/netip"
	"time"

	"obgate/config"
	"obgate/mysqlproto"
	"obgate/route"
)

// adminLogin authenticates root@proxysys (or inspector@proxysys) against
// obproxy_sys_password (inspector_password): SHA1 hex of the password,
// checked as mysql_native_password against a scramble of this session
// alone. Who may try, and how often, is adminguard.go's.
func (s *Session) adminLogin(cpio *mysqlproto.PacketIO, greet *mysqlproto.Handshake, resp *mysqlproto.HandshakeResponse, cfg *config.Config) error {
	var stored string
	switch s.identity.User {
	case route.UserRoot:
		stored = cfg.ObproxySysPassword
	case route.UserInspector:
		stored = cfg.InspectorPassword
	default:
		return s.client.denyLogin(cpio, resp, "unknown proxysys user")
	}
	src := ipOf(s.client.addr)
	now := time.Now()
	if wait := s.srv.adminFailures.BlockedFor(src, now); wait > 0 {
		s.srv.metrics.refusedAdmin.Inc()
		msg := fmt.Sprintf("Host '%s' is blocked because of many failed %s@proxysys logins; try again in %s",
			hostOnly(s.client.addr), s.identity.User, wait.Round(time.Second))
		_ = cpio.WritePacketFlush(mysqlproto.NewSQLError(mysqlproto.ERHostIsBlocked, "%s", msg).AppendPacket(nil))
		return quit(QuitAuthFailed, errors.New("administrator logins from this address are blocked after repeated failures"))
	}
	denied := func(why string) error {
		s.srv.adminFailures.Fail(src, now)
		return s.client.denyLogin(cpio, resp, why)
	}
	switch {
	case stored == "" && !src.IsLoopback():
		return denied(s.identity.User + "@proxysys has no password set, so it logs in from loopback addresses only")
	case stored != "" && !cfg.SkipProxySysPrivateCheck && !isPrivateAddr(s.client.addr):
		return denied("proxysys login from a public address")
	}
	token, scramble, err := adminToken(cpio, greet, resp)
	if err != nil {
		return err
	}
	stage1, err := hex.DecodeString(stored)
	if err != nil {
		return denied("stored password is not SHA1 hex")
	}
	if !mysqlproto.VerifyNativeStage1(scramble, token, stage1) {
		return denied("wrong password")
	}
	s.published.mu.Lock() // Info and KILL from other sessions read it
	s.admin = true
	s.published.mu.Unlock()
	s.status = mysqlproto.StatusAutocommit
	ok := mysqlproto.AppendOK(nil, mysqlproto.OK{Status: s.status}, s.caps)
	if err := cpio.WritePacketFlush(ok); err != nil {
		return quit(QuitClientNetwork, err)
	}
	_ = s.client.rawConn.SetDeadline(time.Time{})
	return nil
}

// adminToken returns the client's mysql_native_password token and the
// scramble it answers. The greeting's scramble serves when it was this
// session's own; when it was ODP's fixed one (enable_proxy_scramble off)
// or the client answered with another plugin, obgate asks again with a
// new random scramble (an auth switch), so that a token read off the
// network is worth nothing to a replay. A client that cannot switch
// (no CLIENT_PLUGIN_AUTH) is checked against the greeting's scramble.
func adminToken(cpio *mysqlproto.PacketIO, greet *mysqlproto.Handshake, resp *mysqlproto.HandshakeResponse) (token, scramble []byte, err error) {
	token, scramble = resp.AuthResponse, greet.AuthData
	otherPlugin := resp.AuthPlugin != "" && resp.AuthPlugin != mysqlproto.AuthNativePassword
	if !otherPlugin && !bytes.Equal(scramble, fixedScramble) {
		return token, scramble, nil
	}
	if !resp.Capability.Has(mysqlproto.ClientPluginAuth) {
		return token, scramble, nil
	}
	scramble = mysqlproto.NewScramble()
	sw := mysqlproto.AuthSwitchRequest{Plugin: mysqlproto.AuthNativePassword, Data: scramble}
	if err := cpio.WritePacketFlush(sw.Append(nil)); err != nil {
		return nil, nil, quit(QuitClientNetwork, err)
	}
	p, err := cpio.ReadPacket()
	if err != nil {
		return nil, nil, quit(handshakeQuitSource(err), err)
	}
	return p, scramble, nil
}

// ipOf is the IP of a host:port; the zero Addr when it has none.
func ipOf(hostport string) netip.Addr {
	ap, err := netip.ParseAddrPort(hostport)
	if err != nil {
		return netip.Addr{}
	}
	return ap.Addr().Unmap()
}
