package reactor_test

import (
	"strconv"
	"strings"
	"testing"
	"time"

	"obgate/internal/testkit"
	"obgate/internal/testproxy"
)

// metric is testkit.MetricSum on the proxy's current metrics.
func metric(p *testproxy.Proxy, family string, labels ...string) (float64, bool) {
	return testkit.MetricSum(p.MetricsText(), family, labels...)
}

// seriesLines returns the lines of the metrics text whose family is one
// of families.
func seriesLines(text string, families ...string) []string {
	var out []string
	for line := range strings.Lines(text) {
		fam, _, _ := strings.Cut(line, "{")
		fam, _, _ = strings.Cut(fam, " ")
		for _, f := range families {
			if fam == f {
				out = append(out, strings.TrimSpace(line))
			}
		}
	}
	return out
}

// TestE2EMetricsSQLCost checks odp_sql_cost_total: microseconds per
// sqlType and timeType, under ODP's tenant labels, with the server time
// inside the total and the prepare time beside it.
func TestE2EMetricsSQLCost(t *testing.T) {
	forEachMode(t, func(t *testing.T, mode string) {
		p := startProxy(t, mode)
		a := dialClient(t, p, "root", "")
		for range 2 {
			if _, err := a.Query("SELECT SLEEP(0.05)"); err != nil {
				t.Fatal(err)
			}
		}
		tenant := []string{"logicTenant", "undefined", "logicSchema", "", "cluster", "", "tenant", "", "schema", testDB, "sqlType", "SELECT"}
		cost := func(timeType string) float64 {
			v, _ := metric(p, "odp_sql_cost_total", append(tenant, "timeType", timeType)...)
			return v
		}
		testkit.EventuallyDescribe(t, hangLimit, func() bool {
			n, _ := metric(p, "odp_sql_request_total", append(tenant, "sqlResult", "success", "partitionHit", "true")...)
			return n == 2
		}, func() string { return "odp_sql_request_total never counted the two SELECTs:\n" + p.MetricsText() })
		total, server, prepare := cost("total"), cost("server"), cost("prepare")
		if total < 100e3 {
			t.Errorf("timeType=total is %v µs for two SELECT SLEEP(0.05), want at least 100000", total)
		}
		if server < 100e3 || server > total {
			t.Errorf("timeType=server is %v µs, want between 100000 and the total %v", server, total)
		}
		if _, ok := metric(p, "odp_sql_cost_total", append(tenant, "timeType", "prepare")...); ok && prepare+server > total {
			t.Errorf("prepare %v + server %v µs exceed the total %v", prepare, server, total)
		}
		if h, _ := metric(p, "obgate_sql_latency_seconds_count"); h < 2 {
			t.Errorf("latency histogram counted %v statements", h)
		}
	})
}

