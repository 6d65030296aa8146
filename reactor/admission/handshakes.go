package admission

import (
	"net/netip"
	"sync"
)

// HandshakeSlots counts logins in progress. The accept loop takes a slot,
// the login goroutine gives it back when the login ends either way. Safe
// for concurrent use; the zero value is ready.
type HandshakeSlots struct {
	mu    sync.Mutex
	total int64
	bySrc map[netip.Prefix]int64
}

// Take claims a slot for a connection from src, within max in all and
// perSrc from src (0: no limit). It reports whether it got one.
func (h *HandshakeSlots) Take(src netip.Addr, max, perSrc int64) bool {
	k := SourceKey(src)
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

// Give returns the slot taken for src.
func (h *HandshakeSlots) Give(src netip.Addr) {
	k := SourceKey(src)
	h.mu.Lock()
	defer h.mu.Unlock()
	h.total--
	if n := h.bySrc[k] - 1; n > 0 {
		h.bySrc[k] = n
	} else {
		delete(h.bySrc, k)
	}
}
