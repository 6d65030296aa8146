package suite

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/go-sql-driver/mysql"

	"obgate/internal/mariadbd"
	"obgate/internal/testkit"
)

// Target names that are always available.
const (
	TargetDirect  = "direct"
	TargetHAProxy = "haproxy"
	TargetObgate  = "obgate"
	// TargetOBSim is sysbench straight to the node of a one-node obsim
	// cluster keeping its data in the suite's MariaDB: the reference for
	// OceanBase mode.
	TargetOBSim = "obsim"
	// TargetObgateOB is obgate in OceanBase mode in front of that cluster.
	TargetObgateOB = "obgate-ob"
	// TargetHAProxyOB is HAProxy in TCP mode in front of the same obsim
	// node: OceanBase mode's proxy reference (obsim's own cost is then the
	// same on both sides).
	TargetHAProxyOB = "haproxy-ob"
)

// ExtraTarget is another obgate process, started with extra arguments after
// the standard ones (e.g. "-o", "client_io_mode=net"); in OceanBase mode
// (in front of obsim) when OceanBase is set.
//
// Binary, when set, is the obgate binary this target runs instead of the
// suite's (relative to the root): an A/B of two builds, interleaved in one
// run like any two targets.
type ExtraTarget struct {
	Name      string
	Args      []string
	OceanBase bool
	Binary    string
}

// Config is one suite run.
type Config struct {
	RunConfig
	Extras []ExtraTarget
	// ServerTLS: MariaDB and obsim accept TLS (with a certificate made
	// for the run), for targets with enable_server_ssl.
	ServerTLS bool
	// SyscallCounter counts the proxies' system calls during each measured
	// run: CounterPerf, or "" for not at all.
	SyscallCounter string
}

// target is a running endpoint.
type target struct {
	TargetInfo
	proc *Process // nil for direct
}

