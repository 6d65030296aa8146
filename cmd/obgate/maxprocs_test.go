package main

import (
	"io"
	"log/slog"
	"runtime"
	"testing"
)

// TestProcsGovernorFollowsLoad drives the governor's decisions with
// figures of statements in flight and checks GOMAXPROCS after each.
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
	for i := range governorNarrowTicks - 1 {
		g.observe(0.9)
		if procs() != wide {
			t.Fatalf("narrowed after %d calm ticks, want %d", i+1, governorNarrowTicks)
		}
	}
	g.observe(2.0) // between the marks: the calm run starts again
	for range governorNarrowTicks - 1 {
		g.observe(1.0)
	}
	if procs() != wide {
		t.Fatalf("narrowed although the calm run was broken")
	}
	g.observe(1.0)
	if procs() != 1 {
		t.Fatalf("GOMAXPROCS %d after %d calm ticks, want 1", procs(), governorNarrowTicks)
	}
	g.observe(2.0) // between the marks: stays narrow
	if procs() != 1 {
		t.Fatalf("widened at 2.0 in flight")
	}
	g.observe(governorWide)
	if procs() != wide {
		t.Fatalf("GOMAXPROCS %d at %v in flight, want %d", procs(), governorWide, wide)
	}
	g.set(3)
	for range 2 * governorNarrowTicks {
		g.observe(0)
	}
	if procs() != 3 {
		t.Fatalf("a fixed go_max_procs=3 moved to %d", procs())
	}
	g.set(0)
	g.envFixed = true
	for range 2 * governorNarrowTicks {
		g.observe(0)
	}
	if procs() != wide {
		t.Fatalf("GOMAXPROCS from the environment moved to %d", procs())
	}
}
