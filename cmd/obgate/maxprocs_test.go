package main

import (
	"io"
	"log/slog"
	"math"
	"runtime"
	"runtime/metrics"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// TestProcsGovernorFollowsLoad drives the governor's decisions with
// loads and checks GOMAXPROCS after each.
func TestProcsGovernorFollowsLoad(t *testing.T) {
	wide := runtime.GOMAXPROCS(0)
	if wide < 2 {
		t.Skip("one CPU: nothing to choose")
	}
	defer runtime.SetDefaultGOMAXPROCS()
	g := newProcsGovernor(slog.New(slog.NewTextHandler(io.Discard, nil)))
	g.envFixed = false // the choice is what is tested, whatever this process's environment says
	g.set(0)
	g.wide = wide
	procs := func() int { return runtime.GOMAXPROCS(0) }
	calm := load{cpus: 0.3, waiting: 0.05}
	observe := func(n int, l load) {
		for range n {
			g.observe(l)
		}
	}
	observe(governorNarrowTicks-1, calm)
	if procs() != wide {
		t.Fatalf("narrowed after %d calm ticks, want %d", governorNarrowTicks-1, governorNarrowTicks)
	}
	// Between the marks, by either figure: the calm run starts again.
	for _, between := range []load{{cpus: 0.75}, {cpus: 0.3, waiting: 0.3}} {
		g.observe(between)
		observe(governorNarrowTicks-1, calm)
		if procs() != wide {
			t.Fatalf("narrowed although %+v broke the calm run", between)
		}
	}
	g.observe(calm)
	if procs() != 1 {
		t.Fatalf("GOMAXPROCS %d after %d calm ticks, want 1", procs(), governorNarrowTicks)
	}
	// Statements that wait on a server use little CPU: no reason to widen.
	observe(3*governorFlapTicks, load{cpus: 0.8, waiting: 0.4})
	if procs() != 1 {
		t.Fatalf("widened below both marks")
	}
	// Client I/O on Go's network poller: a calm run does not count while
	// there is any.
	g.set(0)
	g.wide = wide
	observe(governorNarrowTicks-1, calm)
	g.observe(load{cpus: 0.05, logins: true})
	observe(governorNarrowTicks-1, calm)
	if procs() != wide {
		t.Fatalf("narrowed although a tick had a login")
	}
	g.observe(calm)
	if procs() != 1 {
		t.Fatalf("GOMAXPROCS %d after %d calm ticks, want 1", procs(), governorNarrowTicks)
	}
	// A pool opening its connections (logins in one tick) does not widen;
	// logins tick after tick do, and so does a session on a goroutine
	// transport.
	g.observe(load{cpus: 0.05, logins: true})
	g.observe(calm)
	g.observe(load{cpus: 0.05, logins: true})
	if procs() != 1 {
		t.Fatalf("GOMAXPROCS %d after two ticks with logins apart, want 1", procs())
	}
	g.observe(load{cpus: 0.05, logins: true})
	if procs() != wide {
		t.Fatalf("GOMAXPROCS %d after %d ticks in a row with logins, want %d", procs(), governorLoginTicks, wide)
	}
	observe(2*governorNarrowTicks, calm)
	if procs() != 1 {
		t.Fatalf("GOMAXPROCS %d after the logins' calm run, want 1", procs())
	}
	g.observe(load{cpus: 0.05, goroutineSessions: true})
	if procs() != wide {
		t.Fatalf("GOMAXPROCS %d with a session on a goroutine transport, want %d", procs(), wide)
	}
	observe(g.calmNeeded(), calm)
	if procs() != 1 {
		t.Fatalf("GOMAXPROCS %d after the session's calm run, want 1", procs())
	}
	g.backoff = 0
	observe(3*governorFlapTicks, load{cpus: 0.8, waiting: 0.4})
	// Long after the narrowing: widening is no flap.
	g.observe(load{cpus: governorWideCPU})
	if procs() != wide || g.backoff != 0 {
		t.Fatalf("GOMAXPROCS %d, backoff %d at %v CPUs used, want %d and 0", procs(), g.backoff, governorWideCPU, wide)
	}
	// Goroutines queueing for the one CPU widen it too, and so soon
	// after the narrowing that it counts as a flap: each flap doubles
	// the calm run the next narrowing needs, up to the cap.
	for flap := 1; flap <= governorMaxBackoff+1; flap++ {
		need := governorNarrowTicks << min(flap-1, governorMaxBackoff)
		observe(need-1, calm)
		if procs() != wide {
			t.Fatalf("flap %d: narrowed after %d calm ticks, want %d", flap, need-1, need)
		}
		g.observe(calm)
		if procs() != 1 {
			t.Fatalf("flap %d: GOMAXPROCS %d after %d calm ticks, want 1", flap, procs(), need)
		}
		g.observe(load{cpus: 0.2, waiting: governorWideWaiting})
		if procs() != wide {
			t.Fatalf("flap %d: GOMAXPROCS %d with %v goroutines waiting, want %d", flap, procs(), governorWideWaiting, wide)
		}
		if want := min(flap, governorMaxBackoff); g.backoff != want {
			t.Fatalf("flap %d: backoff %d, want %d", flap, g.backoff, want)
		}
	}
	// A narrowing that holds past the flap window halves the calm run again.
	observe(g.calmNeeded(), calm)
	observe(governorFlapTicks, calm)
	g.observe(load{cpus: 1})
	if g.backoff != governorMaxBackoff-1 {
		t.Fatalf("backoff %d after a narrowing that held, want %d", g.backoff, governorMaxBackoff-1)
	}

	g.set(3)
	observe(2*governorNarrowTicks, load{})
	if procs() != 3 {
		t.Fatalf("a fixed go_max_procs=3 moved to %d", procs())
	}
	g.set(0)
	g.envFixed = true
	observe(2*governorNarrowTicks, load{})
	if procs() != wide {
		t.Fatalf("GOMAXPROCS from the environment moved to %d", procs())
	}
}

// TestLoadSamplerReadsTheProcess: CPU spent on a busy loop shows as CPU
// time used, and goroutines kept runnable behind a busy one on a single P
// show as waiting. Neither depends on how busy the machine is: the loop
// runs until its thread was charged 100 ms, however long that takes.
func TestLoadSamplerReadsTheProcess(t *testing.T) {
	s := newLoadSampler(nil)
	start := time.Now()
	if _, ok := s.next(start); ok {
		t.Fatal("the first reading reported a load")
	}
	const charged = 100 * time.Millisecond
	spinCPU(t, charged)
	end := time.Now()
	l, ok := s.next(end)
	if used := time.Duration(l.cpus * float64(end.Sub(start))); !ok || used < charged*9/10 {
		t.Fatalf("a loop charged %v read as %+v (ok %v): %v of CPU time, want at least %v", charged, l, ok, used, charged*9/10)
	}
	spin := func(d time.Duration) {
		for end := time.Now().Add(d); time.Now().Before(end); {
		}
	}

	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(1))
	s.next(time.Now())
	done := make(chan struct{})
	for range 4 {
		go func() {
			defer func() { done <- struct{}{} }()
			for range 200 {
				spin(100 * time.Microsecond)
				runtime.Gosched()
			}
		}()
	}
	for range 4 {
		<-done
	}
	l, ok = s.next(time.Now())
	t.Logf("four goroutines on one CPU: %+v", l)
	if !ok || l.waiting < 1 {
		t.Fatalf("four goroutines taking turns on one CPU read as %+v (ok %v), want at least 1 waiting", l, ok)
	}
}

