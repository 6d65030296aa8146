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
	"sync"
	"time"

	"obgate/mysqlproto"
)

// handshakeSlots counts logins in progress. The accept loop takes a slot,
// the login goroutine gives it back when the login ends either way.
type handshakeSlots struct {
	mu    sync.Mutex
	total int64
	bySrc map[netip.Prefix]int64
}

// take claims a slot for a connection from src, within max in all and
// perSrc from src (0: no limit). It reports whether it got one.
func (h *handshakeSlots) take(src netip.Addr, max, perSrc int64) bool {
	k := sourceKey(src)
	h.mu.Lock()
	defer h.mu.Unlock()
	if max > 0 && h.total >= max {
		return false
	}
	if perSrc > 0 && h.bySrc[k] >= perSrc {
		return false
	}
	if h.bySrc == nil {
		h.bySrc = make(map[netip.Prefix]int64)
	}
	h.total++
	h.bySrc[k]++
	return true
}

// give returns the slot taken for src.
func (h *handshakeSlots) give(src netip.Addr) {
	k := sourceKey(src)
	h.mu.Lock()
	defer h.mu.Unlock()
	h.total--
	if n := h.bySrc[k] - 1; n > 0 {
		h.bySrc[k] = n
	} else {
		delete(h.bySrc, k)
	}
}

// inProgress is the number of logins in progress.
func (h *handshakeSlots) inProgress() int64 {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.total
}

// admitHandshake takes a login slot for conn, or refuses conn (ERR 1040,
// closed) when a cap is reached. It runs on the Serve goroutine.
func (srv *Server) admitHandshake(conn net.Conn) (netip.Addr, bool) {
	src := ipOf(conn.RemoteAddr().String())
	cfg := srv.cfg.Load()
	if srv.handshakes.take(src, cfg.ClientMaxHandshakes, cfg.ClientMaxHandshakesPerIP) {
		return src, true
	}
	_ = conn.SetWriteDeadline(time.Now().Add(refuseWriteTimeout))
	_, _ = conn.Write(greetingERR(mysqlproto.ERConCountError, tooManyConnections))
	_ = conn.Close()
	srv.metrics.refusedHandshakes.Inc()
	srv.handshakeRefusals.note(nil)
	return src, false
}
