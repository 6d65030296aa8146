package reactor_test

import (
	"fmt"
	"testing"

	"obgate/internal/testkit"
)

// TestE2EMetrics checks that statements and connections move obgate's
// ODP-named counters by exactly what was done. Statement series are
// created as they are first counted, so one not there yet reads 0;
// odp_request_byte is an extra family, turned on here.
func TestE2EMetrics(t *testing.T) {
	forEachMode(t, func(t *testing.T, mode string) {
		testkit.CheckLeaks(t)
		p := startProxy(t, mode, "enable_extra_prometheus_metric", "true")
		type series struct {
			family string
			labels []string
		}
		watched := map[string]series{
			"select ok":   {"odp_sql_request_total", []string{"sqlType", "SELECT", "sqlResult", "success"}},
			"select fail": {"odp_sql_request_total", []string{"sqlType", "SELECT", "sqlResult", "fail"}},
			"insert ok":   {"odp_sql_request_total", []string{"sqlType", "INSERT", "sqlResult", "success"}},
			"login ok":    {"odp_new_client_connections", []string{"connectionResult", "success"}},
			"login fail":  {"odp_new_client_connections", []string{"connectionResult", "fail"}},
			"bytes in":    {"odp_request_byte", []string{"transType", "request", "sessionType", "client"}},
			"bytes out":   {"odp_request_byte", []string{"transType", "response", "sessionType", "client"}},
			"sessions":    {"odp_current_session", []string{"sessionType", "client"}},
			"err 1146":    {"obgate_sql_error_total", []string{"code", "1146"}},
		}
		read := func() map[string]float64 {
			text := p.MetricsText()
			out := map[string]float64{}
			for name, s := range watched {
				v, ok := testkit.MetricSum(text, s.family, s.labels...)
				if !ok && s.family != "odp_sql_request_total" && s.family != "obgate_sql_error_total" {
					t.Fatalf("series %s%q missing from the metrics:\n%s", s.family, s.labels, text)
				}
				out[name] = v
			}
			return out
		}
		before := read()

		tbl := "metrics_" + mode
		a := dialClient(t, p, "root", "")
		b := dialClient(t, p, "root", "")
		if _, err := a.Exec("CREATE TABLE IF NOT EXISTS " + tbl + " (id INT PRIMARY KEY)"); err != nil {
			t.Fatal(err)
		}
		for _, q := range []string{"DELETE FROM " + tbl, "INSERT INTO " + tbl + " VALUES (1)", "INSERT INTO " + tbl + " VALUES (2)"} {
			if _, err := b.Exec(q); err != nil {
				t.Fatal(err)
			}
		}
		for range 5 {
			if _, err := a.Query("SELECT id FROM " + tbl); err != nil {
				t.Fatal(err)
			}
		}
		if _, err := b.Query("SELECT * FROM no_such_table"); err == nil {
			t.Fatal("SELECT from a missing table succeeded")
		}
		if err := dialErr(p, otherUser, "wrong"); err == nil {
			t.Fatal("login with a wrong password succeeded")
		}
		// obgate counts a statement or a login just after its answer has
		// gone to the client, so wait for the counters to get there.
		want := map[string]float64{
			"select ok": 5, "select fail": 1, "insert ok": 2, "login ok": 2, "login fail": 1, "sessions": 2, "err 1146": 1,
		}
		var during map[string]float64
		delta := func(m map[string]float64, name string) float64 { return m[name] - before[name] }
		arrived := func() bool {
			during = read()
			for name, w := range want {
				if delta(during, name) != w {
					return false
				}
			}
			return true
		}
		testkit.EventuallyDescribe(t, hangLimit, arrived, func() string {
			return fmt.Sprintf("counters moved by %v, want %v", deltas(during, before), want)
		})
		a.Close()
		b.Close()
		waitNoClients(t, p)
		for _, name := range []string{"bytes in", "bytes out"} {
			if delta(during, name) <= 0 {
				t.Errorf("%s did not move", name)
			}
		}
		if got := read()["sessions"]; got != 0 {
			t.Errorf("odp_current_session = %v after every client left, want 0", got)
		}
	})
}

func deltas(m, base map[string]float64) map[string]float64 {
	out := map[string]float64{}
	for k, v := range m {
		out[k] = v - base[k]
	}
	return out
}