// Run executes the whole suite: MariaDB, sysbench prepare, proxies, the
// measured runs, then results, plots and the report. Every process it starts
// is stopped before it returns, whatever happens. It returns an error if any
// run failed, after writing what it has.
func Run(ctx context.Context, cfg Config) (err error) {
	if cfg.Log == nil {
		cfg.Log = io.Discard
	}
	logf := func(format string, a ...any) { fmt.Fprintf(cfg.Log, format+"\n", a...) }
	if err := checkConfig(&cfg); err != nil {
		return err
	}

	stamp := time.Now().Format("20060102-150405")
	outDir := filepath.Join(cfg.abs(cfg.ResultsDir), stamp)
	if err := makeResultsDir(outDir); err != nil {
		return err
	}
	logf("results: %s", outDir)

	env := CollectEnvironment(ctx, cfg.SysbenchBin, cfg.HAProxyBin)

	// Everything started from here on is stopped by the deferred calls, in
	// reverse order, also when ctx is cancelled (Ctrl-C).
	var undo cleanups
	defer undo.run()

	common := cfg.sysbenchCommon()
	mopts := mariadbd.Options{BufferPoolSize: cfg.BufferPoolSize, LogFileSize: cfg.LogFileSize}
	var simTLS []string
	if cfg.ServerTLS {
		// A certificate of the run's own, outside the results: MariaDB
		// and obsim accept TLS with it (targets turn it on with
		// enable_server_ssl).
		dir, err := os.MkdirTemp("", "sysbench-tls-")
		if err != nil {
			return err
		}
		undo.add(func() { os.RemoveAll(dir) })
		cert, key, err := testkit.WriteSelfSignedCert(dir)
		if err != nil {
			return err
		}
		mopts.Args = []string{"--ssl-cert=" + cert, "--ssl-key=" + key}
		simTLS = []string{"--ssl-cert", cert, "--ssl-key", key}
	}
	srv, _, err := startSbtestMariaDB(ctx, mopts,
		cfg.SysbenchBin, common, cfg.Tables, cfg.TableSize, outDir, &env, logf, &undo)
	if err != nil {
		return err
	}

	var sim *OBSim
	if cfg.needsOBSim() {
		logf("starting obsim (one node, data in MariaDB)")
		if sim, err = StartOBSim(ctx, cfg.OBSimBin, outDir, srv.DSN("root", "", ""), cfg.StartTimeout, simTLS...); err != nil {
			return err
		}
		undo.add(stopping(sim.Proc, "obsim", logf))
		logf("obsim node on %s (pid %d)", sim.Addr(), sim.Proc.PID())
	}

	targets, tcleanup, err := startTargets(ctx, cfg, srv, sim, outDir, &env, logf)
	undo.add(tcleanup)
	if err != nil {
		return err
	}

	summary := &Summary{
		CommandLine: cfg.CommandLine,
		Environment: env,
		Settings: Settings{
			Quick: cfg.Quick, Tables: cfg.Tables, TableSize: cfg.TableSize,
			TimeSeconds: cfg.TimeSeconds, WarmupSeconds: cfg.WarmupSeconds, Rounds: cfg.Rounds,
			Workloads: cfg.Workloads, Threads: cfg.Threads,
			SysbenchArgs:   append(append([]string(nil), common...), "--threads=N", "--time="+strconv.Itoa(cfg.TimeSeconds), "--events=0", "--percentile=95", "--histogram=on", "--report-interval=0"),
			MariaDBArgs:    tuningArgs(srv.Args()),
			BufferPoolSize: cfg.BufferPoolSize,
			HAProxy:        cfg.HAProxy,
			SyscallCounter: cfg.SyscallCounter,
		},
	}
	if sim != nil {
		summary.Settings.OBSimTopology = string(obsimTopology())
	}
	for _, t := range targets {
		summary.Targets = append(summary.Targets, t.TargetInfo)
	}
	if hp := filepath.Join(outDir, "haproxy.cfg"); fileExists(hp) {
		summary.Settings.HAProxyConfig = readFile(hp)
	}

	var runs []Measurement
	err = measureAll(ctx, cfg.RunConfig, targets,
		func(t target, workload string, threads, round int) Measurement {
			return measure(ctx, cfg, srv, t, workload, threads, round, outDir)
		},
		func(r Measurement, n, total int) error {
			runs = append(runs, r)
			summary.RunFiles = append(summary.RunFiles, r.key().jsonFile())
			if err := writeJSON(filepath.Join(outDir, "runs", r.key().jsonFile()), r); err != nil {
				return err
			}
			logf("[%d/%d] %s", n, total, describeRun(r))
			return nil
		})
	if err != nil {
		return err
	}
	if err := ctx.Err(); err != nil {
		return context.Cause(ctx)
	}

	summary.Cells = Summarize(runs, cfg.Workloads, cfg.Threads, summary.Targets)
	summary.Failures = countFailures(runs)
	if err := writeJSON(filepath.Join(outDir, "summary.json"), summary); err != nil {
		return err
	}
	plots, err := WritePlots(summary, outDir)
	if err != nil {
		return err
	}
	if err := cfg.writeRunReport(outDir, func(links ReportLinks) string { return RenderReport(summary, plots, links) }); err != nil {
		return err
	}
	if cfg.ReportPath != "" {
		if err := publish(cfg, summary, plots, outDir); err != nil {
			return err
		}
	}
	if summary.Failures > 0 {
		return fmt.Errorf("%d of %d runs failed (see %s)", summary.Failures, len(runs), outDir)
	}
	return nil
}

// publish copies the charts to PlotsDir and rewrites the suite's section of
// the report file.
func publish(cfg Config, s *Summary, plots []Plot, outDir string) error {
	return cfg.publishSection(plots, outDir, func(links ReportLinks) string { return RenderReport(s, plots, links) }, UpdateSection)
}

