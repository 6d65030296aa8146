package route

import (
	"errors"
	"fmt"
	"runtime/debug"
	"sync/atomic"
)

// Background work (the refresh loop of each cluster) recovers a panic in
// one round and goes on with the next: a bug there must not take the
// process down, nor stop the routing table from being refreshed.

// panicHook is shared by a Clusters and its clusters.
type panicHook = atomic.Pointer[func(where string)]

// SetPanicHook installs f, which is told about every panic recovered in
// the clusters' background work with where it happened
// ("cluster_refresh"); reactor counts them in obgate_panic_total. A nil f
// removes the hook. Any goroutine, at any time.
func (cs *Clusters) SetPanicHook(f func(where string)) {
	if f == nil {
		cs.panics.Store(nil)
		return
	}
	cs.panics.Store(&f)
}

// errFetchAborted is what callers waiting on a server-list fetch get when
// the fetch ended without a result (it panicked).
var errFetchAborted = errors.New("route: tenant server-list fetch was aborted")

// contain runs f, one round of cluster c's background work, on the
// calling goroutine, and recovers a panic in it: logged with its stack,
// passed to the panic hook, and the internal connection dropped, since the
// panic may have left it in the middle of an exchange.
func (c *Cluster) contain(where string, f func()) {
	defer func() {
		v := recover()
		if v == nil {
			return
		}
		if c.panics != nil {
			if h := c.panics.Load(); h != nil {
				(*h)(where)
			}
		}
		c.logPanic(where, v)
		c.dropMeta()
	}()
	f()
}

// logPanic logs a recovered panic with the stack of the goroutine that
// recovered it; a logger that panics in turn is ignored.
func (c *Cluster) logPanic(where string, v any) {
	defer func() { _ = recover() }()
	c.log.Error("panic recovered; background work goes on", "where", where,
		"panic", fmt.Sprint(v), "stack", string(debug.Stack()))
}

// dropMeta closes the internal connection; the next round opens another.
func (c *Cluster) dropMeta() {
	c.loadMu.Lock()
	defer c.loadMu.Unlock()
	if c.meta != nil {
		_ = c.meta.Close()
		c.meta = nil
	}
}
