package route

import (
	"fmt"
	"sync/atomic"
	"time"
)

// EntryState is the state of a table location entry, as ODP names them
// (odp-behaviour.md §5.3). Changes go through compare-and-swap, so that
// exactly one request starts a refresh.
type EntryState int32

// Entry states.
const (
	EntryBorn     EntryState = iota // created, nothing fetched yet
	EntryBuilding                   // the first fetch is running; requests wait for it
	EntryAvail                      // fetched and believed right
	EntryDirty                      // believed wrong; refreshed by the next request after delay_update_entry_interval
	EntryUpdating                   // a refresh is running; the entry still serves requests
	EntryDeleted                    // replaced by a newer entry, or evicted
)

var entryStateNames = [...]string{"BORN", "BUILDING", "AVAIL", "DIRTY", "UPDATING", "DELETED"}

func (s EntryState) String() string { return enumName(s, entryStateNames[:]) }

// Replica is one replica of a tablet.
type Replica struct {
	Addr     string // ip:sql_port
	Leader   bool
	ReadOnly bool // a READONLY replica (replica_type 16)
}

// TabletLocation is where the replicas of one tablet are; the leader, when
// there is one, comes first. Immutable.
type TabletLocation struct {
	TabletID int64
	Replicas []Replica
}

// Leader returns the leader's address.
func (l *TabletLocation) Leader() (string, bool) {
	if l != nil && len(l.Replicas) > 0 && l.Replicas[0].Leader {
		return l.Replicas[0].Addr, true
	}
	return "", false
}

// TableEntry is the location of one table of one tenant: its id and
// schema version, its partitioning (Part, nil for a table that is not
// partitioned) and the replicas of each tablet. Everything but the state
// and the timestamps is immutable once the entry is published; a refresh
// publishes a new entry and marks the old one DELETED.
type TableEntry struct {
	Tenant, Database, Table string

	// Exists is false when the cluster does not know the table (a
	// temporary table, information_schema, a typo): such statements go to
	// the tenant's server list.
	Exists        bool
	TableID       int64
	PartNum       int
	ReplicaNum    int
	SchemaVersion int64
	TableType     int
	DupReplica    bool
	Part          *PartDesc // nil: one tablet, First

	// First is the location of the table's first tablet (the tablet_id = 0
	// rows): the whole table when it is not partitioned.
	First *TabletLocation
	// tablets maps every tablet id of a partitioned table to its location.
	tablets map[int64]*TabletLocation
	// holders lists each server holding a replica of any tablet once.
	holders []string

	Created time.Time
	Updated time.Time // when the data was fetched
	// FetchErr is why the last fetch failed ("" after a good one).
	FetchErr string

	state      atomic.Int32
	lastAccess atomic.Int64 // unix nanoseconds
	force      atomic.Bool  // refresh without waiting for delay_update_entry_interval
	lastTry    atomic.Int64 // unix nanoseconds of the last failed refresh
	// ready is closed when the first fetch of a BUILDING entry ends.
	ready chan struct{}
	// updated, when set, is closed once the refresh a request queued (and
	// waits for, enable_async_pull_location_cache off) has published its
	// result; set by that request before the refresh is queued, taken and
	// closed by whoever ends the refresh.
	updated atomic.Pointer[chan struct{}]
	size    int64
}

// State is the entry's current state.
func (e *TableEntry) State() EntryState { return EntryState(e.state.Load()) }

// LastAccess is when a request last used the entry.
func (e *TableEntry) LastAccess() time.Time { return time.Unix(0, e.lastAccess.Load()) }

// Tablet returns the location of a tablet of the table.
func (e *TableEntry) Tablet(id int64) (*TabletLocation, bool) {
	if e.Part == nil {
		if e.First != nil && (id == 0 || id == e.First.TabletID) {
			return e.First, true
		}
		return nil, false
	}
	l, ok := e.tablets[id]
	return l, ok
}

// Tablets returns the locations of every tablet, in tablet id order.
func (e *TableEntry) Tablets() []*TabletLocation {
	if e.Part == nil {
		if e.First == nil {
			return nil
		}
		return []*TabletLocation{e.First}
	}
	out := make([]*TabletLocation, 0, len(e.tablets))
	for _, id := range e.Part.Tablets() {
		if l, ok := e.tablets[id]; ok {
			out = append(out, l)
		}
	}
	return out
}

// Holders are the servers that hold a replica of any of the table's
// tablets; a statement whose partition is unknown goes to one of them.
func (e *TableEntry) Holders() []string { return e.holders }

// MarkDirty says the entry is wrong (a partition miss, NOT_MASTER, a
// connect error on its leader). The next request after
// delay_update_entry_interval since the entry was fetched refreshes it;
// with force, the next request refreshes it at once. Any goroutine.
func (e *TableEntry) MarkDirty(force bool) bool {
	if force {
		e.force.Store(true)
	}
	return e.state.CompareAndSwap(int32(EntryAvail), int32(EntryDirty))
}

// releaseUpdateWaiter closes the channel a request waiting for the
// entry's refresh waits on, if there is one.
func (e *TableEntry) releaseUpdateWaiter() {
	if ch := e.updated.Swap(nil); ch != nil {
		close(*ch)
	}
}

// needsUpdate reports whether a request should start a refresh now.
func (e *TableEntry) needsUpdate(now time.Time, delay, expire time.Duration) bool {
	switch e.State() {
	case EntryDirty:
		if t := e.lastTry.Load(); t != 0 && now.UnixNano()-t < int64(max(delay, minRetryFetch)) {
			return false // the last refresh failed: not again at once
		}
		return e.force.Load() || now.Sub(e.Updated) >= delay
	case EntryAvail:
		if !e.Exists {
			return now.Sub(e.Updated) >= max(delay, recheckMissing)
		}
		return expire > 0 && now.Sub(e.Updated) >= expire
	}
	return false
}

// minRetryFetch spaces the refreshes of an entry whose refresh failed;
// recheckMissing is how long the cluster's "no such table" is believed, so
// that a table created later is found.
const (
	minRetryFetch  = 100 * time.Millisecond
	recheckMissing = 30 * time.Second
)

// estimateSize is the entry's memory, roughly, for routing_cache_mem_limited.
func (e *TableEntry) estimateSize() int64 {
	n := int64(256 + len(e.Tenant) + len(e.Database) + len(e.Table))
	count := func(l *TabletLocation) {
		n += 48
		for _, r := range l.Replicas {
			n += 40 + int64(len(r.Addr))
		}
	}
	if e.First != nil {
		count(e.First)
	}
	for _, l := range e.tablets {
		count(l)
		n += 16
	}
	if e.Part != nil {
		n += int64(e.Part.NumTablets()) * 64
	}
	return n
}

func (e *TableEntry) String() string {
	return fmt.Sprintf("%s.%s.%s(%s)", e.Tenant, e.Database, e.Table, e.State())
}
