package reactor_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"slices"
	"strings"
	"testing"

	"obgate/internal/testkit"
	"obgate/mysqlproto"
	"obgate/tools/obsim"
)

// dashboardFile is the Grafana dashboard shipped with obgate.
const dashboardFile = "../deploy/grafana/obgate-dashboard.json"

// TestDashboardFamiliesExported reads every PromQL expression of the
// Grafana dashboard, takes the metric families they name, and checks each
// one is in what an obgate in OceanBase mode (in front of obsim, the
// extra families on) serves at /metrics once it has run statements, a
// transaction, a failing statement and one retried across the servers. A
// panel that names a family obgate does not export fails it.
func TestDashboardFamiliesExported(t *testing.T) {
	raw, err := os.ReadFile(dashboardFile)
	if err != nil {
		t.Fatal(err)
	}
	exprs, err := testkit.DashboardExprs(raw)
	if err != nil {
		t.Fatal(err)
	}
	var families []string
	for _, e := range exprs {
		fs := testkit.PromQLFamilies(e)
		if len(fs) == 0 {
			t.Errorf("expression names no metric family: %s", e)
		}
		families = append(families, fs...)
	}
	slices.Sort(families)
	families = slices.Compact(families)
	if len(families) < 20 {
		t.Fatalf("only %d families in %d expressions of the dashboard: %q", len(families), len(exprs), families)
	}

	c := startOBSim(t)
	p := startOBProxy(t, c, "netpoll", "enable_extra_prometheus_metric", "true")
	web := httptest.NewServer(p.Metrics.Handler())
	t.Cleanup(web.Close)
	_, conn := obConn(t, p)
	ctx, cancel := context.WithTimeout(context.Background(), hangLimit)
	defer cancel()
	for _, q := range []string{
		"INSERT INTO kv VALUES (1, 'a')",
		"SELECT v FROM kv WHERE id = 1",
		"BEGIN",
		"UPDATE kv SET v = 'b' WHERE id = 1",
		"COMMIT",
	} {
		if _, err := conn.ExecContext(ctx, q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	if _, err := conn.ExecContext(ctx, "SELECT * FROM no_such_table"); err == nil {
		t.Fatal("SELECT from a missing table succeeded")
	}
	mk := newMarker("dashboard")
	if _, err := c.InjectError(obsim.ErrorRule{Pattern: mk, Code: mysqlproto.OBServerIsStopping}); err != nil {
		t.Fatal(err)
	}
	if _, err := conn.ExecContext(ctx, fmt.Sprintf("SELECT 1 /* %s */", mk)); sqlErrorCode(err) != mysqlproto.OBServerIsStopping {
		t.Fatalf("statement every server refused: %v, want ERR %d", err, mysqlproto.OBServerIsStopping)
	}
	c.ClearErrors()

	scrape := func() string {
		resp, err := http.Get(web.URL + "/metrics")
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		body, err := io.ReadAll(resp.Body)
		if err != nil {
			t.Fatal(err)
		}
		return string(body)
	}
	var missing []string
	testkit.EventuallyDescribe(t, hangLimit, func() bool {
		missing = testkit.MissingFamilies(scrape(), families)
		return len(missing) == 0
	}, func() string {
		return fmt.Sprintf("families the dashboard reads that /metrics does not export: %s", strings.Join(missing, ", "))
	})
}
