package suite

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"obgate/internal/mariadbd"
)

// The routing suite measures what partition routing buys against a
// simulated OceanBase cluster whose remote plans cost an internal round
// trip: sysbench through obgate routing by partition, through obgate
// picking a server of the tenant at random, through HAProxy round robin
// over the nodes, and straight to one node, all against one obsim cluster
// of three nodes, with obsim's statement counters telling how many
// statements ran where their partition's leader is.

// Target names of the routing suite.
const (
	// RouteObgate is obgate with its defaults (partition routing on).
	RouteObgate = "obgate-routing"
	// RouteTenantList is obgate with enable_partition_table_route=false:
	// a random server of the tenant's server list.
	RouteTenantList = "obgate-tenant-list"
	// RouteHAProxy is HAProxy in TCP mode, round robin over the nodes.
	RouteHAProxy = "haproxy-rr"
	// RouteDirect is sysbench straight to the first node.
	RouteDirect = "direct-leaderless"
)

// RoutingTargets are the routing suite's targets in their default order.
var RoutingTargets = []string{RouteObgate, RouteTenantList, RouteHAProxy, RouteDirect}

// RoutingBaseline is the target the report's ratios divide by.
const RoutingBaseline = RouteHAProxy

// RoutingConfig is one routing-suite run; ObgateOpts go to both obgate
// targets.
type RoutingConfig struct {
	RunConfig
	RemotePlanCost time.Duration
	// IgnoreErrors is sysbench's --mysql-ignore-errors: "none" makes any
	// error end the run (and fail it).
	IgnoreErrors string
}

// RoutingRun is one measured sysbench run of the routing suite.
type RoutingRun struct {
	Workload      string    `json:"workload"`
	Threads       int       `json:"threads"`
	Target        string    `json:"target"`
	Kind          string    `json:"kind"`
	Round         int       `json:"round"`
	Started       time.Time `json:"started"`
	WarmupCommand []string  `json:"warmup_command,omitempty"`
	Command       []string  `json:"command"`
	RawFile       string    `json:"raw_file"` // relative to the results directory
	Error         string    `json:"error,omitempty"`
	Stats         Stats     `json:"sysbench"`

	// Split is the part of obsim's counters the target's statements
	// arrive in: SplitProxy for obgate, SplitDirect for the others.
	Split string `json:"obsim_split"`
	// Counted is that split of the cluster's total, counted from just
	// before sysbench started to just after it exited; LocalRatio is its
	// Local / (Local + Remote).
	Counted    ObsimCounts `json:"counted"`
	LocalRatio Num         `json:"local_plan_ratio"`
	// Obsim is everything GET /v1/stats answered after the run.
	Obsim ObsimStats `json:"obsim_stats"`

	// CPU time (user + system) used during the measured run, divided by
	// the queries sysbench executed; the proxy's is absent for
	// direct-leaderless.
	ProxyCPUSeconds      Num `json:"proxy_cpu_s"`
	ProxyCPUUsPerQuery   Num `json:"proxy_cpu_us_per_query"`
	OBSimCPUUsPerQuery   Num `json:"obsim_cpu_us_per_query"`
	MariaDBCPUUsPerQuery Num `json:"mariadb_cpu_us_per_query"`
	ClientCPUUsPerQuery  Num `json:"sysbench_cpu_us_per_query"`
}

// RoutingCell aggregates the rounds of one (workload, threads, target):
// figures are medians over the successful rounds, counts are sums.
type RoutingCell struct {
	CellRounds
	QPS        Num         `json:"qps"`
	P95Ms      Num         `json:"p95_ms"`
	P99Ms      Num         `json:"p99_ms"`
	LocalRatio Num         `json:"local_plan_ratio"`
	Counted    ObsimCounts `json:"counted"`
	// Queries is what sysbench executed, to compare with Counted.
	Queries uint64 `json:"queries"`
	// NodeStatements are the split's statements by node.
	NodeStatements       map[string]uint64 `json:"node_statements"`
	IgnoredErrors        uint64            `json:"ignored_errors"`
	Reconnects           uint64            `json:"reconnects"`
	ProxyCPUUsPerQuery   Num               `json:"proxy_cpu_us_per_query"`
	OBSimCPUUsPerQuery   Num               `json:"obsim_cpu_us_per_query"`
	MariaDBCPUUsPerQuery Num               `json:"mariadb_cpu_us_per_query"`
}

