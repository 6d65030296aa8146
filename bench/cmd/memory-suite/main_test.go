package main

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"obgate/bench/memory"
	"obgate/bench/suite"
)

func TestParseFlags(t *testing.T) {
	cfg, err := parseFlags(nil)
	if err != nil {
		t.Fatal(err)
	}
	s := cfg.Settings
	if s.Rows != 1<<20 || s.RowLen != 1024 || s.ReadFirst != 1<<20 || s.RcvBuf != 64<<10 || s.Stall != 5*time.Second ||
		s.Idle != 5000 || s.Limit != 64<<20 || len(cfg.Targets) != 3 || cfg.Root == "" {
		t.Fatalf("defaults: %+v, targets %v", s, cfg.Targets)
	}
	if s.HAProxy.MaxConn <= s.Idle+s.Concurrency {
		t.Fatalf("HAProxy maxconn %d cannot hold %d connections and the warm-up", s.HAProxy.MaxConn, s.Idle)
	}
	cfg, err = parseFlags([]string{"--quick", "--idle", "300", "--targets", "obgate-net"})
	if err != nil {
		t.Fatal(err)
	}
	if s := cfg.Settings; !s.Quick || s.Rows != 65536 || s.Idle != 300 || s.Stall != 2*time.Second || len(cfg.Targets) != 1 {
		t.Fatalf("--quick with --idle: %+v, targets %v", s, cfg.Targets)
	}
	for _, bad := range [][]string{
		{"--targets", "obgate,nginx"}, {"--targets", ","}, {"--rows", "0"}, {"--rcvbuf", "lots"},
		{"--row-len", "100000"}, {"--idle", "0"}, {"extra"},
	} {
		if _, err := parseFlags(bad); err == nil {
			t.Errorf("parseFlags(%q) succeeded", bad)
		}
	}
}

func cannedSummary() *Summary {
	st := Settings{Rows: 1 << 20, RowLen: 1024, ReadFirst: 1 << 20, Stall: 5 * time.Second, RcvBuf: 64 << 10,
		Interval: 100 * time.Millisecond, Limit: 64 << 20, Idle: 5000, Sample: 100, Settle: time.Second,
		Concurrency: 32, HAProxy: suite.HAProxySettings{Threads: 1, MaxConn: 5164}}
	stall := func(target string, before, peak int64, inFlight int64) StallRun {
		r := StallRun{Target: target, Command: []string{"bin/obgate"}, StallReport: memory.StallReport{
			Rows: 1 << 20, Bytes: 1081 << 20, ReadFirst: 1 << 20, RSSBefore: before, RSSPeakStall: peak, RSSPeak: peak,
			RSSAfter: peak, Stall: 5 * time.Second, Drain: 2500 * time.Millisecond, InFlight: inFlight}}
		r.GrowthMiB = suite.Num(memory.MiB(r.Growth()))
		r.DrainMiBps = 432
		return r
	}
	return &Summary{
		CommandLine: "go run ./bench/cmd/memory-suite",
		Environment: suite.Environment{Date: "2026-11-30T06:00:00Z", NProc: 2, CPUModel: "AMD EPYC", Kernel: "6.1",
			GoVersion: "go1.26.8", MariaDBVersion: "10.11.19-MariaDB", HAProxyVersion: "HAProxy version 2.6.12",
			ObgateCommit: "f8ffb50", ObgateVersion: "obgate 0.1.0-dev"},
		Settings: st,
		Targets:  allTargets,
		Stall: []StallRun{
			stall(targetNetpoll, 9<<20, 10<<20, 4<<20),
			stall(targetNet, 9<<20, 80<<20, 4<<20),
			{Target: targetHAProxy, Error: "haproxy exited during start-up\nmore", GrowthMiB: suite.NaN, DrainMiBps: suite.NaN},
		},
		Idle: []IdleRun{
			{Target: targetNetpoll, IdleReport: memory.IdleReport{Connections: 5000, RSSBefore: 10 << 20, RSSAfter: 85 << 20,
				GoroutinesBefore: 7, GoroutinesAfter: 7, SessionsHeld: 5000, SessionsAfterClose: 0, SampleAsked: 100, SampleOK: 100,
				HeapBefore: 4 << 20, HeapAfter: 54 << 20},
				RSSKiBPerConnection: 15.4, HeapKiBPerConnection: 10.2, GoroutinesPerConnection: 0},
			{Target: targetHAProxy, IdleReport: memory.IdleReport{Connections: 5000, RSSBefore: 8 << 20, RSSAfter: 30 << 20,
				GoroutinesBefore: -1, GoroutinesAfter: -1, SessionsHeld: -1, SessionsAfterClose: -1, SampleAsked: 100, SampleOK: 100,
				HeapBefore: -1, HeapAfter: -1},
				RSSKiBPerConnection: 4.5, HeapKiBPerConnection: suite.NaN, GoroutinesPerConnection: suite.NaN},
		},
		Failures: 1,
	}
}

func TestRenderReport(t *testing.T) {
	out := RenderReport(cannedSummary(), "bench/results/x-memory")
	if !strings.HasPrefix(out, BeginMarker+"\n") || !strings.HasSuffix(out, EndMarker+"\n") {
		t.Fatalf("markers missing:\n%s", out)
	}
	for _, want := range []string{
		"go run ./bench/cmd/memory-suite",
		"`SELECT REPEAT('x', 1024) FROM seq_1_to_1048576` (1 GiB of row data)",
		"| obgate-netpoll | 9.0 MiB | 10.0 MiB | 1.0 MiB | 10.0 MiB | 10.0 MiB | 4.0 MiB | 2.50 s | 432 MiB/s | ok |",
		"| obgate-net | 9.0 MiB | 80.0 MiB | 71.0 MiB |",
		"**over the bound**",
		"| haproxy | | | | | | | | | failed: haproxy exited during start-up |",
		"| obgate-netpoll | 5000 | 10.0 MiB | 85.0 MiB | 15.4 KiB | 10.2 KiB | 7 | 7 | 0.000 | 100/100 | 0 | |",
		"| haproxy | 5000 | 8.0 MiB | 30.0 MiB | 4.5 KiB | – | – | – | – | 100/100 | – | |",
		"/debug/pprof/heap?gc=1",
		"[bench/results/x-memory](bench/results/x-memory)",
		"reads 1 MiB of the answer, stops reading for 5s",
		"SO_RCVBUF 64 KiB",
		"1 measurement(s) failed",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("report lacks %q:\n%s", want, out)
		}
	}
}

func TestUpdateSectionKeepsSysbench(t *testing.T) {
	doc := "# Benchmarks\n\n" + suite.BeginMarker + "\nsysbench figures\n" + suite.EndMarker + "\n"
	sec := RenderReport(cannedSummary(), ".")
	once := UpdateSection(doc, sec)
	twice := UpdateSection(once, sec)
	if !strings.HasPrefix(once, doc) || once != twice || strings.Count(twice, BeginMarker) != 1 {
		t.Fatalf("update is not stable or lost the sysbench section:\n%s", twice)
	}
}

func TestSummaryJSON(t *testing.T) {
	b, err := json.Marshal(cannedSummary())
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`"rss_per_connection_kib":4.5`, `"goroutines_per_connection":null`, `"in_flight_at_resume":4194304`} {
		if !strings.Contains(string(b), want) {
			t.Errorf("summary.json lacks %s", want)
		}
	}
}
