package health

import (
	"sync/atomic"
	"time"
)

// windowBins is how many time bins a failure window has, as in ODP.
const windowBins = 17

// failWindow counts failure events in a sliding window of fixed time bins,
// without locks: each bin is one atomic word holding the bin's sequence
// number (which bin of time it counts) and its count. Any goroutine may
// add events and count them at once; an event that races with its bin
// being recycled may be lost, which a failure counter can afford.
//
// The window of w seconds has bins of (w+17)/17 seconds (at least 1), so
// its effective length is 17 bins, as ODP's ObFailHistory.
type failWindow struct {
	binNanos atomic.Int64 // bin length; 0 until configured
	bins     [windowBins]atomic.Uint64
	last     atomic.Int64 // unix nanoseconds of the last event, 0 when none
}

// binLenFor is the bin length for a window, as ODP computes it.
func binLenFor(window time.Duration) time.Duration {
	sec := (int64(window/time.Second) + windowBins) / windowBins
	return time.Duration(max(sec, 1)) * time.Second
}

// configure sets the window length. A different length resets the
// history, as a changed congestion_fail_window does in ODP.
func (w *failWindow) configure(window time.Duration) {
	bin := int64(binLenFor(window))
	if w.binNanos.Swap(bin) != bin {
		w.reset()
	}
}

// reset forgets every event.
func (w *failWindow) reset() {
	for i := range w.bins {
		w.bins[i].Store(0)
	}
	w.last.Store(0)
}

// add records one event at now and returns the number of events in the
// window ending at now.
func (w *failWindow) add(now int64) int {
	bin := w.binNanos.Load()
	if bin <= 0 {
		return 0
	}
	seq := (uint64(now/bin) + 1) & 0xffffffff // 0 marks an empty bin
	slot := &w.bins[seq%windowBins]
	for {
		old := slot.Load()
		next := seq<<32 | 1
		if old>>32 == seq {
			next = old + 1
		}
		if slot.CompareAndSwap(old, next) {
			break
		}
	}
	w.last.Store(now)
	return w.count(now)
}

// count returns the number of events in the window ending at now.
func (w *failWindow) count(now int64) int {
	bin := w.binNanos.Load()
	if bin <= 0 {
		return 0
	}
	cur := (uint64(now/bin) + 1) & 0xffffffff
	n := 0
	for i := range w.bins {
		v := w.bins[i].Load()
		seq := v >> 32
		if seq != 0 && seq <= cur && cur-seq < windowBins {
			n += int(v & 0xffffffff)
		}
	}
	return n
}

// lastEvent is the time of the last event (unix nanoseconds), 0 when none.
func (w *failWindow) lastEvent() int64 { return w.last.Load() }