// RoutingSettings are the parameters of a routing-suite run.
type RoutingSettings struct {
	Quick         bool     `json:"quick"`
	Cluster       string   `json:"cluster"`
	Partitions    int      `json:"partitions"`
	Tables        int      `json:"tables"`
	TableSize     int      `json:"table_size"`
	TimeSeconds   int      `json:"time_s"`
	WarmupSeconds int      `json:"warmup_s"`
	Rounds        int      `json:"rounds"`
	Workloads     []string `json:"workloads"`
	Threads       []int    `json:"threads"`
	// RemotePlanCost is the cost obsim reported after it started.
	RemotePlanCost string          `json:"remote_plan_cost"`
	IgnoreErrors   string          `json:"mysql_ignore_errors"`
	SysbenchArgs   []string        `json:"sysbench_args"` // common to every measured run
	MariaDBArgs    []string        `json:"mariadb_args"`
	BufferPoolSize int64           `json:"innodb_buffer_pool_size"`
	HAProxy        HAProxySettings `json:"haproxy"`
	HAProxyConfig  string          `json:"haproxy_config,omitempty"`
}

// RoutingOBSim is how the cluster was started.
type RoutingOBSim struct {
	Command  []string        `json:"command"`
	Topology json.RawMessage `json:"topology"`
	RSList   string          `json:"rslist"`
	Nodes    []ObsimNode     `json:"nodes"`
}

// RoutingSummary is what summary.json holds and the report is made from.
type RoutingSummary struct {
	CommandLine    string          `json:"command_line"`
	Environment    Environment     `json:"environment"`
	Settings       RoutingSettings `json:"settings"`
	OBSim          RoutingOBSim    `json:"obsim"`
	PrepareCommand []string        `json:"prepare_command"`
	Targets        []TargetInfo    `json:"targets"`
	Cells          []RoutingCell   `json:"cells"`
	// Runs are the measured runs without their histograms (runs/*.json
	// have them).
	Runs     []RoutingRun `json:"runs"`
	Failures int          `json:"failures"`
}

// Cell returns the cell of (workload, threads, target), or nil.
func (s *RoutingSummary) Cell(workload string, threads int, target string) *RoutingCell {
	return findCell(s.Cells, workload, threads, target)
}

// routingKind returns the Kind* of a routing target, or "".
func routingKind(name string) string {
	switch name {
	case RouteObgate, RouteTenantList:
		return KindObgate
	case RouteHAProxy:
		return KindHAProxy
	case RouteDirect:
		return KindOBSim
	}
	return ""
}

// routingSplit is where obsim counts a target's statements: obgate logs in
// as a proxy, HAProxy relays sysbench's own logins.
func routingSplit(kind string) string {
	if kind == KindObgate {
		return SplitProxy
	}
	return SplitDirect
}

// routingTargetArgs are the arguments a target adds to obgate's standard
// ones.
func routingTargetArgs(name string) []string {
	if name == RouteTenantList {
		return []string{"-o", "enable_partition_table_route=false"}
	}
	return nil
}

// routingEnv is what the measured runs share.
type routingEnv struct {
	srv *mariadbd.Server
	sim *Process
	ctl *ObsimControl
}

