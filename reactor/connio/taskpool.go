package connio

import (
	"context"
	"runtime"
	"sync/atomic"
)

// TaskPool runs netpoll's callbacks (its runner) on reused goroutines. A
// task goes to a worker that is parked waiting for one, or, when none is,
// to a new goroutine, so the poller that hands it over never waits: a
// bounded pool that blocked when full could stall every connection of the
// poller, and one that refused would lose the task and leave its
// connection hung (netpoll ignores a refusal). A worker that finds no task
// parks for the next one while fewer than maxIdle are parked, and
// otherwise ends; so idle connections hold no goroutine, and a burst
// leaves at most maxIdle goroutines behind.
//
// A task must not panic: netpoll's tasks re-raise what the callback
// raised, and obgate's callbacks contain their panics (containPanic); a
// worker that gets a panic through anyway recovers it, and ends.
type TaskPool struct {
	handoff chan func()
	idle    atomic.Int32
	maxIdle int32
	// spawned counts goroutines started; tests read it (a pool that
	// works starts few).
	spawned atomic.Uint64
}

func NewTaskPool(maxIdle int) *TaskPool {
	return &TaskPool{handoff: make(chan func()), maxIdle: int32(maxIdle)}
}

// Tasks is the process's netpoll runner (netpoll is configured once per
// process); it keeps two idle workers per CPU, at least four: enough for
// the hand-overs of a busy poller, few enough that the goroutines a burst
// leaves behind stay within what a leak check tolerates.
var Tasks = NewTaskPool(max(4, 2*runtime.GOMAXPROCS(0)))

// Run hands f to an idle worker or starts one; it never blocks. It has
// netpoll's runner signature; the context is not used.
func (p *TaskPool) Run(_ context.Context, f func()) {
	select {
	case p.handoff <- f:
	default:
		p.spawned.Add(1)
		go p.work(f)
	}
}

func (p *TaskPool) work(f func()) {
	defer func() { _ = recover() }()
	for {
		f()
		if p.idle.Add(1) > p.maxIdle {
			p.idle.Add(-1)
			return
		}
		f = <-p.handoff
		p.idle.Add(-1)
	}
}
