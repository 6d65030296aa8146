package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"obgate/bench/memory"
	"obgate/bench/suite"
	"obgate/internal/mariadbd"
	"obgate/mysqlproto"
)

// Targets: obgate with either client I/O mode, and HAProxy.
const (
	targetNetpoll = "obgate-netpoll"
	targetNet     = "obgate-net"
	targetHAProxy = "haproxy"
)

var allTargets = []string{targetNetpoll, targetNet, targetHAProxy}

// kindOf returns the suite.Kind* of a target name, or "".
func kindOf(name string) string {
	switch name {
	case targetNetpoll, targetNet:
		return suite.KindObgate
	case targetHAProxy:
		return suite.KindHAProxy
	}
	return ""
}

// clientIOMode is obgate's client_io_mode for a target.
func clientIOMode(name string) string { return strings.TrimPrefix(name, "obgate-") }

// config is one suite run.
type config struct {
	Root        string
	CommandLine string
	Targets     []string
	ObgateBin   string
	HAProxyBin  string
	Settings    Settings
	ResultsDir  string
	ReportPath  string // empty: leave the report alone
	Log         io.Writer
}

// Settings are the measurement parameters, recorded with the results.
type Settings struct {
	Quick     bool                  `json:"quick"`
	Rows      int                   `json:"rows"`
	RowLen    int                   `json:"row_len"`
	ReadFirst int64                 `json:"read_first_bytes"`
	Stall     time.Duration         `json:"stall_ns"`
	RcvBuf    int                   `json:"client_so_rcvbuf"`
	Interval  time.Duration         `json:"sample_interval_ns"`
	Limit     int64                 `json:"stall_growth_limit_bytes"`
	Idle      int                   `json:"idle_connections"`
	Sample    int                   `json:"idle_sample"`
	Settle    time.Duration         `json:"settle_ns"`
	HAProxy   suite.HAProxySettings `json:"haproxy"`
	// Concurrency bounds the logins in flight.
	Concurrency int      `json:"concurrency"`
	MariaDBArgs []string `json:"mariadb_args"`
}

// StallRun is the slow-client measurement of one target.
type StallRun struct {
	Target  string   `json:"target"`
	Command []string `json:"command"`
	Error   string   `json:"error,omitempty"`
	memory.StallReport
	GrowthMiB  suite.Num `json:"growth_mib"`
	DrainMiBps suite.Num `json:"drain_mib_per_s"` // everything read after the stall, per second of drain
}

// IdleRun is the idle-connection measurement of one target.
type IdleRun struct {
	Target  string   `json:"target"`
	Command []string `json:"command"`
	Error   string   `json:"error,omitempty"`
	memory.IdleReport
	RSSKiBPerConnection     suite.Num `json:"rss_per_connection_kib"`
	HeapKiBPerConnection    suite.Num `json:"heap_per_connection_kib"`
	GoroutinesPerConnection suite.Num `json:"goroutines_per_connection"`
}

// Summary is what summary.json holds and the report is made from.
type Summary struct {
	CommandLine string            `json:"command_line"`
	Environment suite.Environment `json:"environment"`
	Settings    Settings          `json:"settings"`
	Targets     []string          `json:"targets"`
	Stall       []StallRun        `json:"stall"`
	Idle        []IdleRun         `json:"idle"`
	Failures    int               `json:"failures"`
}