// RunRouting executes the routing suite: MariaDB, sysbench prepare, obsim,
// the targets, the measured runs, then results, plots and the report.
// Every process it starts is stopped before it returns. It returns an
// error if any run failed, after writing what it has.
func RunRouting(ctx context.Context, cfg RoutingConfig) error {
	if cfg.Log == nil {
		cfg.Log = io.Discard
	}
	logf := func(format string, a ...any) { fmt.Fprintf(cfg.Log, format+"\n", a...) }
	if err := checkRoutingConfig(&cfg); err != nil {
		return err
	}
	topo, err := RoutingTopology(RoutingCluster, cfg.Tables, cfg.RemotePlanCost)
	if err != nil {
		return err
	}

	outDir := filepath.Join(cfg.abs(cfg.ResultsDir), "routing-"+time.Now().Format("20060102-150405"))
	if err := makeResultsDir(outDir); err != nil {
		return err
	}
	logf("results: %s", outDir)
	env := CollectEnvironment(ctx, cfg.SysbenchBin, cfg.HAProxyBin)

	var undo cleanups
	defer undo.run()

	// The tables exist before obsim starts, so obsim keeps their rows and
	// reads their columns.
	srv, prepare, err := startSbtestMariaDB(ctx, mariadbd.Options{BufferPoolSize: cfg.BufferPoolSize, LogFileSize: cfg.LogFileSize},
		cfg.SysbenchBin, cfg.sysbenchCommon(), cfg.Tables, cfg.TableSize, outDir, &env, logf, &undo)
	if err != nil {
		return err
	}

	topoPath := filepath.Join(outDir, "obsim-topology.json")
	if err := os.WriteFile(topoPath, topo, 0o644); err != nil {
		return err
	}
	ctlPort, err := freePort()
	if err != nil {
		return err
	}
	ctl := &ObsimControl{Addr: net.JoinHostPort("127.0.0.1", strconv.Itoa(ctlPort))}
	simArgv := []string{cfg.OBSimBin, "serve", "--topology", topoPath, "--mariadb", srv.DSN("root", "", ""), "--ctl", ctl.Addr}
	logf("starting obsim (cluster %s, 3 nodes, remote-plan cost %v)", RoutingCluster, cfg.RemotePlanCost)
	simLog := filepath.Join(outDir, "logs", "obsim.log")
	sim, err := StartProcess("obsim", simLog, simArgv...)
	if err != nil {
		return err
	}
	undo.add(stopping(sim, "obsim", logf))
	rslist, err := waitLogLine(ctx, sim, "rslist (ODP -r): ", cfg.StartTimeout)
	if err != nil {
		return err
	}
	nodes, err := ctl.Nodes(ctx)
	if err != nil {
		return err
	}
	cost, err := ctl.RemotePlanCost(ctx)
	if err != nil {
		return err
	}
	if cost != cfg.RemotePlanCost {
		return fmt.Errorf("obsim reports a remote-plan cost of %v, want %v", cost, cfg.RemotePlanCost)
	}
	logf("obsim (pid %d): %s", sim.PID(), rslist)

	targets, tcleanup, err := startRoutingTargets(ctx, cfg, rslist, nodes, outDir, &env, logf)
	undo.add(tcleanup)
	if err != nil {
		return err
	}

	summary := &RoutingSummary{
		CommandLine: cfg.CommandLine,
		Environment: env,
		Settings: RoutingSettings{
			Quick: cfg.Quick, Cluster: RoutingCluster, Partitions: RoutingPartitions,
			Tables: cfg.Tables, TableSize: cfg.TableSize,
			TimeSeconds: cfg.TimeSeconds, WarmupSeconds: cfg.WarmupSeconds, Rounds: cfg.Rounds,
			Workloads: cfg.Workloads, Threads: cfg.Threads,
			RemotePlanCost: cost.String(),
			IgnoreErrors:   cfg.IgnoreErrors,
			SysbenchArgs:   append(cfg.sysbenchCommon(), "--threads=N", "--events=0", "--report-interval=0", "--time="+strconv.Itoa(cfg.TimeSeconds), "--percentile=95", "--histogram=on"),
			MariaDBArgs:    tuningArgs(srv.Args()),
			BufferPoolSize: cfg.BufferPoolSize,
			HAProxy:        cfg.HAProxy,
		},
		OBSim: RoutingOBSim{
			Command:  relArgs(cfg.Root, simArgv),
			Topology: json.RawMessage(topo),
			RSList:   rslist,
			Nodes:    nodes,
		},
		PrepareCommand: prepare,
	}
	if hp := filepath.Join(outDir, "haproxy-rr.cfg"); fileExists(hp) {
		summary.Settings.HAProxyConfig = readFile(hp)
	}
	for _, t := range targets {
		summary.Targets = append(summary.Targets, t.TargetInfo)
	}

	renv := routingEnv{srv: srv, sim: sim, ctl: ctl}
	var runs []RoutingRun
	err = measureAll(ctx, cfg.RunConfig, targets,
		func(t target, workload string, threads, round int) RoutingRun {
			return measureRouting(ctx, cfg, renv, t, workload, threads, round, outDir)
		},
		func(r RoutingRun, n, total int) error {
			runs = append(runs, r)
			if err := writeJSON(filepath.Join(outDir, "runs", r.key().jsonFile()), r); err != nil {
				return err
			}
			logf("[%d/%d] %s", n, total, describeRoutingRun(r))
			return nil
		})
	if err != nil {
		return err
	}

	summary.Cells = SummarizeRouting(runs, cfg.Workloads, cfg.Threads, summary.Targets)
	summary.Failures = countFailures(runs)
	for _, r := range runs {
		r.Stats.Histogram = nil
		summary.Runs = append(summary.Runs, r)
	}
	if err := writeJSON(filepath.Join(outDir, "summary.json"), summary); err != nil {
		return err
	}
	plots, err := WriteRoutingPlots(summary, outDir)
	if err != nil {
		return err
	}
	if err := cfg.writeRunReport(outDir, func(links ReportLinks) string { return RenderRoutingReport(summary, plots, links) }); err != nil {
		return err
	}
	fmt.Fprint(cfg.Log, "\n"+RoutingTextTable(summary)+"\n")
	if cfg.ReportPath != "" {
		if err := publishRouting(cfg, summary, plots, outDir); err != nil {
			return err
		}
		logf("updated %s", cfg.abs(cfg.ReportPath))
	}
	if summary.Failures > 0 {
		return fmt.Errorf("%d of %d runs failed (see %s)", summary.Failures, len(runs), outDir)
	}
	return nil
}

