package metrics

import (
	"strings"
	"sync"
	"sync/atomic"
	"time"

	vm "github.com/VictoriaMetrics/metrics"
)

// The families whose labels come from traffic (cluster, tenant, schema,
// statement type) are the ones whose number of label sets has no bound of
// its own. Their series are limited, as ODP limits its own:
//
//   - monitor_item_limit caps the number of such label sets across all of
//     them. Over the cap a new label set is not created; each update it
//     would have taken is counted in obgate_monitor_item_dropped_total
//     instead, until the sweep frees room.
//   - monitor_item_max_idle_period: Sweep unregisters a label set whose
//     value has not moved for that long. Its next update creates it again,
//     starting from zero (rate() reads that as a counter reset).
//   - enable_extra_prometheus_metric: the extra families (odp_entry_total,
//     odp_request_byte) are exported only while it is on; turning it off
//     drops their limited label sets.
//
// A limited series lives in a Slot that its owner keeps (one per label
// set, in a Group's struct): the hot path is one atomic load of the slot
// and the counter's own atomic add; only creation takes the lock.

// Slot holds the counter of one limited label set, created on first use
// (Group.Create) and emptied again by Sweep. The zero Slot is empty. Any
// goroutine may read it.
type Slot struct{ c atomic.Pointer[vm.Counter] }

// Counter returns the slot's counter, or nil while it has none; one atomic
// load. An update racing with the sweep of its idle series may land on
// the counter just unregistered, and is lost.
func (s *Slot) Counter() *vm.Counter { return s.c.Load() }

// Defaults of the limits, ODP's defaults of the items that set them.
const (
	DefaultItemLimit   = 3000
	DefaultItemMaxIdle = 30 * time.Minute
)

// limitedSeries is the registry's record of one created slot.
type limitedSeries struct {
	c     *vm.Counter
	name  string
	extra bool
	last  uint64    // value at the last sweep that saw it move
	since time.Time // when that sweep ran; zero until the first sweep
}

// limits is the registry's book of limited series.
type limits struct {
	mu     sync.Mutex // guards series and the creation of slots
	series map[*Slot]*limitedSeries

	count   atomic.Int64 // len(series), read without the lock
	limit   atomic.Int64
	maxIdle atomic.Int64 // nanoseconds
	extra   atomic.Bool
	dropped *vm.Counter
}

// SetLimits sets monitor_item_limit and monitor_item_max_idle_period.
// Lowering the limit drops nothing at once; new label sets wait until the
// sweep has brought the count under it. Any goroutine.
func (r *Registry) SetLimits(limit int64, maxIdle time.Duration) {
	r.lim.limit.Store(limit)
	r.lim.maxIdle.Store(int64(maxIdle))
}

// SetExtra turns the extra families on or off
// (enable_extra_prometheus_metric). Off, they are left out of
// WritePrometheus and their limited label sets are dropped. Any goroutine.
func (r *Registry) SetExtra(on bool) {
	if r.lim.extra.Swap(on) == on || on {
		return
	}
	r.lim.mu.Lock()
	defer r.lim.mu.Unlock()
	for s, ls := range r.lim.series {
		if ls.extra {
			r.dropLocked(s, ls)
		}
	}
}

// Extra reports whether the extra families are exported.
func (r *Registry) Extra() bool { return r.lim.extra.Load() }

// LimitedSeries returns how many limited label sets exist.
func (r *Registry) LimitedSeries() int { return int(r.lim.count.Load()) }

// Sweep drops the limited label sets whose value has not moved for
// monitor_item_max_idle_period, as seen by earlier sweeps; now is the
// time of this one. It returns how many it dropped. reactor's sweeper
// calls it every second; tests call it with times of their own.
func (r *Registry) Sweep(now time.Time) int {
	maxIdle := time.Duration(r.lim.maxIdle.Load())
	r.lim.mu.Lock()
	defer r.lim.mu.Unlock()
	n := 0
	for s, ls := range r.lim.series {
		v := ls.c.Get()
		switch {
		case ls.since.IsZero() || v != ls.last:
			ls.last, ls.since = v, now
		case now.Sub(ls.since) >= maxIdle:
			r.dropLocked(s, ls)
			n++
		}
	}
	return n
}

func (r *Registry) dropLocked(s *Slot, ls *limitedSeries) {
	s.c.CompareAndSwap(ls.c, nil)
	if ls.extra {
		r.extraSet.UnregisterMetric(ls.name)
	} else {
		r.set.UnregisterMetric(ls.name)
	}
	delete(r.lim.series, s)
	r.lim.count.Add(-1)
}

// Group is the label set its limited series share (a tenant's cluster,
// tenant and schema), written first in each of their names. Made once per
// label set by its owner and kept; any goroutine may use it.
type Group struct {
	r      *Registry
	labels string // `a="b",c="d"`, escaped
}

// Group returns the group of the label name/value pairs.
func (r *Registry) Group(labels ...string) *Group {
	return &Group{r: r, labels: joinLabels(labels)}
}

// Create fills the empty slot s with the counter of family and the group's
// labels followed by labels, and returns it; extra marks a family of
// enable_extra_prometheus_metric. It returns nil, and creates nothing,
// while that item is off for an extra family, or when monitor_item_limit
// label sets already exist (counting the update as dropped). If another
// goroutine filled s first, that counter is returned.
//
// labels does not escape: a caller's variadic list stays on its stack, so
// the refused path allocates nothing.
func (g *Group) Create(s *Slot, extra bool, family string, labels ...string) *vm.Counter {
	lim := &g.r.lim
	if extra && !lim.extra.Load() {
		return nil
	}
	if lim.count.Load() >= lim.limit.Load() {
		if c := s.Counter(); c != nil {
			return c
		}
		lim.dropped.Inc()
		return nil
	}
	lim.mu.Lock()
	defer lim.mu.Unlock()
	if c := s.Counter(); c != nil {
		return c
	}
	if lim.count.Load() >= lim.limit.Load() || (extra && !lim.extra.Load()) {
		lim.dropped.Inc()
		return nil
	}
	name := g.r.Name(family, labels...)
	if g.labels != "" {
		// family{group labels,labels,const labels}
		rest, _ := strings.CutPrefix(name, family)
		rest = strings.TrimPrefix(rest, "{")
		if rest == "" {
			name = family + "{" + g.labels + "}"
		} else {
			name = family + "{" + g.labels + "," + rest
		}
	}
	set := g.r.set
	if extra {
		set = g.r.extraSet
	}
	c := set.GetOrCreateCounter(name)
	lim.series[s] = &limitedSeries{c: c, name: name, extra: extra}
	lim.count.Add(1)
	s.c.Store(c)
	return c
}

// joinLabels writes name/value pairs as `a="b",c="d"`.
func joinLabels(pairs []string) string {
	var sb strings.Builder
	for i := 0; i+1 < len(pairs); i += 2 {
		if sb.Len() > 0 {
			sb.WriteByte(',')
		}
		sb.WriteString(pairs[i])
		sb.WriteString(`="`)
		sb.WriteString(escapeLabel(pairs[i+1]))
		sb.WriteByte('"')
	}
	return sb.String()
}
