package backend

// TLS on server sessions (enable_server_ssl): right after the server's
// greeting, before any login goes out, obgate sends an SSLRequest and runs
// the TLS handshake, so that every login on the connection (the client's
// relayed one in mysql routing mode, obgate's own otherwise) and
// everything after it travels encrypted; OB 2.0 frames and the compressed
// protocol run inside the TLS stream. A TLS server session is served by
// the goroutine path: netpoll's zero-copy buffers hold ciphertext, so the
// poller path (io_poll.go) does not take it.

import (
	"crypto/tls"
	"errors"
	"fmt"
	"net"

	"obgate/mysqlproto"
)

// ErrServerNoTLS reports a server that offers no TLS where
// server_ssl_verify requires it.
var ErrServerNoTLS = errors.New("the server offers no TLS, and server_ssl_verify requires it")

// PlanTLS decides, from the greeting h of the server session b just
// dialled, whether its login goes over TLS: b.startTLS then runs before
// it. A server that offers no TLS stays plain text unless required.
func (b *Conn) PlanTLS(h *mysqlproto.Handshake, tlsCfg *tls.Config, required bool) error {
	if tlsCfg == nil {
		return nil
	}
	if !h.Capability.Has(mysqlproto.ClientSSL) {
		if required {
			b.Close()
			return fmt.Errorf("%s: %w", b.Addr, ErrServerNoTLS)
		}
		return nil
	}
	b.PendingTLS = tlsCfg
	return nil
}

// StartTLS sends the SSLRequest and runs the TLS handshake on a server
// session whose login is about to go out (pio read its greeting), when
// planTLS asked for it; otherwise it returns pio. The SSLRequest carries
// the login's own capabilities and character set: servers keep the
// capabilities of the SSLRequest (MariaDB does). The connection's
// deadline bounds the handshake. It returns the packet I/O to send the
// login with (its next sequence id follows the SSLRequest's); on failure
// the caller closes b. Only the goroutine logging b in calls it, before
// any other goroutine reads b.conn.
func (b *Conn) StartTLS(pio *mysqlproto.PacketIO, caps mysqlproto.Capability, maxPacket uint32, charset byte) (*mysqlproto.PacketIO, error) {
	cfg := b.PendingTLS
	if cfg == nil {
		return pio, nil
	}
	b.PendingTLS = nil
	if err := pio.WritePacketFlush(mysqlproto.AppendSSLRequest(nil, caps|mysqlproto.ClientSSL, maxPacket, charset)); err != nil {
		return nil, fmt.Errorf("SSLRequest to %s: %w", b.Addr, err)
	}
	tc := tls.Client(b.NetConn, cfg)
	if err := tc.Handshake(); err != nil {
		return nil, fmt.Errorf("TLS handshake with %s: %w", b.Addr, err)
	}
	seq := pio.Sequence()
	b.NetConn = tc
	b.TLS = true
	next := mysqlproto.NewPacketIO(tc, tc)
	next.SetSequence(seq)
	return next, nil
}

// socketOf is the TCP (or netpoll) connection under conn: the TLS layer
// unwrapped, for the system calls that need the descriptor.
func socketOf(conn net.Conn) net.Conn {
	if tc, ok := conn.(*tls.Conn); ok {
		return tc.NetConn()
	}
	return conn
}
