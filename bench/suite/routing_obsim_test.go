package suite

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"reflect"
	"strings"
	"testing"
	"time"

	"obgate/tools/obsim"
)

// The generated topology for 8 tables is obsim's sysbench topology, under
// another cluster name.
func TestRoutingTopologyMatchesSbtestTopology(t *testing.T) {
	got, err := RoutingTopology("sbtest", 8, time.Millisecond)
	if err != nil {
		t.Fatal(err)
	}
	want, err := os.ReadFile("../../tools/obsim/testdata/sbtest-topology.json")
	if err != nil {
		t.Fatal(err)
	}
	var g, w any
	if err := json.Unmarshal(got, &g); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(want, &w); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(g, w) {
		t.Errorf("generated topology differs from sbtest-topology.json:\n%s", got)
	}
	// obsim reads it with unknown fields forbidden.
	topo, err := obsim.ParseTopology(got)
	if err != nil {
		t.Fatal(err)
	}
	if topo.Cluster != "sbtest" || len(topo.Tables) != 8 || len(topo.Zones) != 3 {
		t.Errorf("parsed %+v", topo)
	}
}

func TestRoutingTopology(t *testing.T) {
	b, err := RoutingTopology(RoutingCluster, 4, 0)
	if err != nil {
		t.Fatal(err)
	}
	var topo topoFile
	if err := json.Unmarshal(b, &topo); err != nil {
		t.Fatal(err)
	}
	if topo.Cluster != "bench3" || topo.RemotePlanCost != "0s" || len(topo.Tables) != 4 {
		t.Fatalf("topology %+v", topo)
	}
	// Leaders start one node further per table and wrap after three.
	starts := []string{"zone1-1", "zone2-1", "zone3-1", "zone1-1"}
	for i, tb := range topo.Tables {
		if tb.Name != "sbtest"+string(rune('1'+i)) || tb.Database != "sbtest" || tb.Tenant != "test" {
			t.Errorf("table %d: %+v", i, tb)
		}
		if len(tb.Leaders) != 3 || tb.Leaders[0] != starts[i] || tb.Part.Num != 6 || tb.Part.Type != "HASH" || tb.Part.Columns[0] != "id" {
			t.Errorf("table %s: leaders %v, part %+v", tb.Name, tb.Leaders, tb.Part)
		}
		if !strings.HasPrefix(tb.Create, "CREATE TABLE "+tb.Name+" (") {
			t.Errorf("table %s: create %q", tb.Name, tb.Create)
		}
	}
	if c, err := RoutingTopology(RoutingCluster, 1, 2500*time.Microsecond); err != nil || !strings.Contains(string(c), `"remote_plan_cost": "2.5ms"`) {
		t.Errorf("2.5ms: %v\n%s", err, c)
	}
	for _, bad := range []struct {
		cluster string
		tables  int
		cost    time.Duration
	}{{"", 1, 0}, {"c", 0, 0}, {"c", 1, -time.Millisecond}} {
		if _, err := RoutingTopology(bad.cluster, bad.tables, bad.cost); err == nil {
			t.Errorf("RoutingTopology(%q, %d, %v) succeeded", bad.cluster, bad.tables, bad.cost)
		}
	}
	if got := RoutingNodeNames(); !reflect.DeepEqual(got, []string{"zone1-1", "zone2-1", "zone3-1"}) {
		t.Errorf("node names %v", got)
	}
}

// cannedStats is a GET /v1/stats answer: obgate's statements on two
// nodes, a direct client's on the third.
const cannedStats = `{
  "nodes": {
    "zone1-1": {"statements": 10, "local": 8, "remote": 2, "weak": 0,
                "proxy": {"statements": 10, "local": 8, "remote": 2, "weak": 0},
                "direct": {"statements": 0, "local": 0, "remote": 0, "weak": 0}},
    "zone2-1": {"statements": 5, "local": 4, "remote": 1, "weak": 1,
                "proxy": {"statements": 5, "local": 4, "remote": 1, "weak": 1},
                "direct": {"statements": 0, "local": 0, "remote": 0, "weak": 0}},
    "zone3-1": {"statements": 6, "local": 2, "remote": 4, "weak": 0,
                "proxy": {"statements": 0, "local": 0, "remote": 0, "weak": 0},
                "direct": {"statements": 6, "local": 2, "remote": 4, "weak": 0}}
  },
  "total": {"statements": 21, "local": 14, "remote": 7, "weak": 1,
            "proxy": {"statements": 15, "local": 12, "remote": 3, "weak": 1},
            "direct": {"statements": 6, "local": 2, "remote": 4, "weak": 0}}
}`

