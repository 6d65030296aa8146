package reactor

import (
	"strings"
	"testing"
	"time"

	"obgate/metrics"
	"obgate/route"
)

// TestTenantMetricsNoAlloc: counting a statement into a tenant's series
// allocates nothing, once they exist and when monitor_item_limit refuses
// them.
func TestTenantMetricsNoAlloc(t *testing.T) {
	reg := metrics.New()
	m := &reactorMetrics{reg: reg, appName: "app"}
	tm := m.forTenant("c", "t", "db")
	cost := [3]time.Duration{3 * time.Millisecond, time.Millisecond, 2 * time.Millisecond}
	tm.statement(route.StmtSelect, false, false, &cost)
	if n := testing.AllocsPerRun(100, func() { tm.statement(route.StmtSelect, false, false, &cost) }); n != 0 {
		t.Errorf("%v allocations per counted statement", n)
	}
	var sb strings.Builder
	reg.WritePrometheus(&sb)
	for _, want := range []string{
		// one call before, and AllocsPerRun's 100 runs after a warm-up call
		`odp_sql_request_total{logicTenant="app",logicSchema="",cluster="c",tenant="t",schema="db",sqlType="SELECT",sqlResult="success",partitionHit="true"} 102`,
		`odp_sql_cost_total{logicTenant="app",logicSchema="",cluster="c",tenant="t",schema="db",sqlType="SELECT",timeType="server"} 204000`,
	} {
		if !strings.Contains(sb.String(), want) {
			t.Errorf("missing %s in:\n%s", want, sb.String())
		}
	}
	reg.SetLimits(int64(reg.LimitedSeries()), time.Minute)
	if n := testing.AllocsPerRun(100, func() { tm.statement(route.StmtInsert, true, true, &cost) }); n != 0 {
		t.Errorf("%v allocations per statement refused at monitor_item_limit", n)
	}
}
