package metrics

import (
	"io"
	"net/http"
	"strings"

	vm "github.com/VictoriaMetrics/metrics"
)

// LatencyBuckets are the upper bounds of the statement latency histogram:
// 50 µs doubling up to about 26 s.
var LatencyBuckets = vm.ExponentialBuckets(50e-6, 2, 20)

// Registry is the set of obgate's metrics. Metric names passed to it are
// family names plus labels, e.g. `odp_sql_request_total{sqlType="SELECT"}`;
// the registry adds its constant labels. Safe for concurrent use.
type Registry struct {
	set         *vm.Set
	extraSet    *vm.Set // the extra families, written while lim.extra is on
	constLabels string  // `a="b",c="d"` or ""
	lim         limits
}

// New returns an empty registry whose series all carry constLabels, given
// as name/value pairs. Its limits (limited.go) start at ODP's defaults,
// with the extra families off.
func New(constLabels ...string) *Registry {
	r := &Registry{set: vm.NewSet(), extraSet: vm.NewSet(), constLabels: joinLabels(constLabels)}
	r.lim.series = map[*Slot]*limitedSeries{}
	r.lim.dropped = r.Counter(MonitorItemDropped)
	r.SetLimits(DefaultItemLimit, DefaultItemMaxIdle)
	return r
}

// Name builds a series name from a family and label name/value pairs, with
// the registry's constant labels appended.
func (r *Registry) Name(family string, labels ...string) string {
	var sb strings.Builder
	sb.WriteString(family)
	n := 0
	for i := 0; i+1 < len(labels); i += 2 {
		if n == 0 {
			sb.WriteByte('{')
		} else {
			sb.WriteByte(',')
		}
		sb.WriteString(labels[i])
		sb.WriteString(`="`)
		sb.WriteString(escapeLabel(labels[i+1]))
		sb.WriteByte('"')
		n++
	}
	if r.constLabels != "" {
		if n == 0 {
			sb.WriteByte('{')
		} else {
			sb.WriteByte(',')
		}
		sb.WriteString(r.constLabels)
		n++
	}
	if n > 0 {
		sb.WriteByte('}')
	}
	return sb.String()
}

// Counter returns the counter for family and labels, creating it once.
func (r *Registry) Counter(family string, labels ...string) *vm.Counter {
	return r.set.GetOrCreateCounter(r.Name(family, labels...))
}

// ExtraCounter returns the counter for family and labels in the extra
// families: it counts all along and is exported while SetExtra is on.
func (r *Registry) ExtraCounter(family string, labels ...string) *vm.Counter {
	return r.extraSet.GetOrCreateCounter(r.Name(family, labels...))
}

// Gauge returns a settable gauge for family and labels.
func (r *Registry) Gauge(family string, labels ...string) *vm.Gauge {
	return r.set.GetOrCreateGauge(r.Name(family, labels...), nil)
}

// GaugeFunc registers a gauge whose value f computes at scrape time.
func (r *Registry) GaugeFunc(f func() float64, family string, labels ...string) {
	r.set.GetOrCreateGauge(r.Name(family, labels...), f)
}

// Histogram returns a histogram with Prometheus le buckets.
func (r *Registry) Histogram(buckets []float64, family string, labels ...string) *vm.PrometheusHistogram {
	return r.set.GetOrCreatePrometheusHistogramExt(r.Name(family, labels...), buckets)
}

// WritePrometheus writes every series in Prometheus text format (the
// extra families only while SetExtra is on), followed by the process and
// Go runtime metrics (go_*, process_*).
func (r *Registry) WritePrometheus(w io.Writer) {
	r.set.WritePrometheus(w)
	if r.lim.extra.Load() {
		r.extraSet.WritePrometheus(w)
	}
	vm.WriteProcessMetrics(w)
}

// Handler serves WritePrometheus over HTTP.
func (r *Registry) Handler() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/plain; version=0.0.4")
		r.WritePrometheus(w)
	})
}

func escapeLabel(s string) string {
	if !strings.ContainsAny(s, "\\\"\n") {
		return s
	}
	s = strings.ReplaceAll(s, `\`, `\\`)
	s = strings.ReplaceAll(s, `"`, `\"`)
	return strings.ReplaceAll(s, "\n", `\n`)
}