func checkConfig(cfg *Config) error {
	if err := cfg.checkRun(); err != nil {
		return err
	}
	if err := cfg.checkThreads(); err != nil {
		return err
	}
	seen, err := cfg.checkTargets(func(name string) string { return kindOf(*cfg, name) },
		"direct, haproxy, obgate, obsim, obgate-ob, haproxy-ob and names given with --target or --ob-target")
	if err != nil {
		return err
	}
	switch cfg.SyscallCounter {
	case "", CounterPerf:
	default:
		return fmt.Errorf("syscall counter %q: want %s or none", cfg.SyscallCounter, CounterPerf)
	}
	if cfg.SysbenchBin, err = exec.LookPath(orDefault(cfg.SysbenchBin, "sysbench")); err != nil {
		return fmt.Errorf("sysbench not found (apt-get install sysbench): %w", err)
	}
	if seen[TargetHAProxy] || seen[TargetHAProxyOB] {
		if cfg.HAProxyBin, err = lookPath(orDefault(cfg.HAProxyBin, "haproxy"), "/usr/sbin"); err != nil {
			return fmt.Errorf("haproxy not found (apt-get install haproxy, or leave it out of --targets): %w", err)
		}
	} else {
		cfg.HAProxyBin = ""
	}
	for name := range seen {
		if kindOf(*cfg, name) != KindObgate {
			continue
		}
		bin := cfg.abs(cfg.ObgateBin)
		st, err := os.Stat(bin)
		if err != nil || st.IsDir() || st.Mode()&0o111 == 0 {
			return fmt.Errorf("obgate binary %s not found or not executable: build it first (make builds it; by hand: go build -o bin/obgate ./cmd/obgate), pass --obgate, or leave obgate out, e.g. --targets direct,haproxy", bin)
		}
		cfg.ObgateBin = bin
	}
	for i, e := range cfg.Extras {
		if e.Binary == "" {
			continue
		}
		bin := cfg.abs(e.Binary)
		st, err := os.Stat(bin)
		if err != nil || st.IsDir() || st.Mode()&0o111 == 0 {
			return fmt.Errorf("obgate binary %s of target %s not found or not executable", bin, e.Name)
		}
		cfg.Extras[i].Binary = bin
	}
	if cfg.needsOBSim() {
		bin := cfg.abs(orDefault(cfg.OBSimBin, "bin/obsim"))
		st, err := os.Stat(bin)
		if err != nil || st.IsDir() || st.Mode()&0o111 == 0 {
			return fmt.Errorf("obsim binary %s not found or not executable: build it first (make build), pass --obsim, or leave the OceanBase-mode targets out", bin)
		}
		cfg.OBSimBin = bin
	}
	return nil
}

// oceanBase reports whether target name runs in front of obsim.
func (cfg Config) oceanBase(name string) bool {
	switch name {
	case TargetOBSim, TargetObgateOB, TargetHAProxyOB:
		return true
	}
	for _, e := range cfg.Extras {
		if e.Name == name {
			return e.OceanBase
		}
	}
	return false
}

// needsOBSim reports whether any target runs in front of obsim.
func (cfg Config) needsOBSim() bool {
	for _, name := range cfg.Targets {
		if cfg.oceanBase(name) {
			return true
		}
	}
	return false
}

// kindOf returns the kind of the target called name, or "" if there is no
// such target.
func kindOf(cfg Config, name string) string {
	switch name {
	case TargetDirect:
		return KindDirect
	case TargetHAProxy, TargetHAProxyOB:
		return KindHAProxy
	case TargetObgate, TargetObgateOB:
		return KindObgate
	case TargetOBSim:
		return KindOBSim
	}
	for _, e := range cfg.Extras {
		if e.Name == name {
			return KindObgate
		}
	}
	return ""
}

// sysbenchScript is what sysbench is given for workload: one of the
// repository's own scripts (bench/sysbench/<workload>.lua) by its path,
// else the name of one sysbench brings.
func (cfg Config) sysbenchScript(workload string) string {
	if p := cfg.abs(filepath.Join("bench", "sysbench", workload+".lua")); fileExists(p) {
		return p
	}
	return workload
}

