package metrics

import (
	"net/http/httptest"
	"strings"
	"testing"
)

func TestRegistry(t *testing.T) {
	r := New("namespace", "ODP")
	c := r.Counter(SQLRequestTotal, "sqlType", "SELECT", "sqlResult", ResultSuccess)
	c.Inc()
	if c2 := r.Counter(SQLRequestTotal, "sqlType", "SELECT", "sqlResult", ResultSuccess); c2 != c {
		t.Fatal("same name must give the same counter")
	}
	r.Gauge(CurrentSession, "sessionType", SessionClient).Set(3)
	r.GaugeFunc(func() float64 { return 7 }, "obgate_test_gauge")
	h := r.Histogram(LatencyBuckets, SQLLatency)
	h.Update(0.0003)
	rec := httptest.NewRecorder()
	r.Handler().ServeHTTP(rec, httptest.NewRequest("GET", "/metrics", nil))
	body := rec.Body.String()
	for _, want := range []string{
		`odp_sql_request_total{sqlType="SELECT",sqlResult="success",namespace="ODP"} 1`,
		`odp_current_session{sessionType="client",namespace="ODP"} 3`,
		`obgate_test_gauge{namespace="ODP"} 7`,
		`obgate_sql_latency_seconds_bucket{namespace="ODP",le="0.0004"} 1`,
		`obgate_sql_latency_seconds_count{namespace="ODP"} 1`,
		`go_goroutines`,
	} {
		if !strings.Contains(body, want) {
			t.Errorf("missing %q in:\n%s", want, body)
		}
	}
	if got := r.Name("x", "l", `a"b`); got != `x{l="a\"b",namespace="ODP"}` {
		t.Fatalf("escaping: %s", got)
	}
}
