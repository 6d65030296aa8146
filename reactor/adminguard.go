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
//   - a source address that failed adminFailLimit times within
//     adminFailWindow is refused for adminBlockFor, so a password cannot
//     be guessed at network speed.

import (
	"net/netip"
	"sync"
	"time"
)

const (
	adminFailLimit  = 5
	adminFailWindow = time.Minute
	adminBlockFor   = time.Minute
	// adminFailSources bounds the addresses remembered; past it, the
	// oldest windows are dropped.
	adminFailSources = 4096
)

// loginFailures counts failed administrator logins per source. Login
// goroutines call it; its lock is never held on the statement path.
type loginFailures struct {
	mu    sync.Mutex
	bySrc map[netip.Prefix]*failRecord
}

type failRecord struct {
	first        time.Time // start of the current window
	count        int
	blockedUntil time.Time
}

// sourceKey is what failures are counted by: the address for IPv4, its
// /64 for IPv6 (one host commonly owns a whole /64).
func sourceKey(a netip.Addr) netip.Prefix {
	a = a.Unmap()
	if a.Is6() {
		p, _ := a.Prefix(64)
		return p
	}
	return netip.PrefixFrom(a, a.BitLen())
}

// blockedFor is how long src is still refused; 0 when it may try.
func (f *loginFailures) blockedFor(src netip.Addr, now time.Time) time.Duration {
	f.mu.Lock()
	defer f.mu.Unlock()
	r := f.bySrc[sourceKey(src)]
	if r == nil || !now.Before(r.blockedUntil) {
		return 0
	}
	return r.blockedUntil.Sub(now)
}

// fail records one failed login from src.
func (f *loginFailures) fail(src netip.Addr, now time.Time) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.bySrc == nil {
		f.bySrc = make(map[netip.Prefix]*failRecord)
	}
	k := sourceKey(src)
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
	if r.count >= adminFailLimit {
		r.blockedUntil = now.Add(adminBlockFor)
		r.first, r.count = now, 0
	}
}

// evict makes room: windows that ended go first; if none did, the one
// that started first. Called with f.mu held.
func (f *loginFailures) evict(now time.Time) {
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