func checkRoutingConfig(cfg *RoutingConfig) error {
	if cfg.IgnoreErrors == "" {
		cfg.IgnoreErrors = "none"
	}
	if err := cfg.checkRun(); err != nil {
		return err
	}
	if cfg.RemotePlanCost < 0 {
		return fmt.Errorf("negative remote-plan cost %v", cfg.RemotePlanCost)
	}
	if err := cfg.checkThreads(); err != nil {
		return err
	}
	seen, err := cfg.checkTargets(routingKind, strings.Join(RoutingTargets, ", "))
	if err != nil {
		return err
	}
	if seen[RouteObgate] || seen[RouteTenantList] {
		if cfg.ObgateBin, err = executable(cfg.abs(orDefault(cfg.ObgateBin, "bin/obgate"))); err != nil {
			return fmt.Errorf("obgate binary: %w: build it first (make build), pass --obgate, or leave the obgate targets out of --targets", err)
		}
	}
	if cfg.OBSimBin, err = executable(cfg.abs(orDefault(cfg.OBSimBin, "bin/obsim"))); err != nil {
		return fmt.Errorf("obsim binary: %w: build it first (make build) or pass --obsim", err)
	}
	if cfg.SysbenchBin, err = exec.LookPath(orDefault(cfg.SysbenchBin, "sysbench")); err != nil {
		return fmt.Errorf("sysbench not found (apt-get install sysbench): %w", err)
	}
	if seen[RouteHAProxy] {
		if cfg.HAProxyBin, err = lookPath(orDefault(cfg.HAProxyBin, "haproxy"), "/usr/sbin"); err != nil {
			return fmt.Errorf("haproxy not found (apt-get install haproxy, or leave %s out of --targets): %w", RouteHAProxy, err)
		}
	} else {
		cfg.HAProxyBin = ""
	}
	return nil
}

// executable returns path if it is an executable file.
func executable(path string) (string, error) {
	st, err := os.Stat(path)
	if err != nil {
		return "", err
	}
	if st.IsDir() || st.Mode()&0o111 == 0 {
		return "", fmt.Errorf("%s is not an executable file", path)
	}
	return path, nil
}

// sysbenchCommon are the options every sysbench command of the suite
// shares: server-side prepared statements (obgate routes COM_STMT_EXECUTE
// by its parameters, obsim locates executes the same way), and errors not
// ignored unless IgnoreErrors says otherwise.
func (cfg RoutingConfig) sysbenchCommon() []string {
	return append(sysbenchBase(cfg.Tables, cfg.TableSize), "--mysql-ignore-errors="+cfg.IgnoreErrors)
}

// waitLogLine waits until a line of p's log starts with prefix and
// returns the rest of it.
func waitLogLine(ctx context.Context, p *Process, prefix string, timeout time.Duration) (string, error) {
	deadline := time.NewTimer(timeout)
	defer deadline.Stop()
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	for {
		for _, line := range strings.Split(readFile(p.LogPath), "\n") {
			if rest, ok := strings.CutPrefix(line, prefix); ok {
				return strings.TrimSpace(rest), nil
			}
		}
		select {
		case <-p.Exited():
			return "", fmt.Errorf("%s exited during start-up: %v\n%s", p.Name, p.ExitError(), tailString(readFile(p.LogPath), 30))
		case <-ctx.Done():
			return "", context.Cause(ctx)
		case <-deadline.C:
			return "", fmt.Errorf("%s did not start within %v\n%s", p.Name, timeout, tailString(readFile(p.LogPath), 30))
		case <-tick.C:
		}
	}
}