// sysbenchCommon are the options every sysbench command shares.
func (cfg Config) sysbenchCommon() []string {
	return sysbenchBase(cfg.Tables, cfg.TableSize)
}

// makeResultsDir creates a run's results directory with its raw, runs
// and logs subdirectories.
func makeResultsDir(outDir string) error {
	for _, d := range []string{"raw", "runs", "logs"} {
		if err := os.MkdirAll(filepath.Join(outDir, d), 0o755); err != nil {
			return err
		}
	}
	return nil
}

// startSbtestMariaDB starts MariaDB with opts (its Stop joins undo),
// records its version in env, creates database sbtest and fills it with
// sysbench prepare (output in outDir/raw/prepare.txt), whose command it
// returns.
func startSbtestMariaDB(ctx context.Context, opts mariadbd.Options, sysbench string, common []string, tables, tableSize int,
	outDir string, env *Environment, logf func(string, ...any), undo *cleanups) (*mariadbd.Server, []string, error) {
	logf("starting MariaDB (innodb_buffer_pool_size=%s)", byteSize(opts.BufferPoolSize))
	srv, err := mariadbd.Start(ctx, opts)
	if err != nil {
		return nil, nil, err
	}
	undo.add(func() {
		if err := srv.Stop(); err != nil {
			logf("stopping MariaDB: %v", err)
		}
	})
	logf("MariaDB %s on %s (pid %d), up in %v", srv.Version(), srv.Addr(), srv.PID(), srv.StartupTime().Round(time.Millisecond))
	env.MariaDBVersion = srv.Version()
	if err := srv.Exec(ctx, "CREATE DATABASE sbtest"); err != nil {
		return nil, nil, err
	}
	logf("sysbench prepare: %d tables × %d rows", tables, tableSize)
	prepare := append([]string{sysbench, "oltp_read_write"}, common...)
	prepare = append(prepare, "--mysql-user=root", "--mysql-port="+strconv.Itoa(srv.Port()), "--threads="+strconv.Itoa(min(tables, 4)), "prepare")
	out, perr := runCommand(ctx, prepare)
	_ = os.WriteFile(filepath.Join(outDir, "raw", "prepare.txt"), out, 0o644)
	if perr != nil {
		return nil, prepare, fmt.Errorf("sysbench prepare: %w\n%s", perr, tailString(string(out), 20))
	}
	return srv, prepare, nil
}

// underRoot resolves p, a path relative to the repository root unless it
// is absolute or empty.
func underRoot(root, p string) string {
	if p == "" || filepath.IsAbs(p) {
		return p
	}
	return filepath.Join(root, p)
}

// sysbenchBase are the options of every sysbench command of the suites:
// the MariaDB-compatible target on 127.0.0.1, database sbtest, the
// tables, and server-side prepared statements where the driver can.
func sysbenchBase(tables, tableSize int) []string {
	return []string{
		"--db-driver=mysql",
		"--mysql-host=127.0.0.1",
		"--mysql-password=",
		"--mysql-db=sbtest",
		"--tables=" + strconv.Itoa(tables),
		"--table-size=" + strconv.Itoa(tableSize),
		"--db-ps-mode=auto",
	}
}

// stopTargets stops the processes of targets, the last started first.
func stopTargets(targets []target, logf func(string, ...any)) {
	for i := len(targets) - 1; i >= 0; i-- {
		if p := targets[i].proc; p != nil {
			stopping(p, targets[i].Name, logf)()
		}
	}
}

