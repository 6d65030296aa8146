package health

import (
	"context"
	"time"

	"obgate/config"
)

// Target is a server the detect task may probe.
type Target struct {
	Cluster string // the cluster's name; "" in mysql routing mode
	Addr    string
}

// Targets lists the servers obgate may route to now: every server of
// every loaded cluster table, or the configured servers in mysql routing
// mode. It runs on the detect goroutine.
type Targets func() []Target

// Start runs the detect task until Close: every
// server_detect_refresh_interval it starts a probe of each server that
// needs one (at most one probe per server at a time).
//
// Which servers (server_detect_mode): 0 probes none for detection; 1
// probes servers with statements in flight and servers under suspicion
// (a failed probe, a failed connect, on a list); 2 probes every server;
// 3 probes every server and, in OceanBase mode, also logs in as
// proxyro@sys and runs a statement, which finds a server whose network
// answers but whose SQL engine is stuck. In every mode, beyond ODP, a
// server on the connect or alive list is probed to let it back: a connect
// failure is retried every round, an alive-congested server every
// congestion_retry_interval, and a probe that succeeds clears them, so
// recovery never costs a client's statement and never waits for traffic.
func (m *Monitor) Start(targets Targets) {
	if !m.started.CompareAndSwap(false, true) {
		return
	}
	m.done.Add(1)
	go m.detectLoop(targets)
}

func (m *Monitor) detectLoop(targets Targets) {
	defer m.done.Done()
	for {
		select {
		case <-m.stop:
			return
		case <-time.After(m.cfg.Load().ServerDetectRefreshInterval):
		}
		m.contain(func() { m.detectRound(targets()) })
	}
}

// probeWhy says why a server is probed.
type probeWhy uint8

const (
	noProbe      probeWhy = iota
	probeDetect           // the detect task's own choice; failures count
	probeRecover          // a listed server, to let it back
)

// detectRound starts the probes this round needs.
func (m *Monitor) detectRound(ts []Target) {
	cfg := m.cfg.Load()
	now := m.nowNanos()
	for _, t := range ts {
		name := t.Cluster
		e := m.lookup(name, t.Addr)
		if e == nil {
			if cfg.ServerDetectMode < 2 {
				continue
			}
			e = m.entry(name, t.Addr, 0)
		}
		why := m.probeReason(e, cfg, now)
		if why == noProbe || !e.probing.CompareAndSwap(false, true) {
			continue
		}
		if why == probeRecover {
			e.lastProbe.Store(now)
		}
		m.done.Add(1)
		go func() {
			defer m.done.Done()
			defer e.probing.Store(false)
			m.contain(func() { m.probeRun(e, t, why) })
		}()
	}
}

// probeRun probes a server and, while its detect probes fail short of
// server_detect_fail_threshold, probes it again one
// server_detect_refresh_interval after the last probe began (at once when
// the probe took longer), so that strikes come one period apart and not
// one round late each: a hung server is listed after about threshold ×
// detect_server_timeout.
func (m *Monitor) probeRun(e *Entry, t Target, why probeWhy) {
	for {
		cfg := m.cfg.Load()
		began := time.Now()
		if ok := m.probeAndApply(e, t, why, cfg); ok || why != probeDetect || e.detectFails.Load() == 0 {
			return
		}
		wait := cfg.ServerDetectRefreshInterval - time.Since(began)
		select {
		case <-m.stop:
			return
		case <-time.After(max(wait, 0)):
		}
	}
}

// probeReason decides whether e is probed this round.
func (m *Monitor) probeReason(e *Entry, cfg *config.Config, now int64) probeWhy {
	mode := cfg.ServerDetectMode
	suspect := e.detectFails.Load() > 0 || e.detect.Load() != 0 || e.connFailed.Load() != 0
	switch {
	case mode >= 2, mode == 1 && (suspect || e.inflight.Load() > 0):
		return probeDetect
	case e.connFailed.Load() != 0:
		return probeRecover
	case e.alive.Load() != 0 && now-e.lastProbe.Load() >= int64(cfg.CongestionRetryInterval) &&
		now-e.aliveHist.lastEvent() >= int64(cfg.CongestionRetryInterval):
		return probeRecover
	}
	return noProbe
}

// probeAndApply probes one server and applies the result, which it
// reports.
func (m *Monitor) probeAndApply(e *Entry, t Target, why probeWhy, cfg *config.Config) bool {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() {
		select {
		case <-m.stop:
			cancel()
		case <-ctx.Done():
		}
	}()
	err := probe(ctx, t, cfg, m.serverTLS)
	m.metrics.probe(err == nil)
	if err == nil {
		m.probeSucceeded(e, cfg)
		return true
	}
	m.log.Debug("server probe failed", "server", t.Addr, "err", err)
	if why == probeDetect && cfg.ServerDetectMode > 0 {
		m.probeFailed(e, cfg, err)
	}
	return false
}

// probeSucceeded is ODP's DETECT_ALIVE: the detect flag and a connect
// failure are cleared. The alive flag, set by failures of real traffic
// that a probe may not see (a server answering 8001 to statements but
// accepting logins), is cleared only once congestion_retry_interval has
// passed since its last failure.
func (m *Monitor) probeSucceeded(e *Entry, cfg *config.Config) {
	e.detectFails.Store(0)
	if e.detect.Swap(0) != 0 {
		e.shownState.Store(uint32(StateDetectAlive))
		m.logChange(e, "detect", false)
	}
	e.ConnectSucceeded()
	quiet := m.nowNanos()-e.aliveHist.lastEvent() >= int64(cfg.CongestionRetryInterval)
	if a := e.alive.Load(); a != 0 && quiet && e.alive.CompareAndSwap(a, 0) {
		m.logChange(e, "alive", false, "why", "probe succeeded")
	}
}

// probeFailed counts a strike; at server_detect_fail_threshold strikes
// the server is detect-congested (DETECT_DEAD) and every connection to it
// is closed.
func (m *Monitor) probeFailed(e *Entry, cfg *config.Config, err error) {
	n := e.detectFails.Add(1)
	if int64(n) < cfg.ServerDetectFailThreshold {
		return
	}
	e.detectFails.Store(0)
	if e.detect.Load() == 0 {
		e.detect.Store(m.nowNanos())
		e.shownState.Store(uint32(StateDetectDead))
		m.logChange(e, "detect", true, "strikes", n, "err", err.Error())
	}
	if fn := m.onDead.Load(); fn != nil {
		(*fn)(e.cluster, e.addr)
	}
}

// contain keeps a panic in background work from ending the process.
func (m *Monitor) contain(f func()) {
	defer func() {
		if r := recover(); r != nil {
			m.log.Error("panic in health monitor", "panic", r)
		}
	}()
	f()
}
