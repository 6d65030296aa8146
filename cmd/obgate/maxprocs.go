package main

import (
	"log/slog"
	"os"
	"runtime"
	"sync"
	"time"
)

// The CPU governor: how many CPUs Go code may run on (GOMAXPROCS).
//
// A fixed go_max_procs is applied as it is. With 0 (the default) obgate
// chooses: every CPU the process may use (Go's default, which follows a
// cgroup limit) while statements run side by side, one CPU while about one
// is in flight at a time. At one statement at a time the extra CPUs only
// cost: netpoll's event loop yields after every batch of events, and Go
// wakes an idle CPU's thread for the yield, which finds nothing and sleeps
// again (two futex calls and a context switch per batch, two batches per
// statement). With one CPU there is no idle CPU to wake.
//
// The load is read from reactor.Server.BusyTime: its growth over a tick,
// divided by the tick, is the average number of statements and logins in
// flight. One tick above governorWide widens at once (so a burst is never
// held on one CPU for longer than a tick); governorNarrowTicks ticks in a
// row below governorNarrow narrow it again.
const (
	governorTick        = 100 * time.Millisecond
	governorWide        = 2.5 // in flight on average: use every CPU at or above it
	governorNarrow      = 1.5 // and one CPU after a second below it
	governorNarrowTicks = 10
)

// procsGovernor applies go_max_procs. set may be called from any
// goroutine (config changes); run is its own goroutine.
type procsGovernor struct {
	log *slog.Logger

	mu       sync.Mutex
	fixed    int64 // go_max_procs; 0 = chosen by load
	envFixed bool  // GOMAXPROCS is set in the environment: Go's default is that, unchanged
	wide     int   // Go's default number of CPUs
	narrow   bool  // running on one CPU by choice
	calm     int   // ticks in a row below governorNarrow
}

func newProcsGovernor(log *slog.Logger) *procsGovernor {
	_, env := os.LookupEnv("GOMAXPROCS")
	return &procsGovernor{log: log, envFixed: env}
}

// set applies go_max_procs n: n CPUs, or for 0 Go's default until the
// load says otherwise. Any goroutine.
func (g *procsGovernor) set(n int64) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.fixed, g.narrow, g.calm = n, false, 0
	if n > 0 {
		runtime.GOMAXPROCS(int(n))
		return
	}
	runtime.SetDefaultGOMAXPROCS()
	g.wide = runtime.GOMAXPROCS(0)
}

// adaptive reports whether the load decides.
func (g *procsGovernor) adaptive() bool {
	return g.fixed == 0 && !g.envFixed && g.wide > 1
}

// observe takes one tick's average number of statements in flight and
// narrows or widens. Called by run.
func (g *procsGovernor) observe(inFlight float64) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if !g.adaptive() {
		return
	}
	switch {
	case g.narrow && inFlight >= governorWide:
		g.narrow, g.calm = false, 0
		runtime.SetDefaultGOMAXPROCS()
		g.wide = runtime.GOMAXPROCS(0)
		g.log.Debug("go_max_procs=0: every CPU", "in_flight", inFlight, "cpus", g.wide)
	case !g.narrow && inFlight < governorNarrow:
		if g.calm++; g.calm >= governorNarrowTicks {
			g.narrow, g.calm = true, 0
			runtime.GOMAXPROCS(1)
			g.log.Debug("go_max_procs=0: one CPU", "in_flight", inFlight)
		}
	case !g.narrow:
		g.calm = 0
	}
}

// run reads busy (the summed time of finished statements and logins)
// every tick until stop is closed.
func (g *procsGovernor) run(busy func() time.Duration, stop <-chan struct{}) {
	tick := time.NewTicker(governorTick)
	defer tick.Stop()
	last, lastAt := busy(), time.Now()
	for {
		select {
		case <-stop:
			return
		case now := <-tick.C:
			b := busy()
			if span := now.Sub(lastAt); span > 0 {
				g.observe(float64(b-last) / float64(span))
			}
			last, lastAt = b, now
		}
	}
}