// startTargets starts the proxies in the order of cfg.Targets and waits
// until each accepts a MySQL login. sim is the obsim cluster of the
// OceanBase-mode targets (nil when there are none). The returned cleanup
// stops them.
func startTargets(ctx context.Context, cfg Config, srv *mariadbd.Server, sim *OBSim, outDir string, env *Environment, logf func(string, ...any)) ([]target, func(), error) {
	var targets []target
	cleanup := func() { stopTargets(targets, logf) }
	backend := srv.Addr()
	for _, name := range cfg.Targets {
		t := target{TargetInfo: TargetInfo{Name: name, Kind: kindOf(cfg, name)}}
		if cfg.oceanBase(name) {
			t.Mode, t.User = ModeOceanBase, OBUser
		}
		switch t.Kind {
		case KindDirect:
			t.Port = srv.Port()
		case KindOBSim:
			_, port, _ := net.SplitHostPort(sim.Addr())
			t.Port, _ = strconv.Atoi(port)
			t.User = OBDirectUser
		case KindHAProxy:
			port, err := freePort()
			if err != nil {
				return targets, cleanup, err
			}
			to, dir := backend, outDir
			if t.Mode == ModeOceanBase {
				// Sysbench logs in to the node through it, as straight to it.
				to, t.User, dir = sim.Addr(), OBDirectUser, filepath.Join(outDir, name)
				if err := os.MkdirAll(dir, 0o755); err != nil {
					return targets, cleanup, err
				}
			}
			p, _, err := StartHAProxy(ctx, cfg.HAProxyBin, dir, cfg.HAProxy, port, to)
			if err != nil {
				return targets, cleanup, err
			}
			t.Port, t.proc, t.Command = port, p, relArgs(cfg.Root, p.Args)
		case KindObgate:
			servers := []string{"-r", backend, "-o", "server_routing_mode=mysql"}
			if t.Mode == ModeOceanBase {
				servers = []string{"-r", sim.RSList, "-c", OBCluster}
			}
			bin, extra := cfg.ObgateBin, []string(nil)
			for _, e := range cfg.Extras {
				if e.Name == name {
					extra = append(extra, e.Args...)
					if e.Binary != "" {
						bin = e.Binary
					}
				}
			}
			if err := startObgate(ctx, cfg.RunConfig, &t, bin, filepath.Join(outDir, "obgate-"+name), servers, extra, outDir, env); err != nil {
				return targets, cleanup, err
			}
		}
		targets = append(targets, t)
		if t.proc != nil || t.Kind == KindOBSim {
			if err := waitReady(ctx, t, cfg.StartTimeout, logf); err != nil {
				return targets, cleanup, err
			}
		}
	}
	return targets, cleanup, nil
}

// waitReady waits until t accepts a login and logs how long that took.
func waitReady(ctx context.Context, t target, timeout time.Duration, logf func(string, ...any)) error {
	begin := time.Now()
	if err := waitLogin(ctx, t, timeout); err != nil {
		return err
	}
	logf("%s on 127.0.0.1:%d accepts logins as %s after %v", t.Name, t.Port, t.user(), time.Since(begin).Round(time.Millisecond))
	return nil
}

// waitLogin polls a login to sbtest through t until it works, the process
// exits or timeout passes.
func waitLogin(ctx context.Context, t target, timeout time.Duration) error {
	return WaitLogin(ctx, t.Name, t.Port, t.user(), t.proc, timeout)
}

// WaitLogin polls a login as user (no password) to database sbtest on
// 127.0.0.1:port until it works, proc (when not nil) exits or timeout
// passes.
func WaitLogin(ctx context.Context, name string, port int, user string, proc *Process, timeout time.Duration) error {
	cfg := mysql.NewConfig()
	cfg.User, cfg.Net, cfg.DBName = user, "tcp", "sbtest"
	cfg.Addr = net.JoinHostPort("127.0.0.1", strconv.Itoa(port))
	cfg.Timeout, cfg.ReadTimeout, cfg.WriteTimeout = time.Second, 5*time.Second, 5*time.Second
	cfg.Logger = &mysql.NopLogger{}
	conn, err := mysql.NewConnector(cfg)
	if err != nil {
		return err
	}
	db := sql.OpenDB(conn)
	defer db.Close()
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	var last error
	for {
		pctx, pcancel := context.WithTimeout(ctx, 5*time.Second)
		last = db.PingContext(pctx)
		pcancel()
		if last == nil {
			return nil
		}
		var exited <-chan struct{}
		logTail := func() string { return "" }
		if proc != nil {
			exited = proc.Exited()
			logTail = func() string { return tailString(readFile(proc.LogPath), 30) }
		}
		select {
		case <-exited:
			return fmt.Errorf("%s exited during start-up: %v\n%s", name, proc.ExitError(), logTail())
		case <-ctx.Done():
			return fmt.Errorf("%s on %s did not accept a MySQL login as %s within %v: %v\n%s", name, cfg.Addr, user, timeout, last, logTail())
		case <-tick.C:
		}
	}
}