// startRoutingTargets starts the proxies in the order of cfg.Targets and
// waits until each accepts a login. The returned cleanup stops them.
func startRoutingTargets(ctx context.Context, cfg RoutingConfig, rslist string, nodes []ObsimNode, outDir string, env *Environment, logf func(string, ...any)) ([]target, func(), error) {
	var targets []target
	cleanup := func() { stopTargets(targets, logf) }
	for _, name := range cfg.Targets {
		t := target{TargetInfo: TargetInfo{Name: name, Kind: routingKind(name), User: RoutingDirectUser, Mode: ModeOceanBase}}
		switch t.Kind {
		case KindOBSim:
			_, port, err := net.SplitHostPort(nodes[0].Addr)
			if err != nil {
				return targets, cleanup, fmt.Errorf("node %s: %w", nodes[0].Name, err)
			}
			t.Port, _ = strconv.Atoi(port)
		case KindHAProxy:
			port, err := freePort()
			if err != nil {
				return targets, cleanup, err
			}
			var backends []HAProxyBackend
			for _, n := range nodes {
				backends = append(backends, HAProxyBackend{Name: n.Name, Addr: n.Addr})
			}
			p, err := startHAProxyConfig(ctx, name, cfg.HAProxyBin, filepath.Join(outDir, "haproxy-rr.cfg"),
				filepath.Join(outDir, "logs", name+".log"), HAProxyRoundRobinConfig(cfg.HAProxy, port, backends))
			if err != nil {
				return targets, cleanup, err
			}
			t.Port, t.proc, t.Command = port, p, relArgs(cfg.Root, p.Args)
		case KindObgate:
			confDir := filepath.Join(outDir, "conf", name)
			if err := startObgate(ctx, cfg.RunConfig, &t, cfg.ObgateBin, confDir, []string{"-r", rslist, "-c", RoutingCluster}, routingTargetArgs(name), outDir, env); err != nil {
				return targets, cleanup, err
			}
			t.User = RoutingProxyUser
		}
		targets = append(targets, t)
		if err := waitReady(ctx, t, cfg.StartTimeout, logf); err != nil {
			return targets, cleanup, err
		}
	}
	return targets, cleanup, nil
}

// measureRouting runs the warm-up and the measured sysbench run of one
// cell on t, with obsim's counters reset in between.
func measureRouting(ctx context.Context, cfg RoutingConfig, e routingEnv, t target, workload string, threads, round int, outDir string) RoutingRun {
	r := RoutingRun{
		Workload: workload, Threads: threads, Target: t.Name, Kind: t.Kind, Round: round,
		Split:      routingSplit(t.Kind),
		LocalRatio: NaN, ProxyCPUSeconds: NaN, ProxyCPUUsPerQuery: NaN,
		OBSimCPUUsPerQuery: NaN, MariaDBCPUUsPerQuery: NaN, ClientCPUUsPerQuery: NaN,
	}
	r.Stats.P95Ms, r.Stats.P99Ms, r.Stats.PercentileMs = NaN, NaN, NaN
	r.RawFile = r.key().rawFile()
	fail := func(err error) RoutingRun {
		r.Error = err.Error()
		return r
	}
	for _, p := range []*Process{e.sim, t.proc} {
		if err := exitedError(p, "before the run"); err != nil {
			return fail(err)
		}
	}
	base := sysbenchArgv(cfg.SysbenchBin, workload, cfg.sysbenchCommon(), t, threads)
	var err error
	if r.WarmupCommand, err = warmUp(ctx, base, cfg.WarmupSeconds); err != nil {
		return fail(err)
	}
	r.Command = measuredArgv(base, cfg.TimeSeconds)

	if err := e.ctl.ResetStats(ctx); err != nil {
		return fail(err)
	}
	cpu := func() (proxy, sim, mdb time.Duration, errs []error) {
		var err error
		if t.proc != nil {
			proxy, err = CPUTime(t.proc.PID())
			errs = append(errs, err)
		}
		sim, err = CPUTime(e.sim.PID())
		errs = append(errs, err)
		mdb, err = CPUTime(e.srv.PID())
		errs = append(errs, err)
		return
	}
	px0, sim0, mdb0, errs0 := cpu()
	r.Started = time.Now().UTC()
	out, client, runErr := runProcess(ctx, r.Command)
	px1, sim1, mdb1, errs1 := cpu()
	stats, _, statsErr := e.ctl.Stats(ctx)

	st, err := sysbenchStats(out, runErr, filepath.Join(outDir, filepath.FromSlash(r.RawFile)))
	r.Stats = st
	if err != nil {
		return fail(err)
	}
	if statsErr != nil {
		return fail(statsErr)
	}
	r.Obsim = stats
	r.Counted = stats.Total.Split(r.Split)
	r.LocalRatio = r.Counted.LocalRatio()

	if errors.Join(append(errs0, errs1...)...) == nil {
		if t.proc != nil {
			r.ProxyCPUSeconds, r.ProxyCPUUsPerQuery = Num((px1 - px0).Seconds()), perQuery(px1-px0, st.Queries)
		}
		r.OBSimCPUUsPerQuery = perQuery(sim1-sim0, st.Queries)
		r.MariaDBCPUUsPerQuery = perQuery(mdb1-mdb0, st.Queries)
	}
	if c, ok := cpuTime(client); ok {
		r.ClientCPUUsPerQuery = perQuery(c, st.Queries)
	}
	for _, p := range []*Process{e.sim, t.proc} {
		if err := exitedError(p, "during the run"); err != nil {
			return fail(err)
		}
	}
	return r
}