// TestHistogramSum checks the bucket arithmetic, open ends included.
func TestHistogramSum(t *testing.T) {
	h := &metrics.Float64Histogram{
		Counts:  []uint64{2, 3, 0, 1},
		Buckets: []float64{math.Inf(-1), 1, 3, 5, math.Inf(1)},
	}
	var v metrics.Value
	if got := histogramSum(v); got != 0 {
		t.Fatalf("an empty value sums to %v", got)
	}
	s := []metrics.Sample{{Name: schedLatencies}}
	metrics.Read(s)
	if s[0].Value.Kind() != metrics.KindFloat64Histogram {
		t.Fatalf("%s is not a histogram in this runtime", schedLatencies)
	}
	if got, want := sumBuckets(h), 2*1+3*2+0*4+1*5.0; got != want {
		t.Fatalf("sum %v, want %v", got, want)
	}
}

// spinCPU keeps the calling goroutine's thread busy until the kernel has
// charged it d of CPU time.
func spinCPU(t *testing.T, d time.Duration) {
	t.Helper()
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	threadCPU := func() time.Duration {
		var ru unix.Rusage
		if err := unix.Getrusage(unix.RUSAGE_THREAD, &ru); err != nil {
			t.Fatalf("getrusage: %v", err)
		}
		return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
	}
	for from := threadCPU(); threadCPU()-from < d; {
	}
}
