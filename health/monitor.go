package health

import (
	"log/slog"
	"maps"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"obgate/internal/tlsconf"

	"obgate/config"
	"obgate/metrics"
)

// Monitor keeps every server's health entry and decides, for the router,
// which servers may take new requests. Sessions report what they saw into
// entries (Entry methods); the status refresh reports through
// TableChanged; the detect task (Start) probes servers in the background.
// Safe for concurrent use; Available answers from atomic loads only.
type Monitor struct {
	cfg  *config.Store
	log  *slog.Logger
	diag *slog.Logger // the diagnosis log (SetDiagnosis); nil for none
	// serverTLS is the login probes' TLS (SetServerTLS); nil: in clear.
	serverTLS tlsconf.ServerFunc
	now       func() time.Time
	metrics   *monitorMetrics

	// entries is copied on write: entries are added rarely (a server's
	// first appearance), read on every routing decision without a lock.
	entries atomic.Pointer[map[entryKey]*Entry]
	addMu   sync.Mutex

	gen     atomic.Uint64 // list changes, see Generation
	onDead  atomic.Pointer[func(cluster, addr string)]
	started atomic.Bool // the detect task runs: it, not time, clears flags
	stop    chan struct{}
	done    sync.WaitGroup
	unsub   func()
}

type entryKey struct {
	cluster string // "" in mysql routing mode
	addr    string
}

// NewMonitor returns a Monitor reading its parameters from cfg. Until
// Start, nothing probes servers: flags that a probe would clear expire
// after congestion_retry_interval instead.
func NewMonitor(cfg *config.Store) *Monitor {
	m := &Monitor{cfg: cfg, log: slog.Default(), now: time.Now, metrics: newMonitorMetrics(nil), stop: make(chan struct{})}
	m.unsub = cfg.Subscribe(m.configChanged)
	return m
}

// SetLogger sets where state changes are logged; call before Start.
func (m *Monitor) SetLogger(l *slog.Logger) {
	if l != nil {
		m.log = l
	}
}

// SetServerTLS sets the TLS configuration of the probes that log in
// (server_detect_mode=3), the one of every connection to servers
// (enable_server_ssl); call before Start. nil probes in clear.
func (m *Monitor) SetServerTLS(f tlsconf.ServerFunc) { m.serverTLS = f }

// SetDiagnosis sets the diagnosis log, which gets a line for every list
// change while connection_diagnosis_option bit 1 is set; call before
// Start. nil writes none.
func (m *Monitor) SetDiagnosis(l *slog.Logger) { m.diag = l }

// SetMetrics registers the monitor's metrics in reg; call before Start.
func (m *Monitor) SetMetrics(reg *metrics.Registry) {
	m.metrics = newMonitorMetrics(reg)
	reg.GaugeFunc(func() float64 { return float64(m.countCongested()) }, metrics.CongestedServers)
}

// OnDetectDead sets what runs when the detect task finds a server dead:
// obgate closes every connection to it. fn runs on a probe goroutine.
func (m *Monitor) OnDetectDead(fn func(cluster, addr string)) { m.onDead.Store(&fn) }

// Available reports whether addr may take new requests: it is on no list,
// or enable_congestion is off.
func (m *Monitor) Available(cluster, addr string) bool {
	e := m.lookup(cluster, addr)
	if e == nil || !e.congested() {
		return true
	}
	cfg := m.cfg.Load()
	if !cfg.EnableCongestion {
		return true
	}
	if e.dead.Load() != 0 || e.detect.Load() != 0 || e.forceCongested() {
		return false
	}
	if m.started.Load() {
		return false
	}
	// Nothing probes: a connect failure or an alive flag lasts
	// congestion_retry_interval after the last failure.
	last := max(e.connFailed.Load(), e.aliveHist.lastEvent())
	return m.nowNanos()-last >= int64(cfg.CongestionRetryInterval)
}

// Entry returns the entry of addr in the named cluster ("" in mysql
// routing mode), adding it when it is new. Sessions keep the pointer for the life
// of a server session.
func (m *Monitor) Entry(cluster, addr string) *Entry {
	return m.entry(cluster, addr, 0)
}

// ConnectFailed records a failed connect to addr (see Entry.ConnectFailed).
func (m *Monitor) ConnectFailed(cluster, addr string) { m.Entry(cluster, addr).ConnectFailed() }

// ConnectSucceeded records a connect to addr that delivered a handshake.
func (m *Monitor) ConnectSucceeded(cluster, addr string) {
	if e := m.lookup(cluster, addr); e != nil {
		e.ConnectSucceeded()
	}
}