// measure runs the warm-up and the measured sysbench run of one cell on t.
func measure(ctx context.Context, cfg Config, srv *mariadbd.Server, t target, workload string, threads, round int, outDir string) Measurement {
	r := Measurement{
		Workload: workload, Threads: threads, Target: t.Name, Kind: t.Kind, Round: round,
		ProxyCPUSeconds: NaN, ProxyCPUUsPerQuery: NaN,
		MariaDBCPUSeconds: NaN, MariaDBCPUUsPerQuery: NaN,
		ClientCPUSeconds: NaN, ClientCPUUsPerQuery: NaN,
		ProxySyscallsPerQuery: NaN, ProxyFutexPerQuery: NaN, ProxyContextSwitchesPerQuery: NaN,
	}
	r.Stats.P95Ms, r.Stats.P99Ms, r.Stats.PercentileMs = NaN, NaN, NaN
	r.RawFile = r.key().rawFile()
	fail := func(err error) Measurement {
		r.Error = err.Error()
		return r
	}
	if err := exitedError(t.proc, "before the run"); err != nil {
		return fail(err)
	}
	base := sysbenchArgv(cfg.SysbenchBin, cfg.sysbenchScript(workload), cfg.sysbenchCommon(), t, threads)
	if _, err := warmUp(ctx, base, cfg.WarmupSeconds); err != nil {
		return fail(err)
	}

	r.Command = measuredArgv(base, cfg.TimeSeconds)
	mdb0, mdbErr0 := CPUTime(srv.PID())
	var px0 time.Duration
	var pxErr0 error
	var counter *SyscallCounter
	var counterErr error
	if t.proc != nil {
		if cfg.SyscallCounter != "" && t.IsProxy() {
			out := filepath.Join(outDir, "raw", r.key().name()+".syscalls.txt")
			counter, counterErr = StartSyscallCounter(ctx, cfg.SyscallCounter, t.proc.PID(), out, []string{"futex"})
		}
		px0, pxErr0 = CPUTime(t.proc.PID())
	}
	r.Started = time.Now().UTC()
	out, client, runErr := runProcess(ctx, r.Command)
	var syscalls SyscallCount
	if counter != nil {
		syscalls, counterErr = counter.Stop(ctx)
	}
	if counterErr != nil {
		r.SyscallError = counterErr.Error()
	}
	mdb1, mdbErr1 := CPUTime(srv.PID())
	var px1 time.Duration
	var pxErr1 error
	if t.proc != nil {
		px1, pxErr1 = CPUTime(t.proc.PID())
	}

	st, err := sysbenchStats(out, runErr, filepath.Join(outDir, filepath.FromSlash(r.RawFile)))
	r.Stats = st
	if err != nil {
		return fail(err)
	}
	q := float64(st.Queries)
	if mdbErr0 == nil && mdbErr1 == nil {
		r.MariaDBCPUSeconds, r.MariaDBCPUUsPerQuery = Num((mdb1 - mdb0).Seconds()), perQuery(mdb1-mdb0, st.Queries)
	}
	if t.proc != nil && pxErr0 == nil && pxErr1 == nil {
		r.ProxyCPUSeconds, r.ProxyCPUUsPerQuery = Num((px1 - px0).Seconds()), perQuery(px1-px0, st.Queries)
	}
	if counter != nil && counterErr == nil && q > 0 {
		r.ProxySyscalls, r.ProxySyscallsPerQuery = syscalls.Total, Num(float64(syscalls.Total)/q)
		r.ProxyFutexPerQuery = Num(float64(syscalls.ByName["futex"]) / q) // both counters count futex
		if syscalls.ContextSwitches >= 0 {
			r.ProxyContextSwitchesPerQuery = Num(float64(syscalls.ContextSwitches) / q)
		}
	}
	if c, ok := cpuTime(client); ok {
		r.ClientCPUSeconds, r.ClientCPUUsPerQuery = Num(c.Seconds()), perQuery(c, st.Queries)
	}
	if err := exitedError(t.proc, "during the run"); err != nil {
		return fail(err)
	}
	return r
}

