package route

import (
	"cmp"
	"context"
	"sort"
	"sync"
	"sync/atomic"
	"time"
)

// locationCache holds a cluster's table entries. The statement path reads
// it with one atomic load and a map lookup; adding an entry copies the map
// (tables are added rarely, read constantly). Fetches run on the cache's
// own goroutine, one table at a time, over the cluster's location
// connection; an entry in refresh keeps serving requests.
type locationCache struct {
	c     *Cluster
	slots atomic.Pointer[map[string]*locSlot]
	mu    sync.Mutex // serialises writers of slots
	bytes atomic.Int64

	queue chan *locSlot // slots whose entry wants a fetch
	// clock is a coarse unix-nanosecond time the fetcher goroutine keeps
	// (every clockTick), so that a lookup reads the time with one atomic
	// load instead of a clock call; 0 until the fetcher runs.
	clock atomic.Int64
	// Counters for SHOW PROXYROUTE and metrics.
	fetches, fetchErrors, evictions atomic.Uint64
}

// locSlot is a table's place in the cache: the current entry, replaced
// whole by each fetch.
type locSlot struct {
	key                     string
	tenant, database, table string
	cur                     atomic.Pointer[TableEntry]
}

func newLocationCache(c *Cluster) *locationCache {
	lc := &locationCache{c: c, queue: make(chan *locSlot, 1024)}
	m := map[string]*locSlot{}
	lc.slots.Store(&m)
	return lc
}

// locationKey writes the cache key of a table into buf: tenant, database
// and table separated by NUL bytes.
func locationKey[D ~string | ~[]byte](buf []byte, tenant string, db D, table []byte) []byte {
	buf = append(buf[:0], tenant...)
	buf = append(buf, 0)
	buf = append(buf, db...)
	buf = append(buf, 0)
	return append(buf, table...)
}

// lookup returns the entry of a table, creating it (and queueing its first
// fetch) when the cache has none. key is locationKey's output for tenant,
// a database of dbLen bytes and table; it is only read. A DIRTY entry that
// is due is queued for a refresh and returned as it is. With
// enable_async_pull_location_cache off, the request that queued the
// refresh also gets updated, closed when the refresh has published its
// result (the caller waits for it, as ODP's caller then does); otherwise,
// and for every other request, updated is nil. Allocation-free when the
// table is cached and no refresh is waited for. Any goroutine.
func (lc *locationCache) lookup(key []byte, tenant string, dbLen int, table []byte) (e *TableEntry, updated <-chan struct{}) {
	slot := (*lc.slots.Load())[string(key)]
	if slot == nil {
		db := key[len(tenant)+1 : len(tenant)+1+dbLen]
		slot = lc.add(string(key), tenant, string(db), string(table))
	}
	e = slot.cur.Load()
	now := lc.now()
	e.lastAccess.Store(now.UnixNano())
	cfg := lc.c.cfg.Load()
	if e.needsUpdate(now, cfg.DelayUpdateEntryInterval, cfg.LocationExpirePeriodTime) {
		from := e.State()
		if e.state.CompareAndSwap(int32(from), int32(EntryUpdating)) {
			if !cfg.EnableAsyncPullLocationCache {
				ch := make(chan struct{})
				e.updated.Store(&ch)
				updated = ch
			}
			lc.enqueue(slot, e, from)
		}
	}
	return e, updated
}

// cached reports whether lookup of key would return an entry at once,
// without a wait: the table has an entry that is not being built, and
// it needs no refresh that its statement would wait for
// (enable_async_pull_location_cache off). It changes nothing.
func (lc *locationCache) cached(key []byte) bool {
	slot := (*lc.slots.Load())[string(key)]
	if slot == nil {
		return false
	}
	e := slot.cur.Load()
	if e.State() == EntryBuilding {
		return false
	}
	cfg := lc.c.cfg.Load()
	return cfg.EnableAsyncPullLocationCache ||
		!e.needsUpdate(lc.now(), cfg.DelayUpdateEntryInterval, cfg.LocationExpirePeriodTime)
}

// waitUpdate blocks until the fetch that updated belongs to (a refresh,
// or the first fetch) has published its result or ctx is done, and
// returns the slot's entry then: the fresh one, or e itself when the fetch
// failed or is still running.
func (lc *locationCache) waitUpdate(ctx context.Context, e *TableEntry, updated <-chan struct{}) *TableEntry {
	select {
	case <-updated:
	case <-ctx.Done():
		return e
	}
	key := locationKey(nil, e.Tenant, e.Database, []byte(e.Table))
	if s := (*lc.slots.Load())[string(key)]; s != nil {
		return s.cur.Load()
	}
	return e
}

// clockTick is the resolution of the cache's clock: far finer than
// delay_update_entry_interval and the LRU order need.
const clockTick = 100 * time.Millisecond

// now returns the cache's coarse time (the real time before the fetcher
// runs).
func (lc *locationCache) now() time.Time {
	if ns := lc.clock.Load(); ns != 0 {
		return time.Unix(0, ns)
	}
	return time.Now()
}

// add creates the slot of a new table with a BUILDING entry and queues its
// first fetch; a concurrent add of the same table returns the first slot.
func (lc *locationCache) add(key, tenant, db, table string) *locSlot {
	lc.mu.Lock()
	defer lc.mu.Unlock()
	old := *lc.slots.Load()
	if s, ok := old[key]; ok {
		return s
	}
	s := &locSlot{key: key, tenant: tenant, database: db, table: table}
	e := &TableEntry{Tenant: tenant, Database: db, Table: table, Created: time.Now(), ready: make(chan struct{})}
	e.state.Store(int32(EntryBuilding))
	s.cur.Store(e)
	m := make(map[string]*locSlot, len(old)+1)
	for k, v := range old {
		m[k] = v
	}
	m[key] = s
	lc.slots.Store(&m)
	lc.enqueue(s, e, EntryBorn)
	return s
}

