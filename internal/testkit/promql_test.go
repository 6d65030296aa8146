package testkit

import (
	"slices"
	"testing"
)

func TestPromQLFamilies(t *testing.T) {
	for _, tt := range []struct {
		expr string
		want []string
	}{
		{`sum by (sqlType) (rate(odp_sql_request_total{instance=~"$instance",sqlResult="fail"}[$__rate_interval]))`,
			[]string{"odp_sql_request_total"}},
		{`histogram_quantile(0.99, sum(rate(obgate_sql_latency_seconds_bucket{job="x"}[5m])) by (le))`,
			[]string{"obgate_sql_latency_seconds"}},
		{`sum(rate(odp_sql_cost_total{timeType="total"}[1m])) / ignoring(timeType) sum(rate(odp_sql_request_total[1m])) * 1e-6`,
			[]string{"odp_sql_cost_total", "odp_sql_request_total"}},
		{`obgate_server_congested == bool 1 and on (server) up offset 5m`,
			[]string{"obgate_server_congested", "up"}},
		{`label_replace(go_memstats_heap_inuse_bytes, "a", "b", "c", "(.*)") + process_resident_memory_bytes`,
			[]string{"go_memstats_heap_inuse_bytes", "process_resident_memory_bytes"}},
		{`count(obgate_server_sessions) by (server) > 0 unless ${gone}`, []string{"obgate_server_sessions"}},
	} {
		if got := PromQLFamilies(tt.expr); !slices.Equal(got, tt.want) {
			t.Errorf("PromQLFamilies(%s) = %q, want %q", tt.expr, got, tt.want)
		}
	}
}

func TestDashboardExprsAndMissing(t *testing.T) {
	dash := []byte(`{
	  "templating": {"list": [{"name": "instance", "query": {"query": "label_values(odp_current_session, instance)"}}]},
	  "panels": [
	    {"type": "row", "panels": [{"targets": [{"expr": "rate(odp_nonexistent_total[1m])"}]}]},
	    {"targets": [{"expr": "sum(rate(obgate_sql_latency_seconds_count[1m]))"}, {"refId": "B"}]}
	  ]}`)
	exprs, err := DashboardExprs(dash)
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(exprs)
	want := []string{"odp_current_session", "rate(odp_nonexistent_total[1m])", "sum(rate(obgate_sql_latency_seconds_count[1m]))"}
	if !slices.Equal(exprs, want) {
		t.Fatalf("DashboardExprs = %q, want %q", exprs, want)
	}
	var fams []string
	for _, e := range exprs {
		fams = append(fams, PromQLFamilies(e)...)
	}
	text := "# TYPE x counter\nodp_current_session{sessionType=\"client\"} 1\nobgate_sql_latency_seconds_bucket{le=\"0.1\"} 3\n"
	if got := MissingFamilies(text, fams); !slices.Equal(got, []string{"odp_nonexistent_total"}) {
		t.Fatalf("MissingFamilies = %q, want the one family not exported", got)
	}
}
