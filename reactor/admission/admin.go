package admission

// A source address that failed AdminFailLimit administrator logins within
// adminFailWindow is refused for adminBlockFor, so that a password cannot
// be guessed at network speed. Who may try at all is reactor's
// adminlogin.go.

import (
	"net/netip"
	"sync"
	"time"
)

const (
	// AdminFailLimit is how many failed logins within adminFailWindow
	// block a source.
	AdminFailLimit  = 5
	adminFailWindow = time.Minute
	adminBlockFor   = time.Minute
	// adminFailSources bounds the addresses remembered; past it, the
	// oldest windows are dropped.
	adminFailSources = 4096
)

// AdminFailures counts failed administrator logins per source. Login
// goroutines call it; the zero value is ready.
type AdminFailures struct {
	mu    sync.Mutex
	bySrc map[netip.Prefix]*failRecord
}

type failRecord struct {
	first        time.Time // start of the current window
	count        int
	blockedUntil time.Time
}

// BlockedFor is how long src is still refused; 0 when it may try.
func (f *AdminFailures) BlockedFor(src netip.Addr, now time.Time) time.Duration {
	f.mu.Lock()
	defer f.mu.Unlock()
	r := f.bySrc[SourceKey(src)]
	if r == nil || !now.Before(r.blockedUntil) {
		return 0
	}
	return r.blockedUntil.Sub(now)
}

// Fail records one failed login from src: the AdminFailLimit-th within
// adminFailWindow blocks it for adminBlockFor.
func (f *AdminFailures) Fail(src netip.Addr, now time.Time) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.bySrc == nil {
		f.bySrc = make(map[netip.Prefix]*failRecord)
	}
	k := SourceKey(src)
	r := f.bySrc[k]
	if r == nil {
		if len(f.bySrc) >= adminFailSources {
			f.evict(now)
		}
		r = &failRecord{first: now}
		f.bySrc[k] = r
	}
	if now.Sub(r.first) > adminFailWindow {
		r.first, r.count = now, 0
	}
	r.count++
	if r.count >= AdminFailLimit {
		r.blockedUntil = now.Add(adminBlockFor)
		r.first, r.count = now, 0
	}
}

// evict makes room: windows that ended go first; if none did, the one
// that started first. Called with f.mu held.
func (f *AdminFailures) evict(now time.Time) {
	var oldestKey netip.Prefix
	var oldest time.Time
	for k, r := range f.bySrc {
		if now.Sub(r.first) > adminFailWindow && !now.Before(r.blockedUntil) {
			delete(f.bySrc, k)
			continue
		}
		if oldest.IsZero() || r.first.Before(oldest) {
			oldestKey, oldest = k, r.first
		}
	}
	if len(f.bySrc) >= adminFailSources {
		delete(f.bySrc, oldestKey)
	}
}