// Views returns a copy of every entry, ordered by cluster and address;
// with cluster set, only that cluster's; without all, only congested ones.
func (m *Monitor) Views(cluster string, all bool) []View {
	now := m.nowNanos()
	var out []View
	for _, e := range m.snapshot() {
		if cluster != "" && e.cluster != cluster {
			continue
		}
		v := e.view(now)
		if all || v.Congested {
			out = append(out, v)
		}
	}
	slices.SortFunc(out, func(a, b View) int {
		if c := strings.Compare(a.Cluster, b.Cluster); c != 0 {
			return c
		}
		return strings.Compare(a.Addr, b.Addr)
	})
	return out
}

// Close stops the detect task and the config subscription.
func (m *Monitor) Close() {
	if m.started.Load() {
		select {
		case <-m.stop:
		default:
			close(m.stop)
		}
		m.done.Wait()
	}
	if m.unsub != nil {
		m.unsub()
	}
}

func (m *Monitor) nowNanos() int64 { return m.now().UnixNano() }

func (m *Monitor) snapshot() []*Entry {
	p := m.entries.Load()
	if p == nil {
		return nil
	}
	return slices.Collect(maps.Values(*p))
}

func (m *Monitor) countCongested() int {
	n := 0
	for _, e := range m.snapshot() {
		if e.congested() {
			n++
		}
	}
	return n
}

func (m *Monitor) lookup(cluster, addr string) *Entry {
	p := m.entries.Load()
	if p == nil {
		return nil
	}
	return (*p)[entryKey{cluster, addr}]
}

// entry returns the entry, adding it (created at table generation gen)
// when it is new.
func (m *Monitor) entry(cluster, addr string, gen uint64) *Entry {
	if e := m.lookup(cluster, addr); e != nil {
		return e
	}
	m.addMu.Lock()
	defer m.addMu.Unlock()
	k := entryKey{cluster, addr}
	old := m.entries.Load()
	if old != nil {
		if e := (*old)[k]; e != nil {
			return e
		}
	}
	next := map[entryKey]*Entry{}
	if old != nil {
		next = maps.Clone(*old)
	}
	cfg := m.cfg.Load()
	e := &Entry{mon: m, cluster: cluster, addr: addr, created: gen}
	e.requests = m.metrics.requestsTo(e)
	e.aliveHist.configure(cfg.CongestionFailWindow)
	e.connHist.configure(cfg.CongestionFailWindow)
	next[k] = e
	m.entries.Store(&next)
	return e
}

// remove forgets an entry (its server was deleted from the cluster).
func (m *Monitor) remove(cluster, addr string) {
	m.addMu.Lock()
	defer m.addMu.Unlock()
	old := m.entries.Load()
	if old == nil {
		return
	}
	next := maps.Clone(*old)
	delete(next, entryKey{cluster, addr})
	m.entries.Store(&next)
}

// configChanged applies a new configuration, as ODP's apply_new_config: a
// changed window resets every history; a changed threshold re-evaluates
// the alive flags.
func (m *Monitor) configChanged(old, cfg *config.Config) {
	windowChanged := old.CongestionFailWindow != cfg.CongestionFailWindow
	thresholdChanged := old.CongestionFailureThreshold != cfg.CongestionFailureThreshold
	if !windowChanged && !thresholdChanged {
		return
	}
	now := m.nowNanos()
	for _, e := range m.snapshot() {
		if windowChanged {
			e.aliveHist.configure(cfg.CongestionFailWindow)
			e.connHist.configure(cfg.CongestionFailWindow)
		}
		n := int64(e.aliveHist.count(now))
		switch {
		case cfg.CongestionFailureThreshold <= 0 || n < cfg.CongestionFailureThreshold:
			if e.alive.Swap(0) != 0 {
				m.logChange(e, "alive", false, "why", "congestion_failure_threshold or congestion_fail_window changed")
			}
		case e.alive.Load() == 0:
			if e.alive.CompareAndSwap(0, now) {
				m.logChange(e, "alive", true, "why", "congestion_failure_threshold lowered", "failures", n)
			}
		}
	}
}

// Generation counts list changes (route.Generational): sessions that
// stick to their last server pick afresh after a change, so that they
// spread again over a server that came back.
func (m *Monitor) Generation() uint64 { return m.gen.Load() }

// logChange logs a list change once, when it happens.
func (m *Monitor) logChange(e *Entry, list string, on bool, kv ...any) {
	m.gen.Add(1)
	m.metrics.change(list, on)
	args := append([]any{"server", e.addr, "list", list}, kv...)
	if e.cluster != "" {
		args = append(args, "cluster", e.cluster)
	}
	if on {
		m.log.Warn("server blocklisted", args...)
	} else {
		m.log.Info("server cleared", args...)
	}
	if m.diag != nil && m.cfg.Load().ConnectionDiagnosisOption&1 != 0 {
		state := "cleared"
		if on {
			state = "blocked"
		}
		m.diag.Info("blocklist", append([]any{"event", "blocklist", "change", state, "server_addr", e.addr, "cluster_name", e.cluster, "list", list}, kv...)...)
	}
}
