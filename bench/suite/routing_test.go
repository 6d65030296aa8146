package suite

import (
	"image/png"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestHAProxyRoundRobinConfig(t *testing.T) {
	cfg := HAProxyRoundRobinConfig(DefaultHAProxySettings, 4000, []HAProxyBackend{
		{Name: "zone1-1", Addr: "127.0.0.1:1"}, {Name: "zone2-1", Addr: "127.0.0.1:2"}, {Name: "zone3-1", Addr: "127.0.0.1:3"},
	})
	for _, want := range []string{
		"nbthread 1\n", "mode tcp\n", "bind 127.0.0.1:4000\n", "balance roundrobin\n",
		"    server zone1-1 127.0.0.1:1 maxconn 4096\n    server zone2-1 127.0.0.1:2 maxconn 4096\n    server zone3-1 127.0.0.1:3 maxconn 4096\n",
	} {
		if !strings.Contains(cfg, want) {
			t.Errorf("config lacks %q:\n%s", want, cfg)
		}
	}
}

// cannedRoutingSummary builds a summary the way RunRouting does, from
// canned sysbench output and obsim counts.
func cannedRoutingSummary(t *testing.T) *RoutingSummary {
	t.Helper()
	ps, err := ParseSysbench(readTestdata(t, "oltp_point_select-histogram.txt"))
	if err != nil {
		t.Fatal(err)
	}
	var targets []TargetInfo
	for _, name := range RoutingTargets {
		ti := TargetInfo{Name: name, Kind: routingKind(name), User: RoutingDirectUser, Port: 3000}
		if ti.Kind == KindObgate {
			ti.User = RoutingProxyUser
			ti.Command = append([]string{"bin/obgate", "-N", "-r", "a;b;c", "-c", RoutingCluster}, routingTargetArgs(name)...)
		}
		targets = append(targets, ti)
	}
	qps := map[string]float64{RouteObgate: 9000, RouteTenantList: 5000, RouteHAProxy: 6000, RouteDirect: 7000}
	local := map[string]uint64{RouteObgate: 95, RouteTenantList: 33, RouteHAProxy: 34, RouteDirect: 32}
	var runs []RoutingRun
	for round := 1; round <= 3; round++ {
		for _, ti := range targets {
			r := RoutingRun{Workload: "oltp_point_select", Threads: 8, Target: ti.Name, Kind: ti.Kind, Round: round,
				Stats: ps, Split: routingSplit(ti.Kind), ProxyCPUUsPerQuery: NaN, OBSimCPUUsPerQuery: 40, MariaDBCPUUsPerQuery: 20}
			// Rounds 1, 2, 3 scale QPS by 0.9, 1, 1.1: the median is round 2.
			r.Stats.QPS = qps[ti.Name] * (0.8 + 0.1*float64(round))
			r.Stats.Queries = 100
			if ti.Kind != KindOBSim {
				r.ProxyCPUUsPerQuery = 30
			}
			n := ObsimNodeStats{}
			c := ObsimCounts{Statements: 100, Local: local[ti.Name], Remote: 100 - local[ti.Name]}
			if r.Split == SplitProxy {
				n.Proxy = c
			} else {
				n.Direct = c
			}
			n.ObsimCounts = c
			r.Obsim = ObsimStats{Nodes: map[string]ObsimNodeStats{"zone1-1": n}, Total: n}
			r.Counted = c
			r.LocalRatio = c.LocalRatio()
			if ti.Name == RouteTenantList && round == 3 {
				r = RoutingRun{Workload: r.Workload, Threads: 8, Target: ti.Name, Kind: ti.Kind, Round: 3,
					Error: "sysbench: exit status 1: sysbench failed: FATAL: mysql_stmt_execute() returned error 1213\nmore"}
			}
			runs = append(runs, r)
		}
	}
	s := &RoutingSummary{
		CommandLine: "go run ./bench/cmd/routing-suite --rounds 3",
		Environment: Environment{Date: "2026-12-01T00:00:00Z", NProc: 2, CPUModel: "AMD EPYC", Kernel: "6.1", GoVersion: "go1.26", ObgateCommit: "abc1234"},
		Settings: RoutingSettings{
			Cluster: RoutingCluster, Partitions: RoutingPartitions, Tables: 8, TableSize: 10000, TimeSeconds: 20, WarmupSeconds: 5, Rounds: 3,
			Workloads: []string{"oltp_point_select"}, Threads: []int{8}, RemotePlanCost: "1ms", IgnoreErrors: "none",
			SysbenchArgs: []string{"--db-ps-mode=auto", "--mysql-ignore-errors=none"},
		},
		OBSim:   RoutingOBSim{Command: []string{"bin/obsim", "serve"}, Nodes: []ObsimNode{{Name: "zone1-1"}, {Name: "zone2-1"}, {Name: "zone3-1"}}},
		Targets: targets,
	}
	s.Cells = SummarizeRouting(runs, s.Settings.Workloads, s.Settings.Threads, targets)
	for _, r := range runs {
		if r.Error != "" {
			s.Failures++
		}
	}
	return s
}

func TestSummarizeRouting(t *testing.T) {
	s := cannedRoutingSummary(t)
	if len(s.Cells) != 4 {
		t.Fatalf("%d cells", len(s.Cells))
	}
	c := s.Cell("oltp_point_select", 8, RouteObgate)
	if c == nil || c.Rounds != 3 || c.Failed != 0 || c.QPS != 9000 || c.LocalRatio != 0.95 || c.Counted.Statements != 300 || c.Queries != 300 || c.NodeStatements["zone1-1"] != 300 {
		t.Errorf("obgate-routing cell %+v", c)
	}
	// Two good rounds of three: the median is their mean.
	c = s.Cell("oltp_point_select", 8, RouteTenantList)
	if c == nil || c.Rounds != 3 || c.Failed != 1 || c.QPS != 4750 || !strings.Contains(c.Error, "1213") {
		t.Errorf("obgate-tenant-list cell %+v", c)
	}
	if c := s.Cell("oltp_point_select", 8, RouteDirect); c == nil || c.ProxyCPUUsPerQuery.Valid() || c.OBSimCPUUsPerQuery != 40 {
		t.Errorf("direct cell %+v", c)
	}
	if s.Cell("oltp_read_write", 8, RouteObgate) != nil {
		t.Error("a cell without runs")
	}
}

func TestRoutingReport(t *testing.T) {
	s := cannedRoutingSummary(t)
	plots := []Plot{{Workload: "oltp_point_select", Kind: "routing", File: "routing-oltp_point_select.png"}}
	md := RenderRoutingReport(s, plots, ReportLinks{PlotsDir: "bench/plots", ResultsDir: "bench/results/routing-x", Readme: "bench/README.md"})
	if !strings.HasPrefix(md, RoutingBeginMarker+"\n") || !strings.HasSuffix(md, RoutingEndMarker+"\n") {
		t.Errorf("markers:\n%s", md)
	}
	for _, want := range []string{
		"| workload | threads | target | QPS | p95 ms | p99 ms | local-plan % | errors | proxy CPU µs/q | QPS / haproxy-rr | p99 / haproxy-rr |",
		"| oltp_point_select | 8 | obgate-routing | 9000 | ",
		" | 95.0 | 0 | 30.0 | 1.50 | 1.00 |",
		"| oltp_point_select | 8 | obgate-tenant-list | 4750 | ",
		" | 33.0 | 0; 1 of 3 runs failed | 30.0 | 0.79 | 1.00 |",
		"| oltp_point_select | 8 | haproxy-rr | 6000 | ",
		" | 34.0 | 0 | 30.0 | 1.00 | 1.00 |",
		"| oltp_point_select | 8 | direct-leaderless | 7000 | ",
		" | 32.0 | 0 | – | 1.17 | 1.00 |",
		"`bin/obgate -N -r a;b;c -c bench3 -o enable_partition_table_route=false`, sysbench as `root@test#bench3`",
		"sysbench straight to node zone1-1 (port 3000) as `root@test`",
		"| remote-plan cost | 1ms per statement",
		"`sbtest.sbtest1` … `sbtest8` HASH(id) in 6 partitions",
		"| data | 8 tables × 10000 rows |",
		"![oltp_point_select: QPS and p99 by target](bench/plots/routing-oltp_point_select.png)",
		"| zone1-1 % | zone2-1 % | zone3-1 % |",
		"| oltp_point_select | 8 | obgate-routing | 300 | 300 | 285 | 15 | 100.0 | 0.0 | 0.0 | 40.0 | 20.0 | 3/3 |",
		"any error ends the run, which then counts as failed",
		"- oltp_point_select, 8 threads, obgate-tenant-list: 1 of 3 round(s) failed: sysbench: exit status 1: sysbench failed: FATAL: mysql_stmt_execute() returned error 1213\n",
		"go run ./bench/cmd/routing-suite --rounds 3",
		"AMD EPYC, nproc 2",
	} {
		if !strings.Contains(md, want) {
			t.Errorf("report lacks %q:\n%s", want, md)
		}
	}
	if strings.Contains(md, "Quick smoke run") {
		t.Error("a full run is called a smoke run")
	}
	s.Settings.Quick = true
	if md := RenderRoutingReport(s, nil, ReportLinks{}); !strings.Contains(md, "Quick smoke run") {
		t.Error("a quick run is not marked")
	}

	text := RoutingTextTable(s)
	lines := strings.Split(strings.TrimRight(text, "\n"), "\n")
	if len(lines) != 5 || !strings.HasPrefix(lines[0], "workload") || !strings.Contains(lines[1], "obgate-routing") {
		t.Errorf("text table:\n%s", text)
	}

	// Without the baseline there are no ratio columns.
	var noHAProxy []TargetInfo
	for _, ti := range s.Targets {
		if ti.Name != RouteHAProxy {
			noHAProxy = append(noHAProxy, ti)
		}
	}
	s.Targets = noHAProxy
	if head, _ := routingTable(s); len(head) != 9 {
		t.Errorf("head without %s: %v", RoutingBaseline, head)
	}
}

func TestUpdateRoutingSection(t *testing.T) {
	section := RoutingBeginMarker + "\n## Partition routing\n" + RoutingEndMarker + "\n"
	doc := "# Benchmarks\n\nintro\n\n" + BeginMarker + "\nsysbench\n" + EndMarker + "\n\n<!-- memory:begin -->\nmemory\n<!-- memory:end -->\n"

	// Missing markers: right after the sysbench section.
	got := UpdateRoutingSection(doc, section)
	want := "# Benchmarks\n\nintro\n\n" + BeginMarker + "\nsysbench\n" + EndMarker + "\n\n" + section + "\n<!-- memory:begin -->\nmemory\n<!-- memory:end -->\n"
	if got != want {
		t.Errorf("inserted:\n%s\nwant:\n%s", got, want)
	}
	// Present: replaced in place, the rest untouched.
	section2 := strings.Replace(section, "Partition routing", "Partition routing, again", 1)
	if again := UpdateRoutingSection(got, section2); again != strings.Replace(want, section, section2, 1) {
		t.Errorf("replaced:\n%s", again)
	}
	// The sysbench section last in the file.
	short := "# Benchmarks\n\n" + BeginMarker + "\nx\n" + EndMarker + "\n"
	if got := UpdateRoutingSection(short, section); got != short+"\n"+section {
		t.Errorf("after a final sysbench section:\n%q", got)
	}
	// No sysbench section: appended; an empty file gets a title.
	if got := UpdateRoutingSection("# Benchmarks\n\ntext\n", section); got != "# Benchmarks\n\ntext\n\n"+section {
		t.Errorf("appended:\n%q", got)
	}
	if got := UpdateRoutingSection("", section); got != "# Benchmarks\n\n"+section {
		t.Errorf("empty:\n%q", got)
	}
}

func TestWriteRoutingPlots(t *testing.T) {
	s := cannedRoutingSummary(t)
	s.Settings.Workloads = append(s.Settings.Workloads, "oltp_read_write") // no data: still drawn
	dir := t.TempDir()
	plots, err := WriteRoutingPlots(s, dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(plots) != 2 || plots[0].File != "routing-oltp_point_select.png" || plots[1].File != "routing-oltp_read_write.png" {
		t.Fatalf("plots %+v", plots)
	}
	for _, pl := range plots {
		f, err := os.Open(filepath.Join(dir, pl.File))
		if err != nil {
			t.Fatal(err)
		}
		cfg, err := png.DecodeConfig(f)
		f.Close()
		if err != nil || cfg.Width != 2*plotWidthPx || cfg.Height != plotHeightPx {
			t.Errorf("%s: %+v, %v", pl.File, cfg, err)
		}
	}
}

func TestCheckRoutingConfig(t *testing.T) {
	good := func() RoutingConfig {
		return RoutingConfig{RunConfig: RunConfig{Root: t.TempDir(), Targets: []string{RouteDirect}, Workloads: []string{"oltp_point_select"},
			Threads: []int{8}, Tables: 1, TableSize: 10, TimeSeconds: 1, OBSimBin: "/nonexistent/obsim"}}
	}
	for _, c := range []struct {
		change func(*RoutingConfig)
		want   string
	}{
		{func(c *RoutingConfig) { c.Targets = nil }, "nothing to run"},
		{func(c *RoutingConfig) { c.Targets = []string{"obgate"} }, `unknown target "obgate"`},
		{func(c *RoutingConfig) { c.Targets = []string{RouteDirect, RouteDirect} }, "listed twice"},
		{func(c *RoutingConfig) { c.Threads = []int{0} }, "bad thread count"},
		{func(c *RoutingConfig) { c.TimeSeconds = 0 }, "at least 1"},
		{func(c *RoutingConfig) { c.RemotePlanCost = -1 }, "negative"},
		{func(c *RoutingConfig) { c.Targets = []string{RouteObgate}; c.ObgateBin = "/nonexistent/obgate" }, "obgate binary"},
		{func(*RoutingConfig) {}, "obsim binary"},
	} {
		cfg := good()
		c.change(&cfg)
		if err := checkRoutingConfig(&cfg); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("got %v, want an error containing %q", err, c.want)
		}
	}
	cfg := good()
	_ = checkRoutingConfig(&cfg)
	if cfg.IgnoreErrors != "none" || cfg.Rounds != 1 || cfg.StartTimeout != time.Minute {
		t.Errorf("defaults %+v", cfg)
	}
}