// describeRoutingRun is the progress line of r.
func describeRoutingRun(r RoutingRun) string {
	head := fmt.Sprintf("%-18s threads=%-3d %-19s", r.Workload, r.Threads, r.Target)
	if r.Error != "" {
		return head + " FAILED: " + firstLine(r.Error)
	}
	s := fmt.Sprintf("%s qps=%-8.0f p95=%sms p99=%sms local=%s%% (%d of %d)", head, r.Stats.QPS,
		fmtNum(r.Stats.P95Ms, 3), fmtNum(r.Stats.P99Ms, 3), fmtNum(r.LocalRatio*100, 1), r.Counted.Local, r.Counted.Local+r.Counted.Remote)
	if r.ProxyCPUUsPerQuery.Valid() {
		s += " proxy=" + fmtNum(r.ProxyCPUUsPerQuery, 1) + "µs/q"
	}
	if r.Stats.IgnoredErrors > 0 || r.Stats.Reconnects > 0 {
		s += fmt.Sprintf(" errors=%d reconnects=%d", r.Stats.IgnoredErrors, r.Stats.Reconnects)
	}
	return s
}

// SummarizeRouting groups runs into cells in the order of workloads,
// threads and targets.
func SummarizeRouting(runs []RoutingRun, workloads []string, threads []int, targets []TargetInfo) []RoutingCell {
	var cells []RoutingCell
	for _, g := range groupCells(runs, workloads, threads, targets) {
		c := RoutingCell{CellRounds: g.CellRounds, NodeStatements: map[string]uint64{}}
		for _, r := range g.ok {
			c.Counted.add(r.Counted)
			c.Queries += r.Stats.Queries
			for name, n := range r.Obsim.Nodes {
				c.NodeStatements[name] += n.Split(r.Split).Statements
			}
			c.IgnoredErrors += r.Stats.IgnoredErrors
			c.Reconnects += r.Stats.Reconnects
		}
		c.QPS = medianOf(g.ok, func(r RoutingRun) Num { return Num(r.Stats.QPS) })
		c.P95Ms = medianOf(g.ok, func(r RoutingRun) Num { return r.Stats.P95Ms })
		c.P99Ms = medianOf(g.ok, func(r RoutingRun) Num { return r.Stats.P99Ms })
		c.LocalRatio = medianOf(g.ok, func(r RoutingRun) Num { return r.LocalRatio })
		c.ProxyCPUUsPerQuery = medianOf(g.ok, func(r RoutingRun) Num { return r.ProxyCPUUsPerQuery })
		c.OBSimCPUUsPerQuery = medianOf(g.ok, func(r RoutingRun) Num { return r.OBSimCPUUsPerQuery })
		c.MariaDBCPUUsPerQuery = medianOf(g.ok, func(r RoutingRun) Num { return r.MariaDBCPUUsPerQuery })
		cells = append(cells, c)
	}
	return cells
}

// publishRouting copies the charts to PlotsDir and rewrites the routing
// section of the report file.
func publishRouting(cfg RoutingConfig, s *RoutingSummary, plots []Plot, outDir string) error {
	return cfg.publishSection(plots, outDir, func(links ReportLinks) string { return RenderRoutingReport(s, plots, links) }, UpdateRoutingSection)
}
