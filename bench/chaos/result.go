package chaos

import (
	"fmt"
	"io"
	"sort"
	"strings"
	"time"
)

// Status is the outcome of one expectation.
type Status string

const (
	Pass Status = "PASS"
	Fail Status = "FAIL"
	// Unknown: the suite could not tell (obgate does not answer SHOW
	// PROXYCONGESTION yet, a metric is missing). It does not fail a run.
	Unknown Status = "UNKNOWN"
)

// Check is one expectation and what was measured for it.
type Check struct {
	Name   string `json:"name"`
	Status Status `json:"status"`
	Detail string `json:"detail"`
	// Timing marks expectations on how fast obgate reacts (drain, return,
	// detection); the others are about what clients saw and what the
	// database holds.
	Timing bool `json:"timing,omitempty"`
}

// Event is a moment of the run's timeline.
type Event struct {
	Kind string  `json:"kind"` // fault, recover or note
	What string  `json:"what"`
	At   float64 `json:"at_s"` // seconds since the load started
}

// Window is one fault, from its start to its repair, and how the faulted
// server's traffic reacted.
type Window struct {
	Fault     string  `json:"fault"`
	FaultAt   float64 `json:"fault_at_s"`
	RecoverAt float64 `json:"recover_at_s"` // -1: never repaired in the run
	// Source is where the request times come from: "obsim log",
	// "obgate metric" (a 0.5 s sampling of obgate_server_requests_total)
	// or "" when neither was available.
	Source string `json:"source"`
	// DrainS is how long after the fault the server still got requests:
	// the last one before the repair minus the fault time, 0 when none
	// came after the fault; nil when not known.
	DrainS *float64 `json:"drain_s"`
	// RequestsDuring counts the requests it got between fault and repair.
	RequestsDuring int `json:"requests_during"`
	// ReturnS is how long after the repair its first request came; nil
	// when none came before the run ended, or when not known.
	ReturnS *float64 `json:"return_s"`
	// MetricDrainS and MetricReturnS are the same from obgate's metric,
	// when the primary source is the obsim log and the metric exists too.
	MetricDrainS  *float64 `json:"metric_drain_s,omitempty"`
	MetricReturnS *float64 `json:"metric_return_s,omitempty"`
}

// LeakReport compares the proxy before the load with after it, once the
// clients have gone.
type LeakReport struct {
	Before   Snapshot `json:"before"`
	After    Snapshot `json:"after"`
	SettleS  float64  `json:"settle_s"`
	OK       bool     `json:"ok"`
	Problems []string `json:"problems,omitempty"`
}

// Leak tolerances: what may legitimately differ (background refresh and
// probe connections, the runtime's own goroutines).
const (
	leakGoroutines = 10
	leakFDs        = 5
	leakBackend    = 2
)

// judge fills OK and Problems.
func (l *LeakReport) judge() {
	l.Problems = nil
	cmp := func(name string, before, after, tolerance int) {
		if before < 0 || after < 0 {
			return
		}
		if after > before+tolerance {
			l.Problems = append(l.Problems, fmt.Sprintf("%s %d → %d (tolerance %d)", name, before, after, tolerance))
		}
	}
	cmp("goroutines", l.Before.Goroutines, l.After.Goroutines, leakGoroutines)
	cmp("open fds", l.Before.OpenFDs, l.After.OpenFDs, leakFDs)
	cmp("client sessions", l.Before.ClientSessions, l.After.ClientSessions, 0)
	cmp("server sessions", l.Before.ServerSessions, l.After.ServerSessions, leakBackend)
	cmp("backend sessions", l.Before.BackendSessions, l.After.BackendSessions, leakBackend)
	l.OK = len(l.Problems) == 0
}

func (l LeakReport) String() string {
	part := func(name string, b, a int) string {
		if b < 0 && a < 0 {
			return name + " n/a"
		}
		return fmt.Sprintf("%s %s→%s", name, intOrNA(b), intOrNA(a))
	}
	return fmt.Sprintf("%s, %s, %s, %s, %s (after %.1f s)",
		part("goroutines", l.Before.Goroutines, l.After.Goroutines),
		part("fds", l.Before.OpenFDs, l.After.OpenFDs),
		part("client sessions", l.Before.ClientSessions, l.After.ClientSessions),
		part("server sessions", l.Before.ServerSessions, l.After.ServerSessions),
		part("backend sessions", l.Before.BackendSessions, l.After.BackendSessions), l.SettleS)
}

func intOrNA(v int) string {
	if v < 0 {
		return "n/a"
	}
	return fmt.Sprint(v)
}