// enqueue hands a slot to the fetcher. When the queue is full the entry
// goes back to the state it had, so that a later request tries again.
func (lc *locationCache) enqueue(s *locSlot, e *TableEntry, from EntryState) {
	select {
	case lc.queue <- s:
	default:
		if from == EntryBorn {
			lc.finish(s, e, nil, errQueueFull)
			return
		}
		e.state.Store(int32(from))
		e.releaseUpdateWaiter()
	}
}

// wait blocks until a BUILDING entry's first fetch ends or ctx is done,
// and returns the slot's entry then.
func (lc *locationCache) wait(ctx context.Context, e *TableEntry) *TableEntry {
	if e.State() != EntryBuilding || e.ready == nil {
		return e
	}
	return lc.waitUpdate(ctx, e, e.ready)
}

// run fetches queued tables until stop closes. The cluster's refresh
// goroutine set starts it.
func (lc *locationCache) run(stop <-chan struct{}) {
	tick := time.NewTicker(clockTick)
	defer tick.Stop()
	lc.clock.Store(time.Now().UnixNano())
	for {
		select {
		case <-stop:
			return
		case now := <-tick.C:
			lc.clock.Store(now.UnixNano())
		case s := <-lc.queue:
			lc.c.contain("location_fetch", func() { lc.refresh(s) })
		}
	}
}

// refresh fetches one table and publishes the result.
func (lc *locationCache) refresh(s *locSlot) {
	old := s.cur.Load()
	cfg := lc.c.cfg.Load()
	ctx, cancel := context.WithTimeout(context.Background(), 2*cfg.ShortAsyncTaskTimeout)
	defer cancel()
	lc.fetches.Add(1)
	fresh, err := lc.c.fetchTable(ctx, s.tenant, s.database, s.table)
	if err != nil {
		lc.fetchErrors.Add(1)
	}
	lc.finish(s, old, fresh, err)
}

// finish publishes a fetch's result: the new entry replaces old, which is
// marked DELETED. A failed refresh leaves old in place, DIRTY; a failed
// first fetch publishes an entry that knows nothing (requests use the
// tenant server list) and is tried again after delay_update_entry_interval.
func (lc *locationCache) finish(s *locSlot, old, fresh *TableEntry, err error) {
	defer old.releaseUpdateWaiter()
	if err != nil {
		if old.State() != EntryBuilding {
			old.lastTry.Store(time.Now().UnixNano())
			old.state.Store(int32(EntryDirty))
			return
		}
		fresh = &TableEntry{Tenant: old.Tenant, Database: old.Database, Table: old.Table, FetchErr: err.Error()}
		fresh.state.Store(int32(EntryDirty))
	} else {
		fresh.state.Store(int32(EntryAvail))
	}
	fresh.Created = old.Created
	fresh.Updated = time.Now()
	fresh.lastAccess.Store(old.lastAccess.Load())
	fresh.size = fresh.estimateSize()
	s.cur.Store(fresh)
	lc.bytes.Add(fresh.size - old.size)
	old.state.Store(int32(EntryDeleted))
	if old.ready != nil {
		close(old.ready)
	}
	lc.evictOverLimit()
}

// evictOverLimit drops the least recently used entries while the cache is
// over routing_cache_mem_limited, down to 90% of it.
func (lc *locationCache) evictOverLimit() {
	limit := lc.c.cfg.Load().RoutingCacheMemLimited
	if limit <= 0 || lc.bytes.Load() <= limit {
		return
	}
	lc.mu.Lock()
	defer lc.mu.Unlock()
	old := *lc.slots.Load()
	slots := make([]*locSlot, 0, len(old))
	for _, s := range old {
		slots = append(slots, s)
	}
	sort.Slice(slots, func(i, j int) bool {
		return slots[i].cur.Load().lastAccess.Load() < slots[j].cur.Load().lastAccess.Load()
	})
	m := make(map[string]*locSlot, len(old))
	for k, v := range old {
		m[k] = v
	}
	for _, s := range slots {
		if lc.bytes.Load() <= limit*9/10 {
			break
		}
		e := s.cur.Load()
		if st := e.State(); st == EntryBuilding || st == EntryUpdating {
			continue // its fetch will publish into the slot
		}
		delete(m, s.key)
		e.state.Store(int32(EntryDeleted))
		lc.bytes.Add(-e.size)
		lc.evictions.Add(1)
	}
	lc.slots.Store(&m)
}

// markTenantDirty marks every entry of a tenant dirty (5150 TENANT_NOT_IN_SERVER,
// 4666 CLUSTER_NO_MATCH), forcing a refresh on next use.
func (lc *locationCache) markTenantDirty(tenant string) {
	for _, s := range *lc.slots.Load() {
		if s.tenant == tenant {
			s.cur.Load().MarkDirty(true)
		}
	}
}

// entries returns the current entries, sorted by tenant, database, table.
func (lc *locationCache) entries() []*TableEntry {
	m := *lc.slots.Load()
	out := make([]*TableEntry, 0, len(m))
	for _, s := range m {
		out = append(out, s.cur.Load())
	}
	sort.Slice(out, func(i, j int) bool {
		a, b := out[i], out[j]
		return cmp.Or(cmp.Compare(a.Tenant, b.Tenant), cmp.Compare(a.Database, b.Database),
			cmp.Compare(a.Table, b.Table)) < 0
	})
	return out
}
