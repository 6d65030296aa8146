package health

import (
	vm "github.com/VictoriaMetrics/metrics"

	"obgate/metrics"
)

// monitorMetrics are the monitor's series; with no registry every method
// is a no-op.
type monitorMetrics struct {
	reg      *metrics.Registry
	probeOK  *vm.Counter
	probeBad *vm.Counter
}

func newMonitorMetrics(reg *metrics.Registry) *monitorMetrics {
	mm := &monitorMetrics{reg: reg}
	if reg != nil {
		mm.probeOK = reg.Counter(metrics.DetectProbes, "result", "ok")
		mm.probeBad = reg.Counter(metrics.DetectProbes, "result", "fail")
	}
	return mm
}

func (mm *monitorMetrics) failure(reason string) {
	if mm.reg != nil {
		mm.reg.Counter(metrics.AliveFailures, "reason", reason).Inc()
	}
}

func (mm *monitorMetrics) change(list string, on bool) {
	if mm.reg == nil {
		return
	}
	what := "clear"
	if on {
		what = "set"
	}
	mm.reg.Counter(metrics.CongestionChanges, "list", list, "change", what).Inc()
}

func (mm *monitorMetrics) probe(ok bool) {
	switch {
	case mm.reg == nil:
	case ok:
		mm.probeOK.Inc()
	default:
		mm.probeBad.Inc()
	}
}

// requestsTo is the per-server request counter, with the server's list
// gauges registered beside it; nil without a registry.
func (mm *monitorMetrics) requestsTo(e *Entry) *vm.Counter {
	if mm.reg == nil {
		return nil
	}
	flag := func(f func() bool) func() float64 {
		return func() float64 {
			if f() {
				return 1
			}
			return 0
		}
	}
	lists := []struct {
		name string
		on   func() bool
	}{
		{"dead", func() bool { return e.dead.Load() != 0 }},
		{"alive", func() bool { return e.alive.Load() != 0 }},
		{"detect", func() bool { return e.detect.Load() != 0 }},
		{"connect", func() bool { return e.connFailed.Load() != 0 }},
		{"force", e.forceCongested},
	}
	for _, l := range lists {
		mm.reg.GaugeFunc(flag(l.on), metrics.ServerCongested, "cluster", e.cluster, "server", e.addr, "list", l.name)
	}
	return mm.reg.Counter(metrics.ServerRequests, "cluster", e.cluster, "server", e.addr)
}
