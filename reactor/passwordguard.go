package reactor

// A password never crosses a plain link because its client used TLS. In
// mysql routing mode obgate relays the server's authentication exchange:
// most rounds carry a token computed from a scramble, worthless to a
// listener, but some have the client send its password itself (a TLS
// client sends it in clear, trusting the link): mysql_clear_password,
// sha256_password and MariaDB's dialog (PAM) when asked to switch to them,
// and caching_sha2_password's full authentication. When the client's
// link is TLS and the server's is not, obgate refuses such a round
// instead of relaying it, so the password never leaves the client. A
// client on a plain link chose its exposure (and with the SHA-2 plugins
// encrypts the password to the server's RSA key); its rounds pass.

import (
	"crypto/tls"
	"fmt"

	"obgate/mysqlproto"
	"obgate/reactor/backend"
)

// cleartextPlugins are the client plugins that send the password itself
// over a TLS link.
var cleartextPlugins = map[string]bool{
	mysqlproto.AuthClearPassword:  true,
	mysqlproto.AuthSha256Password: true,
	"dialog":                      true, // MariaDB PAM: answers prompts in clear
}

// askedPassword reports whether the server's auth packet p has a TLS
// client answer with its password in clear.
func askedPassword(p []byte) bool {
	switch {
	case len(p) == 0:
		return false
	case p[0] == mysqlproto.AuthSwitchRequestHeader:
		sw, ok := mysqlproto.ParseAuthSwitchRequest(p)
		return ok && cleartextPlugins[sw.Plugin]
	case p[0] == mysqlproto.AuthMoreDataHeader:
		return len(p) == 2 && p[1] == mysqlproto.CachingSha2FullAuth
	}
	return false
}

// plainPasswordError is a refused password round.
type plainPasswordError struct {
	server string
	reply  *mysqlproto.SQLError
}

func (e *plainPasswordError) Error() string {
	return fmt.Sprintf("server %s asked a TLS client for its password in clear over a link without TLS; refused", e.server)
}

// passwordGuard checks the server's auth packet p, about to be relayed
// to the client, on server session be; it returns the refusal when the
// round would carry a TLS client's password over be's plain link.
func (s *Session) passwordGuard(be *backend.Conn, p []byte) *plainPasswordError {
	if be.TLS || !s.client.onTLS() || !askedPassword(p) {
		return nil
	}
	s.srv.log.Warn("refused to relay a TLS client's password to a server reached without TLS; set enable_server_ssl",
		"session", s.id, "server", be.Addr)
	return &plainPasswordError{server: be.Addr, reply: mysqlproto.NewSQLError(mysqlproto.ERAccessDenied,
		"Access denied: the server asked for your password in clear, and obgate reaches server %s without TLS (enable_server_ssl); log in with a scramble-based method such as mysql_native_password, or have obgate use TLS to the server", be.Addr)}
}

// onTLS reports whether the client's link is TLS.
func (c *clientConn) onTLS() bool {
	_, ok := c.rawConn.(*tls.Conn)
	return ok
}
