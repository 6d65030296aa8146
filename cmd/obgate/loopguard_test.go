package main

import (
	"bufio"
	"bytes"
	"errors"
	"io"
	"log/slog"
	"net"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"obgate/config"
	"obgate/metrics"
)

// syncBuffer is a log sink for goroutines that log while the test reads.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// panickyGuard returns a guard whose first call for where panics (the
// test hook), and the log it writes.
func panickyGuard(t *testing.T, where string) (*loopGuard, *syncBuffer) {
	t.Helper()
	logs := &syncBuffer{}
	g := newLoopGuard(slog.New(slog.NewTextHandler(logs, nil)), metrics.New())
	var once atomic.Bool
	g.hook = func(w string) {
		if w == where && once.CompareAndSwap(false, true) {
			panic("injected panic in " + w)
		}
	}
	return g, logs
}

// checkCounted checks that exactly one panic was counted and logged for
// where.
func checkCounted(t *testing.T, g *loopGuard, logs *syncBuffer, where string) {
	t.Helper()
	if n := g.counts[where].Get(); n != 1 {
		t.Errorf("obgate_panic_total{where=%q} = %d, want 1", where, n)
	}
	if out := logs.String(); !strings.Contains(out, "where="+where) || !strings.Contains(out, "injected panic") || !strings.Contains(out, "stack=") {
		t.Errorf("the panic was not logged with where=%s and its stack: %q", where, out)
	}
}

// eventually polls cond until it holds or a generous bound passes.
func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("%s: not within 10s", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// TestGovernorSurvivesPanic: a panic in one tick of the CPU governor is
// counted and logged, and the governor samples on.
func TestGovernorSurvivesPanic(t *testing.T) {
	g, logs := panickyGuard(t, whereGovernor)
	gov := newProcsGovernor(slog.New(slog.NewTextHandler(io.Discard, nil)))
	var samples atomic.Int64
	sample := func() (uint64, int64) { samples.Add(1); return 0, 0 }
	stop := make(chan struct{})
	done := make(chan struct{})
	go func() { gov.run(sample, stop, g); close(done) }()
	eventually(t, "the governor sampling after a panic", func() bool { return samples.Load() >= 3 })
	close(stop)
	<-done
	checkCounted(t, g, logs, whereGovernor)
}

// TestConfigSubscriberSurvivesPanic: a subscriber that panics does not
// fail the ALTER PROXYCONFIG that ran it, and runs again at the next one.
func TestConfigSubscriberSurvivesPanic(t *testing.T) {
	g, logs := panickyGuard(t, whereConfigSub)
	store := config.NewStore(nil)
	var seen []int64
	store.Subscribe(g.subscriber(func(_, c *config.Config) { seen = append(seen, c.ClientMaxConnections) }))
	for _, v := range []string{"100", "200"} {
		if _, err := store.Set("client_max_connections", v); err != nil {
			t.Fatalf("ALTER client_max_connections = %s: %v", v, err)
		}
	}
	if len(seen) != 1 || seen[0] != 200 {
		t.Errorf("the subscriber saw %v, want [200] (the first call panicked)", seen)
	}
	if store.Load().ClientMaxConnections != 200 {
		t.Errorf("client_max_connections is %d, want 200", store.Load().ClientMaxConnections)
	}
	checkCounted(t, g, logs, whereConfigSub)
}

// TestSignalLoopSurvivesPanic: a SIGUSR2 whose handling panics leaves
// serve waiting; the next SIGUSR2 is handled, and SIGTERM still stops.
func TestSignalLoopSurvivesPanic(t *testing.T) {
	g, logs := panickyGuard(t, whereSignals)
	usr2 := make(chan os.Signal, 1)
	sig := make(chan os.Signal, 1)
	var upgrades atomic.Int64
	result := make(chan stopReason, 1)
	go func() {
		result <- waitForStop(stopEvents{usr2: usr2, sig: sig}, g, func() { upgrades.Add(1) })
	}()
	usr2 <- syscall.SIGUSR2 // panics in the hook
	usr2 <- syscall.SIGUSR2
	eventually(t, "the second SIGUSR2 handled", func() bool { return upgrades.Load() == 1 })
	sig <- syscall.SIGTERM
	select {
	case r := <-result:
		if r.signal != syscall.SIGTERM {
			t.Errorf("waitForStop returned %+v, want SIGTERM", r)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("SIGTERM did not end the wait")
	}
	checkCounted(t, g, logs, whereSignals)
}

// TestUpgradeParentReaderSurvivesPanic: a child whose handling of one of
// its parent's messages panics reads on, and a rollback still reaches it.
func TestUpgradeParentReaderSurvivesPanic(t *testing.T) {
	g, logs := panickyGuard(t, whereUpgradeParent)
	u := newUpgrader(slog.New(slog.NewTextHandler(io.Discard, nil)), config.NewStore(nil), nil)
	u.guard = g
	parent, child := net.Pipe()
	defer parent.Close()
	done := make(chan struct{})
	go func() { u.readParent(child); close(done) }()
	if _, err := parent.Write([]byte("commit\nexit\n")); err != nil {
		t.Fatal(err)
	}
	select {
	case why := <-u.exit:
		if why != "rollback" {
			t.Errorf("exit reason %q, want rollback", why)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the rollback after the panic was not taken")
	}
	parent.Close()
	<-done
	checkCounted(t, g, logs, whereUpgradeParent)
}

// TestUpgradeChildFollowerSurvivesPanic: a parent whose handling of one
// command passed on by its child panics takes the next one.
func TestUpgradeChildFollowerSurvivesPanic(t *testing.T) {
	g, logs := panickyGuard(t, whereUpgradeChild)
	u := newUpgrader(slog.New(slog.NewTextHandler(logs, nil)), config.NewStore(nil), nil)
	u.guard = g
	lines := bufio.NewScanner(strings.NewReader("commit\nrollback\n"))
	done := make(chan struct{})
	go func() { u.followChild(lines); close(done) }()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("followChild did not return at the end of its input")
	}
	// No upgrade waits, so the second command is refused: it was taken.
	if out := logs.String(); !strings.Contains(out, "command from the new process not taken") || !strings.Contains(out, "cmd=rollback") {
		t.Errorf("the command after the panic was not taken: %q", out)
	}
	checkCounted(t, g, logs, whereUpgradeChild)
}

// TestAdoptSurvivesPanic: a panic while adopting handed-over sessions
// starts the adoption again on the same link, and its end is returned.
func TestAdoptSurvivesPanic(t *testing.T) {
	g, logs := panickyGuard(t, whereAdopt)
	calls := 0
	end := errors.New("link closed")
	if err := adoptSessions(g, func() error { calls++; return end }); err != end {
		t.Errorf("adoptSessions = %v, want the adoption's own end", err)
	}
	if calls != 1 {
		t.Errorf("adopt ran %d times after the panic, want 1", calls)
	}
	checkCounted(t, g, logs, whereAdopt)

	// A bug that panics at every start gives up instead of spinning.
	always := newLoopGuard(slog.New(slog.NewTextHandler(io.Discard, nil)), metrics.New())
	if err := adoptSessions(always, func() error { panic("always") }); err != errAdoptPanics {
		t.Errorf("adoptSessions with an adoption that always panics = %v, want errAdoptPanics", err)
	}
}
