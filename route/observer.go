package route

import (
	"sync/atomic"

	"obgate/internal/topology"
)

// TableObserver is told about every routing-table snapshot a cluster
// publishes; health's status blocklist satisfies it. TableChanged runs on
// the goroutine that loaded the table (the cluster's refresh loop, or the
// first login waiting in Ready) and must not block for long.
type TableObserver interface {
	// TableChanged gives the named cluster's servers as of the snapshot
	// with the given generation; servers is the snapshot's, read-only.
	TableChanged(cluster string, generation uint64, servers []*topology.Server)
}

// observerHook is shared by a Clusters and its clusters.
type observerHook = atomic.Pointer[TableObserver]

// SetTableObserver installs o and tells it about every table already
// loaded. Any goroutine, at any time; nil removes it.
func (cs *Clusters) SetTableObserver(o TableObserver) {
	if o == nil {
		cs.observer.Store(nil)
		return
	}
	cs.observer.Store(&o)
	for _, c := range cs.All() {
		if t := c.Table(); t != nil {
			o.TableChanged(c.name, t.Generation, t.Servers)
		}
	}
}

// published tells the observer about t.
func (c *Cluster) published(t *Table) {
	if c.observer == nil {
		return
	}
	if o := c.observer.Load(); o != nil {
		(*o).TableChanged(c.name, t.Generation, t.Servers)
	}
}