// TestE2EMetricsItemLimit: with monitor_item_limit set (ALTER PROXYCONFIG
// through the store), the tenant families stop growing at the limit and
// the refused updates are counted.
func TestE2EMetricsItemLimit(t *testing.T) {
	p := startProxy(t, "net")
	a := dialClient(t, p, "root", "")
	if _, err := a.Query("SELECT 1"); err != nil {
		t.Fatal(err)
	}
	// The answer reaches the client before the statement is accounted
	// for: wait until every series of the first SELECT exists.
	testkit.Eventually(t, hangLimit, func() bool {
		text := p.MetricsText()
		return strings.Contains(text, "odp_sql_request_total{") && strings.Contains(text, "odp_transaction_total{") &&
			strings.Contains(text, `timeType="prepare"`) && strings.Contains(text, `timeType="server"`) &&
			strings.Contains(text, `timeType="total"`)
	}, "the first SELECT made no series")
	limit := p.Metrics.LimitedSeries() + 2
	if _, err := p.Store.Set("monitor_item_limit", strconv.Itoa(limit)); err != nil {
		t.Fatal(err)
	}
	tbl := "metrics_limit"
	for _, q := range []string{
		"CREATE TABLE IF NOT EXISTS " + tbl + " (id INT PRIMARY KEY)",
		"DELETE FROM " + tbl,
		"INSERT INTO " + tbl + " VALUES (1)",
		"UPDATE " + tbl + " SET id = 2",
		"SHOW TABLES",
	} {
		if _, err := a.Exec(q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	families := []string{"odp_sql_request_total", "odp_sql_cost_total", "odp_transaction_total"}
	var lines []string
	testkit.EventuallyDescribe(t, hangLimit, func() bool {
		text := p.MetricsText()
		lines = seriesLines(text, families...)
		dropped, _ := testkit.MetricSum(text, "obgate_monitor_item_dropped_total")
		return dropped > 0
	}, func() string { return "nothing was dropped:\n" + strings.Join(lines, "\n") })
	if len(lines) != limit {
		t.Errorf("%d tenant series with monitor_item_limit=%d:\n%s", len(lines), limit, strings.Join(lines, "\n"))
	}
}

// TestE2EMetricsItemIdle: with monitor_item_max_idle_period set through
// the store, the server's sweeper drops the label sets that stood still
// that long; the next statement brings its series back from zero.
func TestE2EMetricsItemIdle(t *testing.T) {
	p := startProxy(t, "net")
	a := dialClient(t, p, "root", "")
	sel := []string{"sqlType", "SELECT", "sqlResult", "success"}
	if _, err := a.Query("SELECT 1"); err != nil {
		t.Fatal(err)
	}
	testkit.Eventually(t, hangLimit, func() bool { n, _ := metric(p, "odp_sql_request_total", sel...); return n == 1 },
		"the SELECT was not counted")
	if _, err := p.Store.Set("monitor_item_max_idle_period", "1m"); err != nil {
		t.Fatal(err)
	}
	now := time.Now()
	p.Server.SweepAt(now)
	p.Server.SweepAt(now.Add(59 * time.Second))
	if _, ok := metric(p, "odp_sql_request_total", sel...); !ok {
		t.Fatal("the series was dropped before monitor_item_max_idle_period")
	}
	p.Server.SweepAt(now.Add(61 * time.Second))
	if lines := seriesLines(p.MetricsText(), "odp_sql_request_total", "odp_sql_cost_total"); len(lines) != 0 {
		t.Fatalf("idle series left after monitor_item_max_idle_period:\n%s", strings.Join(lines, "\n"))
	}
	if _, err := a.Query("SELECT 1"); err != nil {
		t.Fatal(err)
	}
	testkit.Eventually(t, hangLimit, func() bool { n, _ := metric(p, "odp_sql_request_total", sel...); return n == 1 },
		"the series did not come back from zero")
}

// TestE2EMetricsExtraFamilies: odp_request_byte is exported only while
// enable_extra_prometheus_metric is on, and counted all along.
func TestE2EMetricsExtraFamilies(t *testing.T) {
	p := startProxy(t, "net")
	a := dialClient(t, p, "root", "")
	if _, err := a.Query("SELECT 1"); err != nil {
		t.Fatal(err)
	}
	testkit.Eventually(t, hangLimit, func() bool { _, ok := metric(p, "odp_sql_request_total"); return ok }, "no statement counted")
	if _, ok := metric(p, "odp_request_byte"); ok {
		t.Fatal("odp_request_byte exported with enable_extra_prometheus_metric off")
	}
	for _, on := range []string{"true", "false"} {
		if _, err := p.Store.Set("enable_extra_prometheus_metric", on); err != nil {
			t.Fatal(err)
		}
		v, ok := metric(p, "odp_request_byte", "transType", "request", "sessionType", "client")
		if want := on == "true"; ok != want || (want && v <= 0) {
			t.Fatalf("enable_extra_prometheus_metric=%s: odp_request_byte exported %v (%v), want %v with the bytes so far", on, ok, v, want)
		}
	}
}
