package reactor

// Logins in progress are capped (client_max_handshakes, in all and per
// client address) so that connections that never finish their login,
// each held up to client_handshake_timeout, cannot fill
// client_max_connections or obgate's memory. A connection past a cap is
// answered ERR 1040 in place of the greeting and closed by the accept
// loop itself: no goroutine, no session, no server connection.

import (
	"net"
	"net/netip"
	"time"

	"obgate/mysqlproto"
)

// admitHandshake takes a login slot for conn, or refuses conn (ERR 1040,
// closed) when a cap is reached. It runs on the Serve goroutine.
func (srv *Server) admitHandshake(conn net.Conn) (netip.Addr, bool) {
	src := ipOf(conn.RemoteAddr().String())
	cfg := srv.cfg.Load()
	if srv.handshakes.Take(src, cfg.ClientMaxHandshakes, cfg.ClientMaxHandshakesPerIP) {
		return src, true
	}
	_ = conn.SetWriteDeadline(time.Now().Add(refuseWriteTimeout))
	_, _ = conn.Write(greetingERR(mysqlproto.ERConCountError, tooManyConnections))
	_ = conn.Close()
	srv.metrics.refusedHandshakes.Inc()
	srv.handshakeRefusals.Note(nil)
	return src, false
}
