// Package burstlog rate-limits a warning about events that come in
// bursts: the first is logged at once, the rest are counted and reported
// together at most once per interval.
package burstlog

import (
	"sync"
	"time"
)

// Log rate-limits a warning about events that come in bursts (clients
// refused, accept failures): the first event is logged at once, later ones
// are counted and reported together at most once per interval, with the
// number of events since the previous line; the tail of a burst is
// reported one interval after the line before it. Any goroutine may call
// Note.
type Log struct {
	interval time.Duration
	// emit writes one line for n events; err is the latest event's error.
	// It is called without the lock held.
	emit func(n int64, err error)
	// now is time.Now outside tests.
	now func() time.Time

	mu        sync.Mutex
	lastLine  time.Time // when emit last ran; zero before the first line
	pending   int64     // events not reported yet
	lastErr   error
	scheduled bool // a flush of pending events is scheduled
}

// New returns a Log that calls emit at most once per interval.
func New(interval time.Duration, emit func(n int64, err error)) *Log {
	return &Log{interval: interval, emit: emit, now: time.Now}
}

// Note records one event.
func (b *Log) Note(err error) {
	b.mu.Lock()
	b.pending++
	b.lastErr = err
	now := b.now()
	if b.lastLine.IsZero() || now.Sub(b.lastLine) >= b.interval {
		n, e := b.take(now)
		b.mu.Unlock()
		b.emit(n, e)
		return
	}
	if !b.scheduled {
		b.scheduled = true
		time.AfterFunc(b.interval-now.Sub(b.lastLine), b.flush)
	}
	b.mu.Unlock()
}

// flush reports the events counted since the last line, if any.
func (b *Log) flush() {
	b.mu.Lock()
	b.scheduled = false
	if b.pending == 0 {
		b.mu.Unlock()
		return
	}
	n, e := b.take(b.now())
	b.mu.Unlock()
	b.emit(n, e)
}

// take returns the pending count and error and starts a new interval; the
// caller holds mu.
func (b *Log) take(now time.Time) (int64, error) {
	n, e := b.pending, b.lastErr
	b.pending, b.lastErr, b.lastLine = 0, nil, now
	return n, e
}
