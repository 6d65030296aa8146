package suite

import (
	"encoding/json"
	"image/png"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// cannedSummary builds a summary the way Run does, from canned sysbench
// output instead of processes.
func cannedSummary(t *testing.T) *Summary {
	t.Helper()
	rw, err := ParseSysbench(readTestdata(t, "oltp_read_write-histogram.txt"))
	if err != nil {
		t.Fatal(err)
	}
	targets := []TargetInfo{
		{Name: "direct", Kind: KindDirect, Port: 3306},
		{Name: "haproxy", Kind: KindHAProxy, Port: 3307, Command: []string{"haproxy", "-db", "-f", "haproxy.cfg"}},
		{Name: "obgate", Kind: KindObgate, Port: 3308, Command: []string{"bin/obgate", "-N", "-p", "3308"}},
		{Name: "obgate-net", Kind: KindObgate, Port: 3309, Command: []string{"bin/obgate", "-N", "-o", "client_io_mode=net"}},
	}
	// QPS per target, relative to the canned run.
	scale := map[string]float64{"direct": 1, "haproxy": 0.5, "obgate": 0.6, "obgate-net": 0.4}
	var runs []Measurement
	for _, th := range []int{1, 8} {
		for _, tg := range targets {
			for round := 1; round <= 3; round++ {
				r := Measurement{Workload: "oltp_read_write", Threads: th, Target: tg.Name, Kind: tg.Kind, Round: round, Stats: rw}
				r.Stats.QPS = rw.QPS * scale[tg.Name] * float64(round) // rounds 1,2,3: the median is round 2
				r.MariaDBCPUUsPerQuery, r.ClientCPUUsPerQuery = 20, 10
				r.ProxyCPUUsPerQuery, r.ProxyFutexPerQuery, r.ProxyContextSwitchesPerQuery = NaN, NaN, NaN
				if tg.Kind != KindDirect {
					r.ProxyCPUUsPerQuery = Num(15 * scale[tg.Name])
					r.ProxyFutexPerQuery, r.ProxyContextSwitchesPerQuery = 0.25, Num(0.5*float64(round))
				}
				if tg.Name == "obgate-net" && th == 8 {
					r.Error = "sysbench: exit status 1\nFATAL: unable to connect"
				}
				runs = append(runs, r)
			}
		}
	}
	s := &Summary{
		CommandLine: "go run ./bench/cmd/sysbench-suite --rounds 3",
		Environment: Environment{Date: "2026-01-02T03:04:05Z", NProc: 2, CPUModel: "Test CPU", Kernel: "6.1.0",
			GoVersion: "go1.26", MariaDBVersion: "10.11.19-MariaDB", HAProxyVersion: "HAProxy version 2.6.12", Sysbench: "sysbench 1.0.20",
			ObgateCommit: "abc1234"},
		Settings: Settings{Tables: 8, TableSize: 10000, TimeSeconds: 20, WarmupSeconds: 5, Rounds: 3,
			Workloads: []string{"oltp_read_write"}, Threads: []int{1, 8},
			SysbenchArgs: []string{"--db-ps-mode=auto"}, MariaDBArgs: []string{"--innodb-buffer-pool-size=1073741824"},
			BufferPoolSize: 1 << 30, HAProxy: DefaultHAProxySettings},
		Targets: targets,
	}
	s.Cells = Summarize(runs, s.Settings.Workloads, s.Settings.Threads, targets)
	for _, r := range runs {
		if r.Error != "" {
			s.Failures++
		}
	}
	return s
}

func TestSummarize(t *testing.T) {
	s := cannedSummary(t)
	if len(s.Cells) != 8 {
		t.Fatalf("%d cells, want 8", len(s.Cells))
	}
	c := s.Cell("oltp_read_write", 1, "haproxy")
	if c == nil {
		t.Fatal("no cell")
	}
	if want := 43144.39 * 0.5 * 2; float64(c.QPS) != want {
		t.Errorf("median QPS %v, want %v", c.QPS, want)
	}
	if c.Rounds != 3 || c.Failed != 0 || c.IgnoredErrors != 3*34 {
		t.Errorf("cell %+v", c)
	}
	f := s.Cell("oltp_read_write", 8, "obgate-net")
	if f.Failed != 3 || f.QPS.Valid() || !strings.Contains(f.Error, "unable to connect") {
		t.Errorf("failed cell %+v", f)
	}
	if c.ProxyFutexPerQuery != 0.25 || c.ProxyContextSwitchesPerQuery != 1 {
		t.Errorf("futex %v, context switches %v per query: want the medians 0.25 and 1", c.ProxyFutexPerQuery, c.ProxyContextSwitchesPerQuery)
	}
	if d := s.Cell("oltp_read_write", 1, "direct"); d.ProxyCPUUsPerQuery.Valid() {
		t.Errorf("direct has proxy CPU %v", d.ProxyCPUUsPerQuery)
	}
	if got := median([]Num{3, NaN, 1, 2, 4}); got != 2.5 {
		t.Errorf("median %v", got)
	}
}

func TestRenderReport(t *testing.T) {
	s := cannedSummary(t)
	plots := []Plot{{"oltp_read_write", "qps", "qps-oltp_read_write.png"}, {"oltp_read_write", "cpu", "cpu-oltp_read_write.png"}}
	md := RenderReport(s, plots, ReportLinks{PlotsDir: "bench/plots", ResultsDir: "bench/results/x", Readme: "bench/README.md"})
	for _, want := range []string{
		BeginMarker, EndMarker,
		"go run ./bench/cmd/sysbench-suite --rounds 3",
		"Test CPU, nproc 2, kernel 6.1.0",
		"10.11.19-MariaDB", "HAProxy version 2.6.12", "sysbench 1.0.20", "commit abc1234",
		"nbthread 1, maxconn 4096",
		"### oltp_read_write",
		"| threads | direct QPS | direct p95 ms | direct p99 ms | haproxy QPS | haproxy p95 ms | haproxy p99 ms | haproxy CPU µs/q | obgate QPS |",
		"| obgate/haproxy QPS | obgate-net/haproxy QPS | haproxy/direct QPS | obgate/direct QPS | obgate-net/direct QPS |",
		"![oltp_read_write: QPS by threads](bench/plots/qps-oltp_read_write.png)",
		"![oltp_read_write: proxy CPU µs per query](bench/plots/cpu-oltp_read_write.png)",
		"[bench/results/x](bench/results/x)",
		"| 8 | direct | 2143 | 20.0 | 10.0 | – | – | 102 | 0 | 3/3 |",
		"| 20.0 | 10.0 | 0.25 | 1.00 | 102 | 0 | 3/3 |",
		"proxy futex/q | proxy context switches/q",
		"oltp_read_write, 8 threads, obgate-net: 3 of 3 round(s) failed: sysbench: exit status 1",
	} {
		if !strings.Contains(md, want) {
			t.Errorf("report lacks %q", want)
		}
	}
	// Row for 1 thread: QPS medians 86289 (direct), 43144 (haproxy), 51773
	// (obgate), 34516 (obgate-net); ratios 1.20, 0.80 vs HAProxy.
	row := lineStarting(md, "| 1 |")
	for _, want := range []string{"| 86289 |", "| 43144 |", "| 51773 |", "| 7.5 |", "| 1.20 | 0.80 | 0.50 | 0.60 | 0.40 |"} {
		if !strings.Contains(row, want) {
			t.Errorf("1-thread row %q lacks %q", row, want)
		}
	}
	row8 := lineStarting(md, "| 8 | 86289")
	if !strings.Contains(row8, "| failed | – | – | – |") || !strings.HasSuffix(row8, "| – | 0.50 | 0.60 | – |") {
		t.Errorf("8-thread row: %q", row8)
	}
	if strings.Contains(md, "Quick smoke run") {
		t.Error("a full run is labelled quick")
	}
	s.Settings.Quick = true
	if !strings.Contains(RenderReport(s, nil, ReportLinks{}), "Quick smoke run") {
		t.Error("a quick run is not labelled")
	}
}

func lineStarting(s, prefix string) string {
	for _, l := range strings.Split(s, "\n") {
		if strings.HasPrefix(l, prefix) {
			return l
		}
	}
	return ""
}

func TestUpdateSection(t *testing.T) {
	sec := BeginMarker + "\nnew\n" + EndMarker + "\n"
	if got := UpdateSection("", sec); got != "# Benchmarks\n\n"+sec {
		t.Errorf("empty doc: %q", got)
	}
	doc := "# Benchmarks\n\nintro\n"
	got := UpdateSection(doc, sec)
	if got != doc+"\n"+sec {
		t.Errorf("append: %q", got)
	}
	doc = "# B\n\nbefore\n\n" + BeginMarker + "\nold\nold\n" + EndMarker + "\n\n## Go benchmarks\nafter\n"
	got = UpdateSection(doc, sec)
	want := "# B\n\nbefore\n\n" + sec + "\n## Go benchmarks\nafter\n"
	if got != want {
		t.Errorf("replace:\n%q\nwant\n%q", got, want)
	}
	if again := UpdateSection(got, sec); again != got {
		t.Errorf("not idempotent:\n%q\n%q", again, got)
	}
}

func TestWritePlots(t *testing.T) {
	s := cannedSummary(t)
	dir := t.TempDir()
	plots, err := WritePlots(s, dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(plots) != 2 {
		t.Fatalf("plots %+v", plots)
	}
	for _, p := range plots {
		f, err := os.Open(filepath.Join(dir, p.File))
		if err != nil {
			t.Fatal(err)
		}
		cfg, err := png.DecodeConfig(f)
		f.Close()
		if err != nil {
			t.Fatalf("%s: %v", p.File, err)
		}
		if cfg.Width != plotWidthPx || cfg.Height != plotHeightPx {
			t.Errorf("%s is %dx%d", p.File, cfg.Width, cfg.Height)
		}
	}
	// Only direct: a QPS chart and no CPU chart; no data at all still draws.
	s.Targets = s.Targets[:1]
	s.Cells = nil
	plots, err = WritePlots(s, dir)
	if err != nil || len(plots) != 1 || plots[0].Kind != "qps" {
		t.Errorf("direct only: %+v, %v", plots, err)
	}
}

// TestPublish runs the report-writing end of Run on canned results in a
// scratch repository.
func TestPublish(t *testing.T) {
	root := t.TempDir()
	out := filepath.Join(root, "bench", "results", "20260102-030405")
	if err := os.MkdirAll(out, 0o755); err != nil {
		t.Fatal(err)
	}
	s := cannedSummary(t)
	plots, err := WritePlots(s, out)
	if err != nil {
		t.Fatal(err)
	}
	if err := writeJSON(filepath.Join(out, "summary.json"), s); err != nil {
		t.Fatal(err)
	}
	report := filepath.Join(root, "BENCHMARKS.md")
	if err := os.WriteFile(report, []byte("# Benchmarks\n\nHand-written intro.\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	cfg := Config{RunConfig: RunConfig{Root: root, ReportPath: "BENCHMARKS.md", PlotsDir: "bench/plots"}}
	if err := publish(cfg, s, plots, out); err != nil {
		t.Fatal(err)
	}
	md, err := os.ReadFile(report)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"Hand-written intro.", "](bench/plots/qps-oltp_read_write.png)", "[bench/results/20260102-030405](bench/results/20260102-030405)", "(see [bench/README.md](bench/README.md))"} {
		if !strings.Contains(string(md), want) {
			t.Errorf("BENCHMARKS.md lacks %q", want)
		}
	}
	for _, p := range plots {
		if _, err := os.Stat(filepath.Join(root, "bench", "plots", p.File)); err != nil {
			t.Error(err)
		}
	}
	// summary.json reads back, unknown numbers included.
	var back Summary
	b, _ := os.ReadFile(filepath.Join(out, "summary.json"))
	if err := json.Unmarshal(b, &back); err != nil {
		t.Fatal(err)
	}
	if c := back.Cell("oltp_read_write", 8, "obgate-net"); c == nil || c.QPS.Valid() {
		t.Errorf("round trip of a failed cell: %+v", c)
	}
}

func TestHAProxyConfig(t *testing.T) {
	cfg := HAProxyConfig(HAProxySettings{Threads: 2, MaxConn: 500}, 4000, "127.0.0.1:3306")
	for _, want := range []string{"nbthread 2", "maxconn 500", "mode tcp", "bind 127.0.0.1:4000", "server mariadb 127.0.0.1:3306 maxconn 500"} {
		if !strings.Contains(cfg, want) {
			t.Errorf("config lacks %q:\n%s", want, cfg)
		}
	}
}

func TestRelArgs(t *testing.T) {
	got := relArgs("/repo", []string{"/repo/bin/obgate", "--config-dir", "/repo/bench/results/x", "/usr/sbin/haproxy", "-f=/repo/h.cfg"})
	if strings.Join(got, " ") != "bin/obgate --config-dir bench/results/x /usr/sbin/haproxy -f=h.cfg" {
		t.Errorf("%v", got)
	}
}

func TestTuningArgs(t *testing.T) {
	got := tuningArgs([]string{"--no-defaults", "--datadir=/x", "--port=1", "--innodb-buffer-pool-size=1", "--user=root", "--skip-log-bin"})
	if strings.Join(got, " ") != "--innodb-buffer-pool-size=1 --skip-log-bin" {
		t.Errorf("%v", got)
	}
}

// TestRenderReportOceanBase: obgate in OceanBase mode is compared with
// obsim (not with MariaDB or HAProxy), obsim gets no proxy columns, and
// every proxy gets its system calls per query.
func TestRenderReportOceanBase(t *testing.T) {
	s := oneCellSummary(t, []TargetInfo{
		{Name: "direct", Kind: KindDirect},
		{Name: "obgate", Kind: KindObgate},
		{Name: "obsim", Kind: KindOBSim, Mode: ModeOceanBase, User: OBDirectUser},
		{Name: "obgate-ob", Kind: KindObgate, Mode: ModeOceanBase, User: OBUser},
	}, map[string]float64{"direct": 1, "obgate": 0.5, "obsim": 0.8, "obgate-ob": 0.4})
	if c := s.Cell("oltp_read_write", 8, "obgate-ob"); c.ProxySyscallsPerQuery != 5.126 {
		t.Errorf("median syscalls %v", c.ProxySyscallsPerQuery)
	}
	md := RenderReport(s, nil, ReportLinks{})
	head := lineStarting(md, "| threads | direct QPS")
	for _, want := range []string{"| obgate CPU µs/q | obgate syscalls/q |", "| obsim QPS | obsim p95 ms | obsim p99 ms | obgate-ob QPS |",
		"| obgate-ob syscalls/q |", "| obgate/direct QPS | obgate-ob/obsim QPS |"} {
		if !strings.Contains(head, want) {
			t.Errorf("header %q lacks %q", head, want)
		}
	}
	for _, unwanted := range []string{"obsim CPU", "obsim syscalls", "obgate-ob/direct", "obsim/direct"} {
		if strings.Contains(head, unwanted) {
			t.Errorf("header %q has %q", head, unwanted)
		}
	}
	row := lineStarting(md, "| 8 |")
	for _, want := range []string{"| 30.0 | 4.75 |", "| 30.0 | 5.13 |", "| 0.50 | 0.50 |"} {
		if !strings.Contains(row, want) {
			t.Errorf("row %q lacks %q", row, want)
		}
	}
	if !strings.Contains(md, "raw_syscalls:sys_enter") || !strings.Contains(md, "simulated OceanBase cluster") {
		t.Error("the report does not say how system calls were counted or what the OceanBase targets are")
	}
}

// TestRenderReportHAProxyInFrontOfOBSim: with HAProxy in front of the
// obsim node too, OceanBase mode's obgate is compared with that HAProxy,
// and mysql mode's with the HAProxy in front of MariaDB.
func TestRenderReportHAProxyInFrontOfOBSim(t *testing.T) {
	s := oneCellSummary(t, []TargetInfo{
		{Name: "direct", Kind: KindDirect},
		{Name: "obgate", Kind: KindObgate},
		{Name: "obsim", Kind: KindOBSim, Mode: ModeOceanBase, User: OBDirectUser},
		{Name: "haproxy", Kind: KindHAProxy},
		{Name: "haproxy-ob", Kind: KindHAProxy, Mode: ModeOceanBase, User: OBDirectUser},
		{Name: "obgate-ob", Kind: KindObgate, Mode: ModeOceanBase, User: OBUser},
	}, map[string]float64{"direct": 1, "obgate": 0.5, "obsim": 0.8, "haproxy": 0.5, "haproxy-ob": 0.5, "obgate-ob": 0.4})
	md := RenderReport(s, nil, ReportLinks{})
	head := lineStarting(md, "| threads | direct QPS")
	// Each obgate with the HAProxy in front of its own servers.
	for _, want := range []string{"| obgate/haproxy QPS | obgate-ob/haproxy-ob QPS |", "obgate-ob/obsim QPS"} {
		if !strings.Contains(head, want) {
			t.Errorf("header %q lacks %q", head, want)
		}
	}
	for _, unwanted := range []string{"obgate-ob/haproxy QPS", "obgate/haproxy-ob"} {
		if strings.Contains(head, unwanted) {
			t.Errorf("header %q has %q", head, unwanted)
		}
	}
	row := lineStarting(md, "| 8 |")
	if !strings.Contains(row, "| 1.00 | 0.80 |") {
		t.Errorf("row %q lacks the ratios 1.00 (obgate/haproxy) and 0.80 (obgate-ob/haproxy-ob)", row)
	}
}

// oneCellSummary is a summary of one oltp_read_write cell at 8 threads in
// which each target ran 1000 × scale[name] QPS, every proxy 30 µs of CPU
// per query, obgate 4.75 and obgate-ob 5.126 system calls per query.
func oneCellSummary(t *testing.T, targets []TargetInfo, scale map[string]float64) *Summary {
	t.Helper()
	ps, err := ParseSysbench(readTestdata(t, "oltp_read_write-histogram.txt"))
	if err != nil {
		t.Fatal(err)
	}
	syscalls := map[string]Num{"obgate": 4.75, "obgate-ob": 5.126}
	var runs []Measurement
	for _, tg := range targets {
		r := Measurement{Workload: "oltp_read_write", Threads: 8, Target: tg.Name, Kind: tg.Kind, Round: 1, Stats: ps,
			ProxyCPUUsPerQuery: NaN, ProxySyscallsPerQuery: NaN}
		r.Stats.QPS = 1000 * scale[tg.Name]
		if tg.IsProxy() {
			r.ProxyCPUUsPerQuery, r.ProxySyscallsPerQuery = 30, syscalls[tg.Name]
		}
		runs = append(runs, r)
	}
	s := &Summary{
		Settings: Settings{Workloads: []string{"oltp_read_write"}, Threads: []int{8}, SyscallCounter: CounterPerf},
		Targets:  targets,
	}
	s.Cells = Summarize(runs, s.Settings.Workloads, s.Settings.Threads, targets)
	return s
}