// runSuite starts MariaDB, then, for each target, a fresh proxy per
// measurement; it writes the results and the report and stops everything
// it started, also on an error or Ctrl-C.
func runSuite(ctx context.Context, cfg config) error {
	logf := func(format string, a ...any) { fmt.Fprintf(cfg.Log, format+"\n", a...) }
	abs := func(p string) string { return suite.UnderRoot(cfg.Root, p) }
	cfg.ObgateBin = abs(cfg.ObgateBin)
	hasKind := func(kind string) bool {
		for _, t := range cfg.Targets {
			if kindOf(t) == kind {
				return true
			}
		}
		return false
	}
	if hasKind(suite.KindObgate) {
		if st, err := os.Stat(cfg.ObgateBin); err != nil || st.IsDir() || st.Mode()&0o111 == 0 {
			return fmt.Errorf("obgate binary %s not found or not executable: build it first (go build -o bin/obgate ./cmd/obgate) or pass --obgate", cfg.ObgateBin)
		}
	}
	if hasKind(suite.KindHAProxy) {
		p, err := suite.LookPath(cfg.HAProxyBin, "/usr/sbin")
		if err != nil {
			return fmt.Errorf("haproxy not found (apt-get install haproxy, or leave it out of --targets): %w", err)
		}
		cfg.HAProxyBin = p
	} else {
		cfg.HAProxyBin = ""
	}

	outDir := filepath.Join(abs(cfg.ResultsDir), time.Now().Format("20060102-150405")+"-memory")
	for _, d := range []string{"logs", "runs"} {
		if err := os.MkdirAll(filepath.Join(outDir, d), 0o755); err != nil {
			return err
		}
	}
	logf("results: %s", outDir)
	sum := &Summary{CommandLine: cfg.CommandLine, Settings: cfg.Settings, Targets: cfg.Targets,
		Environment: suite.CollectEnvironment(ctx, "", cfg.HAProxyBin)}
	sum.Environment.Sysbench = ""
	if hasKind(suite.KindObgate) {
		sum.Environment.ObgateCommit = suite.GitCommit(ctx, cfg.Root)
		if out, err := exec.CommandContext(ctx, cfg.ObgateBin, "-V").Output(); err == nil {
			sum.Environment.ObgateVersion = strings.TrimSpace(string(out))
		}
	}

	logf("starting MariaDB")
	srv, err := mariadbd.Start(ctx, mariadbd.Options{MaxConnections: max(mariadbd.DefaultMaxConnections, cfg.Settings.Idle+2*cfg.Settings.Concurrency+100)})
	if err != nil {
		return err
	}
	defer func() {
		if err := srv.Stop(); err != nil {
			logf("stopping MariaDB: %v", err)
		}
	}()
	logf("MariaDB %s on %s", srv.Version(), srv.Addr())
	sum.Environment.MariaDBVersion = srv.Version()
	sum.Settings.MariaDBArgs = suite.TuningArgs(srv.Args())

	for _, name := range cfg.Targets {
		if err := ctx.Err(); err != nil {
			return context.Cause(ctx)
		}
		sr := measureStall(ctx, cfg, srv, name, outDir)
		logf("%s", describeStall(sr))
		sum.Stall = append(sum.Stall, sr)
		if err := suite.WriteJSON(filepath.Join(outDir, "runs", "stall-"+name+".json"), sr); err != nil {
			return err
		}
		if err := ctx.Err(); err != nil {
			return context.Cause(ctx)
		}
		ir := measureIdle(ctx, cfg, srv, name, outDir)
		logf("%s", describeIdle(ir))
		sum.Idle = append(sum.Idle, ir)
		if err := suite.WriteJSON(filepath.Join(outDir, "runs", "idle-"+name+".json"), ir); err != nil {
			return err
		}
	}
	for _, r := range sum.Stall {
		if r.Error != "" {
			sum.Failures++
		}
	}
	for _, r := range sum.Idle {
		if r.Error != "" {
			sum.Failures++
		}
	}

	if err := suite.WriteJSON(filepath.Join(outDir, "summary.json"), sum); err != nil {
		return err
	}
	section := RenderReport(sum, ".")
	if err := os.WriteFile(filepath.Join(outDir, "report.md"), []byte(section), 0o644); err != nil {
		return err
	}
	if cfg.ReportPath != "" {
		report := abs(cfg.ReportPath)
		old, err := os.ReadFile(report)
		if err != nil && !errors.Is(err, os.ErrNotExist) {
			return err
		}
		section = RenderReport(sum, suite.Rel(filepath.Dir(report), outDir))
		if err := os.WriteFile(report, []byte(UpdateSection(string(old), section)), 0o644); err != nil {
			return err
		}
		logf("wrote the memory section of %s", report)
	}
	if sum.Failures > 0 {
		return fmt.Errorf("%d measurement(s) failed (see %s)", sum.Failures, outDir)
	}
	for _, r := range sum.Stall {
		if kindOf(r.Target) == suite.KindObgate && r.Growth() >= cfg.Settings.Limit {
			return fmt.Errorf("%s: RSS grew by %.1f MiB during the stall, over the %.0f MiB bound", r.Target, memory.MiB(r.Growth()), memory.MiB(cfg.Settings.Limit))
		}
	}
	return nil
}

