package route

import "sync/atomic"

// TableObserver is told about every routing-table snapshot a cluster
// publishes; health's status blocklist satisfies it. TableChanged runs on
// the goroutine that loaded the table (the cluster's refresh loop, or the
// first login waiting in Ready) and must not block for long.
type TableObserver interface {
	TableChanged(c *Cluster, t *Table)
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
			o.TableChanged(c, t)
		}
	}
}

// published tells the observer about t.
func (c *Cluster) published(t *Table) {
	if c.observer == nil {
		return
	}
	if o := c.observer.Load(); o != nil {
		(*o).TableChanged(c, t)
	}
}