func TestParseObsimStats(t *testing.T) {
	s, err := ParseObsimStats([]byte(cannedStats))
	if err != nil {
		t.Fatal(err)
	}
	if p := s.Total.Split(SplitProxy); p != (ObsimCounts{Statements: 15, Local: 12, Remote: 3, Weak: 1}) {
		t.Errorf("proxy split %+v", p)
	}
	if got := s.Total.Split(SplitProxy).LocalRatio(); got != 0.8 {
		t.Errorf("proxy local ratio %v, want 0.8", got)
	}
	if got := s.Total.Split(SplitDirect).LocalRatio(); float64(got) != 2.0/6 {
		t.Errorf("direct local ratio %v", got)
	}
	if got := s.Total.Split("").Statements; got != 21 {
		t.Errorf("all clients: %d statements", got)
	}
	if got := s.Nodes["zone3-1"].Split(SplitDirect).Remote; got != 4 {
		t.Errorf("zone3-1 direct remote %d", got)
	}
	if (ObsimCounts{}).LocalRatio().Valid() {
		t.Error("the local ratio of nothing is known")
	}

	// Counts that do not add up are a format change, not data.
	for name, bad := range map[string]string{
		"not json":     `{"nodes":`,
		"local+remote": strings.Replace(cannedStats, `"total": {"statements": 21, "local": 14`, `"total": {"statements": 21, "local": 13`, 1),
		"proxy+direct": strings.Replace(cannedStats, `"total": {"statements": 21, "local": 14, "remote": 7`, `"total": {"statements": 22, "local": 15, "remote": 7`, 1),
		"nodes vs total": strings.Replace(cannedStats, `"direct": {"statements": 6, "local": 2, "remote": 4, "weak": 0}}
  },`, `"direct": {"statements": 6, "local": 3, "remote": 3, "weak": 0}}
  },`, 1),
		"node split sums": strings.Replace(cannedStats, `"zone2-1": {"statements": 5, "local": 4`, `"zone2-1": {"statements": 5, "local": 5`, 1),
	} {
		if bad == cannedStats {
			t.Fatalf("%s: the replacement did not apply", name)
		}
		if _, err := ParseObsimStats([]byte(bad)); err == nil {
			t.Errorf("%s: parsed", name)
		}
	}
}

func TestObsimControl(t *testing.T) {
	var calls []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		calls = append(calls, r.Method+" "+r.URL.Path)
		switch r.Method + " " + r.URL.Path {
		case "DELETE /v1/stats":
			w.Write([]byte(`{"ok":true}`))
		case "GET /v1/stats":
			w.Write([]byte(cannedStats))
		case "GET /v1/nodes":
			w.Write([]byte(`[{"name":"zone1-1","zone":"zone1","addr":"127.0.0.1:1","running":true},{"name":"zone2-1","zone":"zone2","addr":"127.0.0.1:2"}]`))
		case "GET /v1/remote-plan-cost":
			w.Write([]byte(`{"cost":"1ms"}`))
		default:
			http.Error(w, `{"error":"no"}`, http.StatusNotFound)
		}
	}))
	defer srv.Close()
	ctl := &ObsimControl{Addr: strings.TrimPrefix(srv.URL, "http://")}
	ctx := context.Background()
	if err := ctl.ResetStats(ctx); err != nil {
		t.Fatal(err)
	}
	st, raw, err := ctl.Stats(ctx)
	if err != nil || st.Total.Statements != 21 || len(raw) == 0 {
		t.Fatalf("stats %+v, %v", st, err)
	}
	nodes, err := ctl.Nodes(ctx)
	if err != nil || len(nodes) != 2 || nodes[1] != (ObsimNode{Name: "zone2-1", Zone: "zone2", Addr: "127.0.0.1:2"}) {
		t.Fatalf("nodes %+v, %v", nodes, err)
	}
	if d, err := ctl.RemotePlanCost(ctx); err != nil || d != time.Millisecond {
		t.Fatalf("cost %v, %v", d, err)
	}
	if err := ctl.do(ctx, http.MethodGet, "/v1/nosuch", nil); err == nil || !strings.Contains(err.Error(), "404") {
		t.Errorf("missing endpoint: %v", err)
	}
	want := []string{"DELETE /v1/stats", "GET /v1/stats", "GET /v1/nodes", "GET /v1/remote-plan-cost", "GET /v1/nosuch"}
	if !reflect.DeepEqual(calls, want) {
		t.Errorf("calls %v", calls)
	}
}