// proxy is a started target.
type proxy struct {
	proc       *suite.Process
	addr       string
	metricsURL string // "" for HAProxy
	command    []string
}

// startProxy starts a fresh process of target name in front of srv and
// waits until it accepts a login. tag names its log and config files.
func startProxy(ctx context.Context, cfg config, srv *mariadbd.Server, name, tag, outDir string) (*proxy, error) {
	port, err := suite.FreePort()
	if err != nil {
		return nil, err
	}
	p := &proxy{addr: net.JoinHostPort("127.0.0.1", strconv.Itoa(port))}
	switch kindOf(name) {
	case suite.KindHAProxy:
		dir := filepath.Join(outDir, "haproxy-"+tag)
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return nil, err
		}
		if p.proc, _, err = suite.StartHAProxy(ctx, cfg.HAProxyBin, dir, cfg.Settings.HAProxy, port, srv.Addr()); err != nil {
			return nil, err
		}
	case suite.KindObgate:
		mport, err := suite.FreePort()
		if err != nil {
			return nil, err
		}
		confDir := filepath.Join(outDir, name+"-"+tag)
		argv := []string{cfg.ObgateBin, "-N", "-p", strconv.Itoa(port), "-l", strconv.Itoa(mport),
			"-r", srv.Addr(), "-o", "server_routing_mode=mysql", "--config-dir", confDir,
			"-o", "client_io_mode=" + clientIOMode(name),
			// odp_request_byte, read for the bytes in flight, is an extra family.
			"-o", "enable_extra_prometheus_metric=true",
			// The idle measurement reads /debug/pprof/heap, off by default.
			"-o", "enable_pprof=true"}
		if p.proc, err = suite.StartProcess(name, filepath.Join(outDir, "logs", name+"-"+tag+".log"), argv...); err != nil {
			return nil, err
		}
		p.metricsURL = "http://" + net.JoinHostPort("127.0.0.1", strconv.Itoa(mport)) + "/metrics"
	default:
		return nil, fmt.Errorf("unknown target %q", name)
	}
	p.command = suite.RelArgs(cfg.Root, p.proc.Args)
	if err := waitLogin(ctx, p); err != nil {
		_ = p.proc.Stop(10 * time.Second)
		return nil, err
	}
	return p, nil
}

