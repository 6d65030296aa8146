package suite

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
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
	Workload   string      `json:"workload"`
	Threads    int         `json:"threads"`
	Target     string      `json:"target"`
	Kind       string      `json:"kind"`
	Rounds     int         `json:"rounds"`
	Failed     int         `json:"failed"`
	Error      string      `json:"error,omitempty"` // the first failure
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
	for i := range s.Cells {
		c := &s.Cells[i]
		if c.Workload == workload && c.Threads == threads && c.Target == target {
			return c
		}
	}
	return nil
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

	var cleanups []func()
	defer func() {
		for i := len(cleanups) - 1; i >= 0; i-- {
			cleanups[i]()
		}
	}()

	// The tables exist before obsim starts, so obsim keeps their rows and
	// reads their columns.
	srv, prepare, err := startSbtestMariaDB(ctx, mariadbd.Options{BufferPoolSize: cfg.BufferPoolSize, LogFileSize: cfg.LogFileSize},
		cfg.SysbenchBin, cfg.sysbenchCommon(), cfg.Tables, cfg.TableSize, outDir, &env, logf, &cleanups)
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
	cleanups = append(cleanups, func() {
		if err := sim.Stop(10 * time.Second); err != nil {
			logf("stopping obsim: %v", err)
		}
	})
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
	cleanups = append(cleanups, tcleanup)
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
	total := len(cfg.Workloads) * len(cfg.Threads) * cfg.Rounds * len(targets)
	cell := 0
	for _, w := range cfg.Workloads {
		for _, th := range cfg.Threads {
			for round := 1; round <= cfg.Rounds; round++ {
				// The order rotates per cell and round, so that no target
				// always runs first or right after the same other one.
				for k := range targets {
					t := targets[(k+cell)%len(targets)]
					if err := ctx.Err(); err != nil {
						return context.Cause(ctx)
					}
					r := measureRouting(ctx, cfg, renv, t, w, th, round, outDir)
					if err := ctx.Err(); err != nil {
						return context.Cause(ctx) // cut short; not recorded
					}
					runs = append(runs, r)
					if err := writeJSON(filepath.Join(outDir, "runs", routingRunFile(r)), r); err != nil {
						return err
					}
					logf("[%d/%d] %s", len(runs), total, describeRoutingRun(r))
				}
				cell++
			}
		}
	}

	summary.Cells = SummarizeRouting(runs, cfg.Workloads, cfg.Threads, summary.Targets)
	for _, r := range runs {
		if r.Error != "" {
			summary.Failures++
		}
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
	section := RenderRoutingReport(summary, plots, ReportLinks{PlotsDir: ".", ResultsDir: ".", Readme: rel(outDir, cfg.abs("bench/README.md"))})
	if err := os.WriteFile(filepath.Join(outDir, "report.md"), []byte(section), 0o644); err != nil {
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
			port, err := freePort()
			if err != nil {
				return targets, cleanup, err
			}
			mport, err := freePort()
			if err != nil {
				return targets, cleanup, err
			}
			confDir := filepath.Join(outDir, "conf", name)
			if err := os.MkdirAll(confDir, 0o755); err != nil {
				return targets, cleanup, err
			}
			argv := obgateArgv(cfg.ObgateBin, port, mport, confDir, []string{"-r", rslist, "-c", RoutingCluster}, cfg.ObgateOpts)
			argv = append(argv, routingTargetArgs(name)...)
			p, err := StartProcess(name, filepath.Join(outDir, "logs", name+".log"), argv...)
			if err != nil {
				return targets, cleanup, err
			}
			t.Port, t.proc, t.Command, t.User = port, p, relArgs(cfg.Root, argv), RoutingProxyUser
			if env.ObgateCommit == "" {
				env.ObgateCommit = GitCommit(ctx, cfg.Root)
				env.ObgateVersion = firstLine(commandOutput(ctx, cfg.ObgateBin, "-V"))
			}
		}
		targets = append(targets, t)
		begin := time.Now()
		if err := waitLogin(ctx, t, cfg.StartTimeout); err != nil {
			return targets, cleanup, err
		}
		logf("%s on 127.0.0.1:%d accepts logins as %s after %v", name, t.Port, t.user(), time.Since(begin).Round(time.Millisecond))
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
	r.RawFile = filepath.ToSlash(filepath.Join("raw", strings.TrimSuffix(routingRunFile(r), ".json")+".txt"))
	fail := func(err error) RoutingRun {
		r.Error = err.Error()
		return r
	}
	for _, p := range []*Process{e.sim, t.proc} {
		if p == nil {
			continue
		}
		if err := p.ExitError(); err != nil {
			return fail(fmt.Errorf("%v before the run\n%s", err, tailString(readFile(p.LogPath), 20)))
		}
	}
	base := append([]string{cfg.SysbenchBin, workload}, cfg.sysbenchCommon()...)
	base = append(base, "--mysql-user="+t.user(), "--mysql-port="+strconv.Itoa(t.Port), "--threads="+strconv.Itoa(threads), "--events=0", "--report-interval=0")
	if cfg.WarmupSeconds > 0 {
		r.WarmupCommand = append(slices.Clone(base), "--time="+strconv.Itoa(cfg.WarmupSeconds), "run")
		if out, err := runCommand(ctx, r.WarmupCommand); err != nil {
			return fail(fmt.Errorf("warm-up: %w\n%s", err, tailString(string(out), 10)))
		}
	}
	r.Command = append(slices.Clone(base), "--time="+strconv.Itoa(cfg.TimeSeconds), "--percentile=95", "--histogram=on", "run")

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
	cmd := exec.CommandContext(ctx, r.Command[0], r.Command[1:]...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	var buf bytes.Buffer
	cmd.Stdout, cmd.Stderr = &buf, &buf
	runErr := cmd.Run()
	px1, sim1, mdb1, errs1 := cpu()
	stats, _, statsErr := e.ctl.Stats(ctx)
	_ = os.WriteFile(filepath.Join(outDir, filepath.FromSlash(r.RawFile)), buf.Bytes(), 0o644)

	st, perr := ParseSysbench(buf.Bytes())
	r.Stats = st
	switch {
	case runErr != nil && perr != nil:
		return fail(fmt.Errorf("sysbench: %v: %v", runErr, perr))
	case runErr != nil:
		return fail(fmt.Errorf("sysbench: %w", runErr))
	case perr != nil:
		return fail(perr)
	case statsErr != nil:
		return fail(statsErr)
	}
	r.Obsim = stats
	r.Counted = stats.Total.Split(r.Split)
	r.LocalRatio = r.Counted.LocalRatio()

	q := float64(st.Queries)
	perQuery := func(d time.Duration) Num {
		if q == 0 {
			return NaN
		}
		return Num(d.Seconds() * 1e6 / q)
	}
	if errors.Join(append(errs0, errs1...)...) == nil {
		if t.proc != nil {
			r.ProxyCPUSeconds, r.ProxyCPUUsPerQuery = Num((px1 - px0).Seconds()), perQuery(px1-px0)
		}
		r.OBSimCPUUsPerQuery = perQuery(sim1 - sim0)
		r.MariaDBCPUUsPerQuery = perQuery(mdb1 - mdb0)
	}
	if ps := cmd.ProcessState; ps != nil {
		r.ClientCPUUsPerQuery = perQuery(ps.UserTime() + ps.SystemTime())
	}
	for _, p := range []*Process{e.sim, t.proc} {
		if p == nil {
			continue
		}
		if err := p.ExitError(); err != nil {
			return fail(fmt.Errorf("%v during the run\n%s", err, tailString(readFile(p.LogPath), 20)))
		}
	}
	return r
}

func routingRunFile(r RoutingRun) string {
	return fmt.Sprintf("%s-t%03d-%s-r%d.json", r.Workload, r.Threads, r.Target, r.Round)
}

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
	for _, w := range workloads {
		for _, th := range threads {
			for _, t := range targets {
				c := RoutingCell{Workload: w, Threads: th, Target: t.Name, Kind: t.Kind, NodeStatements: map[string]uint64{}}
				var qps, p95, p99, local, pcpu, scpu, mcpu []Num
				for _, r := range runs {
					if r.Workload != w || r.Threads != th || r.Target != t.Name {
						continue
					}
					c.Rounds++
					if r.Error != "" {
						c.Failed++
						if c.Error == "" {
							c.Error = r.Error
						}
						continue
					}
					qps = append(qps, Num(r.Stats.QPS))
					p95 = append(p95, r.Stats.P95Ms)
					p99 = append(p99, r.Stats.P99Ms)
					local = append(local, r.LocalRatio)
					pcpu = append(pcpu, r.ProxyCPUUsPerQuery)
					scpu = append(scpu, r.OBSimCPUUsPerQuery)
					mcpu = append(mcpu, r.MariaDBCPUUsPerQuery)
					c.Counted.add(r.Counted)
					c.Queries += r.Stats.Queries
					for name, n := range r.Obsim.Nodes {
						c.NodeStatements[name] += n.Split(r.Split).Statements
					}
					c.IgnoredErrors += r.Stats.IgnoredErrors
					c.Reconnects += r.Stats.Reconnects
				}
				if c.Rounds == 0 {
					continue
				}
				c.QPS, c.P95Ms, c.P99Ms, c.LocalRatio = median(qps), median(p95), median(p99), median(local)
				c.ProxyCPUUsPerQuery, c.OBSimCPUUsPerQuery, c.MariaDBCPUUsPerQuery = median(pcpu), median(scpu), median(mcpu)
				cells = append(cells, c)
			}
		}
	}
	return cells
}

// publishRouting copies the charts to PlotsDir and rewrites the routing
// section of the report file.
func publishRouting(cfg RoutingConfig, s *RoutingSummary, plots []Plot, outDir string) error {
	return publishSection(cfg.abs(cfg.ReportPath), cfg.abs(cfg.PlotsDir), cfg.abs("bench/README.md"), plots, outDir,
		func(links ReportLinks) string { return RenderRoutingReport(s, plots, links) }, UpdateRoutingSection)
}