// describeRun is the progress line of r.
func describeRun(r Measurement) string {
	head := fmt.Sprintf("%-18s threads=%-3d %-12s", r.Workload, r.Threads, r.Target)
	if r.Error != "" {
		return head + " FAILED: " + firstLine(r.Error)
	}
	s := fmt.Sprintf("%s qps=%-9.0f p95=%sms p99=%sms mariadb=%sµs/q", head, r.Stats.QPS,
		fmtNum(r.Stats.P95Ms, 3), fmtNum(r.Stats.P99Ms, 3), fmtNum(r.MariaDBCPUUsPerQuery, 1))
	if r.ProxyCPUUsPerQuery.Valid() {
		s += " proxy=" + fmtNum(r.ProxyCPUUsPerQuery, 1) + "µs/q"
	}
	if r.ProxySyscallsPerQuery.Valid() {
		s += " syscalls=" + fmtNum(r.ProxySyscallsPerQuery, 2) + "/q"
	} else if r.SyscallError != "" {
		s += " (syscalls not counted: " + firstLine(r.SyscallError) + ")"
	}
	if r.Stats.IgnoredErrors > 0 || r.Stats.Reconnects > 0 {
		s += fmt.Sprintf(" errors=%d reconnects=%d", r.Stats.IgnoredErrors, r.Stats.Reconnects)
	}
	return s
}

func writeJSON(path string, v any) error {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(path, append(b, '\n'), 0o644)
}

func freePort() (int, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port, nil
}

func lookPath(name string, dirs ...string) (string, error) {
	p, err := exec.LookPath(name)
	if err == nil {
		return p, nil
	}
	for _, d := range dirs {
		c := filepath.Join(d, name)
		if st, serr := os.Stat(c); serr == nil && !st.IsDir() && st.Mode()&0o111 != 0 {
			return c, nil
		}
	}
	return "", err
}

// rel returns target relative to dir with forward slashes, for Markdown links.
func rel(dir, target string) string {
	r, err := filepath.Rel(dir, target)
	if err != nil {
		return filepath.ToSlash(target)
	}
	return filepath.ToSlash(r)
}

// relArgs shortens paths under root to relative ones, for the report.
func relArgs(root string, argv []string) []string {
	out := make([]string, len(argv))
	prefix := filepath.Clean(root) + string(filepath.Separator)
	for i, a := range argv {
		out[i] = strings.ReplaceAll(a, prefix, "")
	}
	return out
}

// tuningArgs drops the options that only name this server's files and port.
func tuningArgs(args []string) []string {
	var out []string
	for _, a := range args {
		switch name, _, _ := strings.Cut(a, "="); name {
		case "--no-defaults", "--datadir", "--socket", "--pid-file", "--tmpdir", "--port", "--user":
		default:
			out = append(out, a)
		}
	}
	return out
}

func fileExists(p string) bool {
	_, err := os.Stat(p)
	return err == nil
}

func orDefault(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

func tailString(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}