// Result is everything one scenario run measured.
type Result struct {
	Scenario string `json:"scenario"`
	Title    string `json:"title"`
	Target   string `json:"target"` // obgate or haproxy
	// Build is what the obgate binary says of itself (obgate --version:
	// the commit it was built from, "-dirty" for uncommitted changes).
	Build   string    `json:"build,omitempty"`
	Started time.Time `json:"started"`
	// DurationS is the loaded part of the run.
	DurationS float64 `json:"duration_s"`
	// Command is the proxy's command line; Options the obgate -o values.
	Command []string `json:"command"`
	Options []string `json:"options,omitempty"`
	// Config holds the obgate settings the expectations depend on, as
	// SHOW PROXYCONFIG reported them.
	Config map[string]string `json:"config,omitempty"`
	// Server is the faulted server (obsim node or "db1"), ServerAddr its
	// address.
	Server     string `json:"server"`
	ServerAddr string `json:"server_addr"`

	Events     []Event          `json:"events"`
	Load       LoadStats        `json:"load"`
	Series     []Second         `json:"series"`
	Windows    []Window         `json:"windows"`
	Congestion CongestionReport `json:"congestion"`
	Ledger     LedgerCheck      `json:"ledger"`
	Leak       LeakReport       `json:"leak"`
	Checks     []Check          `json:"checks"`
	Notes      []string         `json:"notes,omitempty"`
	// LogLost counts obsim log entries that were dropped before the suite
	// read them (drain figures may then be early).
	LogLost int `json:"log_lost,omitempty"`

	JSONPath string `json:"-"`
	PlotPath string `json:"plot,omitempty"`
	// Error is set when the run could not be carried out.
	Error string `json:"error,omitempty"`
}

// Failed reports whether an expectation failed or the run broke.
func (r *Result) Failed() bool {
	if r.Error != "" {
		return true
	}
	for _, c := range r.Checks {
		if c.Status == Fail {
			return true
		}
	}
	return false
}

// Count returns the number of checks with status s.
func (r *Result) Count(s Status) int {
	n := 0
	for _, c := range r.Checks {
		if c.Status == s {
			n++
		}
	}
	return n
}

// formatErrors renders error counts as "8001×3, net×1", largest first.
func formatErrors(m map[string]int64) string {
	if len(m) == 0 {
		return "none"
	}
	type kv struct {
		k string
		v int64
	}
	var l []kv
	for k, v := range m {
		l = append(l, kv{k, v})
	}
	sort.Slice(l, func(i, j int) bool {
		if l[i].v != l[j].v {
			return l[i].v > l[j].v
		}
		return l[i].k < l[j].k
	})
	parts := make([]string, len(l))
	for i, e := range l {
		parts[i] = fmt.Sprintf("%s×%d", e.k, e.v)
	}
	return strings.Join(parts, ", ")
}

func secs(p *float64) string {
	if p == nil {
		return "n/a"
	}
	return fmt.Sprintf("%.2f s", *p)
}

// WriteText prints the report of one run.
func (r *Result) WriteText(w io.Writer) {
	fmt.Fprintf(w, "\n== %s [%s]: %s\n", r.Scenario, r.Target, r.Title)
	if r.Build != "" {
		fmt.Fprintf(w, "   build: %s\n", r.Build)
	}
	if r.Error != "" {
		fmt.Fprintf(w, "   ERROR: %s\n", r.Error)
		if r.Load.Readers+r.Load.Writers == 0 {
			return // it never got to the load
		}
	}
	if len(r.Options) > 0 {
		fmt.Fprintf(w, "   obgate -o %s\n", strings.Join(r.Options, ","))
	}
	if r.Server != "" {
		fmt.Fprintf(w, "   faulted server: %s (%s)\n", r.Server, r.ServerAddr)
	}
	if len(r.Events) > 0 {
		var ev []string
		for _, e := range r.Events {
			ev = append(ev, fmt.Sprintf("%+.1fs %s %s", e.At, e.Kind, e.What))
		}
		fmt.Fprintf(w, "   timeline: %s; end %+.1fs\n", strings.Join(ev, "; "), r.DurationS)
	}
	l := r.Load
	fmt.Fprintf(w, "   load: %d readers, %d writers; reads %d ok, %d failed; writes %d ok, %d failed; reconnects %d (connect failures %d)\n",
		l.Readers, l.Writers, l.Reads.OK, l.Reads.Failed, l.Writes.OK, l.Writes.Failed, l.Reconnects, l.ConnectFailures)
	fmt.Fprintf(w, "   read errors:  %s\n", formatErrors(l.Reads.Errors))
	fmt.Fprintf(w, "   write errors: %s\n", formatErrors(l.Writes.Errors))
	for _, win := range r.Windows {
		src := win.Source
		if src == "" {
			src = "no source"
		}
		during := ""
		if win.RequestsDuring >= 0 {
			during = fmt.Sprintf(" (%d requests during the fault)", win.RequestsDuring)
		}
		back := "return " + secs(win.ReturnS) + " after the repair"
		if win.RecoverAt < 0 {
			back = "not repaired"
		}
		fmt.Fprintf(w, "   %s: drain %s%s, %s [%s]", win.Fault, secs(win.DrainS), during, back, src)
		if win.MetricDrainS != nil || win.MetricReturnS != nil {
			fmt.Fprintf(w, "; obgate metric: drain %s, return %s", secs(win.MetricDrainS), secs(win.MetricReturnS))
		}
		fmt.Fprintln(w)
	}
	if r.Target == "obgate" {
		c := r.Congestion
		if !c.Available {
			fmt.Fprintf(w, "   congestion: unknown (%s)\n", c.Unavailable)
		} else {
			listed, n := c.listedCount(-1e9, 1e9)
			fmt.Fprintf(w, "   congestion of %s: listed in %d of %d samples\n", c.Server, listed, n)
		}
	}
	fmt.Fprintf(w, "   ledger: %s\n", r.Ledger)
	for kind, ops := range r.Ledger.Examples {
		fmt.Fprintf(w, "     %s e.g. %s\n", kind, strings.Join(ops, " "))
	}
	fmt.Fprintf(w, "   leak: %s\n", r.Leak)
	if r.LogLost > 0 {
		fmt.Fprintf(w, "   note: %d obsim log entries were dropped before they were read\n", r.LogLost)
	}
	for _, n := range r.Notes {
		fmt.Fprintf(w, "   note: %s\n", n)
	}
	for _, c := range r.Checks {
		fmt.Fprintf(w, "   %-7s %s: %s\n", c.Status, c.Name, c.Detail)
	}
	if r.JSONPath != "" {
		fmt.Fprintf(w, "   json: %s\n", r.JSONPath)
	}
	if r.PlotPath != "" {
		fmt.Fprintf(w, "   plot: %s\n", r.PlotPath)
	}
}

