package obsim

// TLS from clients (Config.TLS): a node offers CLIENT_SSL in its greeting
// and, on an SSLRequest, ends TLS itself before reading the login, as an
// OBServer with ssl enabled does; everything after the TLS handshake
// (login, OB 2.0 frames, the compressed protocol) travels inside it. The
// session's MariaDB connection stays plain: it is obsim's storage, not
// part of the simulated server's wire. SHOW STATUS LIKE 'Ssl_cipher'
// answers with the session's cipher suite, as the server's status
// variable does.

import (
	"bufio"
	"crypto/tls"
	"net"
	"strings"

	"obgate/mysqlproto"
)

// offered is the capability set the node's greeting offers.
func (s *session) offered() mysqlproto.Capability {
	if s.c.cfg.TLS != nil {
		return serverCapabilities | mysqlproto.ClientSSL
	}
	return serverCapabilities
}

// startTLS runs the TLS handshake after the client's SSLRequest and reads
// the login that follows it; the read deadline of the login applies.
func (s *session) startTLS() ([]byte, error) {
	// The client may have sent its ClientHello right behind the
	// SSLRequest, into s.br's read-ahead: the handshake reads that first.
	tc := tls.Server(readAheadConn{s.conn, s.br}, s.c.cfg.TLS)
	if err := tc.Handshake(); err != nil {
		return nil, err
	}
	s.stream = tc
	s.cipher = tls.CipherSuiteName(tc.ConnectionState().CipherSuite)
	s.n.tlsSessions.Add(1)
	seq := s.pio.Sequence()
	s.br = bufio.NewReaderSize(tc, 16<<10)
	s.pio = mysqlproto.NewPacketIO(s.br, tc)
	s.pio.SetSequence(seq)
	return s.pio.ReadPacket()
}

// readAheadConn is a connection whose first bytes are those a reader
// already took from it.
type readAheadConn struct {
	net.Conn
	r *bufio.Reader
}

func (c readAheadConn) Read(p []byte) (int, error) { return c.r.Read(p) }

// sslCipherStatus recognises SHOW [SESSION] STATUS LIKE 'Ssl_cipher' and
// returns its one-row answer.
func (s *session) sslCipherStatus(toks []token) (*mysqlproto.ResultSet, bool) {
	if n := len(toks); n > 0 && toks[n-1].is(";") {
		toks = toks[:n-1]
	}
	if len(toks) == 5 && toks[1].is("SESSION") {
		toks = append(toks[:1:1], toks[2:]...)
	}
	if len(toks) != 4 || !toks[0].is("SHOW") || !toks[1].is("STATUS") || !toks[2].is("LIKE") ||
		toks[3].kind != tokString || !strings.EqualFold(toks[3].val, "ssl_cipher") {
		return nil, false
	}
	rs := &mysqlproto.ResultSet{Columns: []mysqlproto.Column{
		mysqlproto.VarcharColumn("Variable_name"), mysqlproto.VarcharColumn("Value"),
	}}
	rs.Rows = [][]any{{"Ssl_cipher", s.cipher}}
	return rs, true
}

// TLSSessions is the number of sessions that logged in to the node over
// TLS since it started.
func (n *Node) TLSSessions() int64 { return n.tlsSessions.Load() }
