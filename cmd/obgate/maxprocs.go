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
// chooses: one CPU while one is enough, every CPU the process may use
// (Go's default, which follows a cgroup limit) when it is not. On one CPU
// the idle CPUs cost nothing; with more, netpoll's event loop yields after
// every batch of events and Go wakes an idle CPU's thread for the yield,
// which finds nothing and sleeps again (two futex calls and a context
// switch per batch).
//
// "Enough" is read from the process itself every tick (loadsample.go):
// the CPU time the kernel charged it, how many of its goroutines waited
// for a CPU on average, and whether any client I/O ran on Go's network
// poller. Statements that only wait on a server cost none of these, so
// they keep obgate on one CPU however many are in flight.
//
// One CPU suits the event loops only. A goroutine that Go's network
// poller wakes (a login, a TLS or client_io_mode=net session) needs the
// CPU that the event loop holds while it blocks in epoll_wait, and gets it
// only when Go's sysmon takes it away, a wait of up to two of sysmon's
// sleeps (timer_slack stretches them): about 1 ms more per login round
// trip. So logins in governorLoginTicks ticks in a row (clients that log
// in again and again, not a pool opening its connections once), or any
// session on a goroutine transport, are a reason for every CPU, and a
// login during a tick breaks a calm run.
//
//   - Widen within one tick of governorWideCPU CPUs used, of
//     governorWideWaiting goroutines waiting for the one CPU (on a machine
//     whose other processes take that CPU's time, obgate's own use never
//     reaches the mark, but its goroutines queue), or of client I/O off
//     the event loops (offPoller).
//   - Narrow after a calm run: governorNarrowTicks ticks in a row under
//     governorNarrowCPU CPUs and governorNarrowWaiting waiting, with no
//     login and no session on a goroutine transport.
//   - A widening within governorFlapTicks of the last narrowing is a flap:
//     it doubles the calm run the next narrowing needs (up to
//     2^governorMaxBackoff), so a load at the edge does not switch back
//     and forth ten times a second. A narrowing that held longer than that
//     halves it again.
const (
	governorTick          = 100 * time.Millisecond
	governorWideCPU       = 0.85
	governorWideWaiting   = 0.5
	governorNarrowCPU     = 0.7
	governorNarrowWaiting = 0.25
	governorNarrowTicks   = 10
	governorFlapTicks     = 100
	governorMaxBackoff    = 5
	governorLoginTicks    = 2
)

// procsGovernor applies go_max_procs. set may be called from any
// goroutine (config changes); observe and run belong to the governor's
// own goroutine.
type procsGovernor struct {
	log *slog.Logger

	mu       sync.Mutex
	fixed    int64 // go_max_procs; 0 = chosen by load
	envFixed bool  // GOMAXPROCS is set in the environment: Go's default is that, unchanged
	wide     int   // Go's default number of CPUs
	narrow   bool  // running on one CPU by choice
	calm     int   // ticks in a row under the narrowing marks
	backoff  int   // the calm run needed is governorNarrowTicks << backoff
	since    int   // ticks since the last narrowing
	logins   int   // ticks in a row with a login
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
	g.fixed, g.narrow, g.calm, g.backoff = n, false, 0, 0
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

// calmNeeded is the number of calm ticks in a row the next narrowing needs.
func (g *procsGovernor) calmNeeded() int { return governorNarrowTicks << g.backoff }

// observe takes one tick's load and narrows or widens.
func (g *procsGovernor) observe(l load) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if !g.adaptive() {
		return
	}
	if l.logins {
		g.logins++
	} else {
		g.logins = 0
	}
	offPoller := l.goroutineSessions || g.logins >= governorLoginTicks
	if g.narrow {
		g.since++
		if l.cpus < governorWideCPU && l.waiting < governorWideWaiting && !offPoller {
			return
		}
		if g.since <= governorFlapTicks {
			g.backoff = min(g.backoff+1, governorMaxBackoff)
		} else {
			g.backoff = max(g.backoff-1, 0)
		}
		g.narrow, g.calm = false, 0
		runtime.SetDefaultGOMAXPROCS()
		g.wide = runtime.GOMAXPROCS(0)
		g.log.Info("go_max_procs=0: every CPU", "cpus_used", l.cpus, "waiting", l.waiting,
			"off_poller_io", offPoller, "cpus", g.wide, "next_calm_ticks", g.calmNeeded())
		return
	}
	if l.cpus >= governorNarrowCPU || l.waiting >= governorNarrowWaiting || l.logins || l.goroutineSessions {
		g.calm = 0
		return
	}
	if g.calm++; g.calm >= g.calmNeeded() {
		g.narrow, g.calm, g.since = true, 0, 0
		runtime.GOMAXPROCS(1)
		g.log.Info("go_max_procs=0: one CPU", "cpus_used", l.cpus, "waiting", l.waiting)
	}
}

// run samples the process every tick until stop is closed; io reports
// the client I/O off the event loops (reactor.Server.OffPollerIO). Each
// tick runs inside guard: a panic costs that tick's decision, and the
// governor goes on with the next.
func (g *procsGovernor) run(io offPollerIO, stop <-chan struct{}, guard *loopGuard) {
	tick := time.NewTicker(governorTick)
	defer tick.Stop()
	s := newLoadSampler(io)
	guard.do(whereGovernor, func() { s.next(time.Now()) })
	for {
		select {
		case <-stop:
			return
		case now := <-tick.C:
			guard.do(whereGovernor, func() {
				if l, ok := s.next(now); ok {
					g.observe(l)
				}
			})
		}
	}
}