// waitLogin polls a root login through p until it works, p exits or 30 s
// pass.
func waitLogin(ctx context.Context, p *proxy) error {
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	for {
		dctx, dcancel := context.WithTimeout(ctx, 5*time.Second)
		c, err := mysqlproto.Dial(dctx, p.addr, mysqlproto.ClientOptions{User: "root"})
		dcancel()
		if err == nil {
			return c.Close()
		}
		select {
		case <-p.proc.Exited():
			return fmt.Errorf("%s exited during start-up: %v (log: %s)", p.proc.Name, p.proc.ExitError(), p.proc.LogPath)
		case <-ctx.Done():
			return fmt.Errorf("%s on %s did not accept a login: %v (log: %s)", p.proc.Name, p.addr, err, p.proc.LogPath)
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// measureStall has a slow client hold up a large result through a fresh
// proxy of target name and reads the proxy's RSS meanwhile.
func measureStall(ctx context.Context, cfg config, srv *mariadbd.Server, name, outDir string) StallRun {
	r := StallRun{Target: name, GrowthMiB: suite.NaN, DrainMiBps: suite.NaN}
	s := cfg.Settings
	var err error
	r.Command, err = onFreshProxy(ctx, cfg, srv, name, "stall", outDir, func(ctx context.Context, p *proxy) (err error) {
		r.StallReport, err = memory.MeasureStall(ctx, memory.StallOptions{
			Query: memory.StreamQuery{Addr: p.addr, Rows: s.Rows, RowLen: s.RowLen,
				ReadFirst: s.ReadFirst, Stall: s.Stall, RcvBuf: s.RcvBuf},
			PID: p.proc.PID(), MetricsURL: p.metricsURL, Interval: s.Interval,
		})
		return err
	})
	if err != nil {
		r.Error = err.Error()
		return r
	}
	r.GrowthMiB = suite.Num(memory.MiB(r.Growth()))
	if secs := r.Drain.Seconds(); secs > 0 {
		r.DrainMiBps = suite.Num(memory.MiB(r.Bytes-r.ReadFirst) / secs)
	}
	return r
}

// measureIdle holds many idle connections through a fresh proxy of
// target name and reads what they cost it.
func measureIdle(ctx context.Context, cfg config, srv *mariadbd.Server, name, outDir string) IdleRun {
	r := IdleRun{Target: name, RSSKiBPerConnection: suite.NaN, HeapKiBPerConnection: suite.NaN, GoroutinesPerConnection: suite.NaN}
	s := cfg.Settings
	var err error
	r.Command, err = onFreshProxy(ctx, cfg, srv, name, "idle", outDir, func(ctx context.Context, p *proxy) (err error) {
		r.IdleReport, err = memory.MeasureIdle(ctx, memory.IdleOptions{
			Addr: p.addr, PID: p.proc.PID(), MetricsURL: p.metricsURL,
			N: s.Idle, Concurrency: s.Concurrency, Sample: s.Sample, Settle: s.Settle,
			HeapProfile: filepath.Join(outDir, name+"-idle-heap.pb.gz"),
		})
		return err
	})
	if err == nil && r.SampleOK != r.SampleAsked {
		err = fmt.Errorf("%d of %d sampled connections answered", r.SampleOK, r.SampleAsked)
	}
	if err != nil {
		r.Error = err.Error()
		return r
	}
	r.RSSKiBPerConnection = suite.Num(r.RSSPerConn() / 1024)
	if h := r.HeapPerConn(); !math.IsNaN(h) {
		r.HeapKiBPerConnection = suite.Num(h / 1024)
	}
	if g := r.GoroutinesPerConn(); !math.IsNaN(g) {
		r.GoroutinesPerConnection = suite.Num(g)
	}
	return r
}

// onFreshProxy starts a fresh proxy of target name for one measurement
// (tag names its files), runs measure on it within 10 minutes and stops
// it. It returns how the proxy was started and measure's error, else the
// error of starting or stopping the proxy.
func onFreshProxy(ctx context.Context, cfg config, srv *mariadbd.Server, name, tag, outDir string,
	measure func(ctx context.Context, p *proxy) error) ([]string, error) {
	p, err := startProxy(ctx, cfg, srv, name, tag, outDir)
	if err != nil {
		return nil, err
	}
	mctx, cancel := context.WithTimeout(ctx, 10*time.Minute)
	defer cancel()
	err = measure(mctx, p)
	if serr := p.proc.Stop(10 * time.Second); serr != nil && err == nil {
		err = serr
	}
	return p.command, err
}

func describeStall(r StallRun) string {
	if r.Error != "" {
		return fmt.Sprintf("stall %s: FAILED: %s", r.Target, r.Error)
	}
	return fmt.Sprintf("stall %s: RSS %.1f MiB before, %.1f MiB peak in the stall (+%.1f MiB), %.1f MiB after; drain %.2f s (%.0f MiB/s)",
		r.Target, memory.MiB(r.RSSBefore), memory.MiB(r.RSSPeakStall), float64(r.GrowthMiB), memory.MiB(r.RSSAfter),
		r.Drain.Seconds(), float64(r.DrainMiBps))
}

func describeIdle(r IdleRun) string {
	if r.Error != "" {
		return fmt.Sprintf("idle %s: FAILED: %s", r.Target, r.Error)
	}
	return fmt.Sprintf("idle %s: %d connections, RSS %.1f → %.1f MiB (%.1f KiB each), live heap %s KiB each, %s goroutines per connection",
		r.Target, r.Connections, memory.MiB(r.RSSBefore), memory.MiB(r.RSSAfter), float64(r.RSSKiBPerConnection),
		fmtNum(r.HeapKiBPerConnection, 1), fmtNum(r.GoroutinesPerConnection, 3))
}
