package main

import (
	"fmt"
	"log/slog"
	"runtime/debug"

	vm "github.com/VictoriaMetrics/metrics"

	"obgate/config"
	"obgate/metrics"
)

// A panic in one of cmd/obgate's own background loops (the CPU governor,
// the config subscribers, the signal loop, the hot upgrade's readers, the
// adoption of handed-over sessions) is a bug, but it must cost that one
// iteration, never the process nor the loop: each iteration runs inside
// loopGuard.do, which logs the panic once with its stack, counts it in
// obgate_panic_total{where} (the family reactor counts its own panics in,
// with where values of its own), and returns so that the loop goes on.

// Where labels of cmd/obgate's loops in obgate_panic_total.
const (
	whereGovernor      = "cpu_governor"      // procsGovernor.run: load sampling and GOMAXPROCS
	whereConfigSub     = "config_subscriber" // Store.Subscribe callbacks set up in main
	whereSignals       = "signals"           // serve's wait for signals (SIGUSR2's hot upgrade)
	whereUpgradeParent = "upgrade_parent"    // a child reading its parent's messages
	whereUpgradeChild  = "upgrade_child"     // a parent starting and following its child
	whereAdopt         = "handover_adopt"    // a child adopting its parent's sessions
)

var loopWheres = []string{whereGovernor, whereConfigSub, whereSignals, whereUpgradeParent, whereUpgradeChild, whereAdopt}

// loopGuard contains panics in background loops. Its methods may be
// called from any goroutine.
type loopGuard struct {
	log    *slog.Logger
	counts map[string]*vm.Counter // by where; created up front so each series starts at 0

	// hook, set only by tests before the loops start, runs at the start
	// of every guarded call, inside the guard, so that a test can make
	// one iteration panic.
	hook func(where string)
}

func newLoopGuard(log *slog.Logger, reg *metrics.Registry) *loopGuard {
	g := &loopGuard{log: log, counts: make(map[string]*vm.Counter, len(loopWheres))}
	for _, w := range loopWheres {
		g.counts[w] = reg.Counter(metrics.Panics, "where", w)
	}
	return g
}

// do runs f, one iteration of the loop named where, and reports whether
// it returned; a panic in it is logged, counted and swallowed (a logger
// that panics in turn is ignored). runtime.Goexit is not a panic and is
// let through. A nil guard runs f unguarded.
func (g *loopGuard) do(where string, f func()) (ok bool) {
	if g == nil {
		f()
		return true
	}
	defer func() {
		if ok {
			return
		}
		v := recover()
		if v == nil {
			return // runtime.Goexit: not ours to stop
		}
		if c := g.counts[where]; c != nil {
			c.Inc()
		}
		defer func() { _ = recover() }()
		g.log.Error("panic recovered; the loop goes on", "where", where,
			"panic", fmt.Sprint(v), "stack", string(debug.Stack()))
	}()
	if g.hook != nil {
		g.hook(where)
	}
	f()
	return true
}

// subscriber wraps fn, a Store.Subscribe callback, so that a panic in it
// is contained like a loop's: the ALTER PROXYCONFIG that ran it, and the
// subscribers after it, go on.
func (g *loopGuard) subscriber(fn func(old, new *config.Config)) func(old, new *config.Config) {
	return func(old, new *config.Config) { g.do(whereConfigSub, func() { fn(old, new) }) }
}