// brief is the window's drain and return in a few words.
func (w Window) brief() string {
	if w.RecoverAt < 0 {
		return "drain " + secs(w.DrainS) + ", not repaired"
	}
	return "drain " + secs(w.DrainS) + ", return " + secs(w.ReturnS)
}

// WriteSideBySide prints two runs of the same scenario as columns.
func WriteSideBySide(w io.Writer, a, b *Result) {
	fmt.Fprintf(w, "\n== %s: %s vs %s\n", a.Scenario, a.Target, b.Target)
	row := func(name, x, y string) { fmt.Fprintf(w, "   %-30s %-34s %s\n", name, x, y) }
	row("", a.Target, b.Target)
	row("reads ok / failed", fmt.Sprintf("%d / %d", a.Load.Reads.OK, a.Load.Reads.Failed), fmt.Sprintf("%d / %d", b.Load.Reads.OK, b.Load.Reads.Failed))
	row("read errors", formatErrors(a.Load.Reads.Errors), formatErrors(b.Load.Reads.Errors))
	row("writes ok / failed", fmt.Sprintf("%d / %d", a.Load.Writes.OK, a.Load.Writes.Failed), fmt.Sprintf("%d / %d", b.Load.Writes.OK, b.Load.Writes.Failed))
	row("write errors", formatErrors(a.Load.Writes.Errors), formatErrors(b.Load.Writes.Errors))
	row("reconnects", fmt.Sprint(a.Load.Reconnects), fmt.Sprint(b.Load.Reconnects))
	for i := range max(len(a.Windows), len(b.Windows)) {
		var x, y string
		name := ""
		if i < len(a.Windows) {
			name, x = a.Windows[i].Fault, a.Windows[i].brief()
		}
		if i < len(b.Windows) {
			name, y = b.Windows[i].Fault, b.Windows[i].brief()
		}
		row(name, x, y)
	}
	row("ledger", okWord(a.Ledger.OK()), okWord(b.Ledger.OK()))
	row("unknown writes present/absent", fmt.Sprintf("%d / %d", a.Ledger.UnknownPresent, a.Ledger.UnknownAbsent),
		fmt.Sprintf("%d / %d", b.Ledger.UnknownPresent, b.Ledger.UnknownAbsent))
	row("leak check", okWord(a.Leak.OK), okWord(b.Leak.OK))
	row("checks pass/fail/unknown", fmt.Sprintf("%d/%d/%d", a.Count(Pass), a.Count(Fail), a.Count(Unknown)),
		fmt.Sprintf("%d/%d/%d", b.Count(Pass), b.Count(Fail), b.Count(Unknown)))
}

func okWord(ok bool) string {
	if ok {
		return "holds"
	}
	return "BROKEN"
}

// WriteSummary prints one line per run.
func WriteSummary(w io.Writer, results []*Result) {
	fmt.Fprintf(w, "\n== summary\n")
	fmt.Fprintf(w, "   %-14s %-8s %9s %9s %10s %7s %7s %5s %5s %5s\n",
		"scenario", "target", "read err", "write err", "reconnects", "ledger", "leak", "pass", "fail", "unkn")
	for _, r := range results {
		ledger, leak := okWord(r.Ledger.OK()), okWord(r.Leak.OK)
		if r.Error != "" {
			ledger, leak = "-", "-"
		}
		fmt.Fprintf(w, "   %-14s %-8s %9d %9d %10d %7s %7s %5d %5d %5d\n", r.Scenario, r.Target,
			r.Load.Reads.Failed, r.Load.Writes.Failed, r.Load.Reconnects, ledger, leak,
			r.Count(Pass), r.Count(Fail), r.Count(Unknown))
		if r.Error != "" {
			fmt.Fprintf(w, "     error: %s\n", r.Error)
		}
	}
}
