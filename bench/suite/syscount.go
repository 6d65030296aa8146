package suite

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"obgate/internal/mariadbd"
)

// Routing modes CountSyscalls runs obgate in.
const (
	// ModeMySQL: obgate (server_routing_mode=mysql) in front of MariaDB,
	// sysbench logging in as root.
	ModeMySQL = "mysql"
	// ModeOceanBase: obgate in front of a one-node obsim cluster (OB 2.0
	// to the server), sysbench logging in as root@test#bench.
	ModeOceanBase = "oceanbase"
	// ModeMySQLOBSim: obgate in mysql mode in front of the obsim node,
	// sysbench logging in as root@test: the server of ModeOceanBase with
	// the protocol of ModeMySQL, which tells what the server's own latency
	// does to the counts (a slower answer makes more of obgate's reads
	// find nothing and wait) apart from what the protocol costs.
	ModeMySQLOBSim = "mysql-obsim"
)

// OBUser is the login name of sysbench through obgate in OceanBase mode;
// OBDirectUser the one straight to an obsim node.
const (
	OBUser       = "root@" + OBTenant + "#" + OBCluster
	OBDirectUser = "root@" + OBTenant
)

// SyscountConfig is one CountSyscalls run.
type SyscountConfig struct {
	Root        string // repository root; relative paths are under it
	ObgateBin   string
	OBSimBin    string
	SysbenchBin string
	ObgateOpts  []string // extra -o values for obgate
	Modes       []string // ModeMySQL, ModeOceanBase, in this order
	Workload    string   // default oltp_point_select
	Events      int      // statements (sysbench events) counted per mode
	Warmup      int      // events run before counting starts
	Threads     int
	TableSize   int
	Counter     string // CounterStrace or CounterPerf
	Dir         string // logs and counter output
	Log         io.Writer
}

// SyscountResult is the count of one mode.
type SyscountResult struct {
	Mode       string       `json:"mode"`
	Statements uint64       `json:"statements"` // what sysbench executed while counting
	Count      SyscallCount `json:"syscalls"`
	Command    []string     `json:"sysbench_command"`
	Obgate     []string     `json:"obgate_command"`
}

// PerStatement divides n by the statements.
func (r SyscountResult) PerStatement(n int64) float64 {
	if r.Statements == 0 {
		return 0
	}
	return float64(n) / float64(r.Statements)
}

// CountSyscalls counts obgate's system calls per statement: for each mode
// it starts a server (MariaDB, or obsim on the same MariaDB) and an obgate
// in front of it, runs the warm-up, then counts every system call of the
// obgate process while sysbench runs exactly Events events of Workload at
// Threads threads. Everything it starts is stopped before it returns.
func CountSyscalls(ctx context.Context, cfg SyscountConfig) ([]SyscountResult, error) {
	if cfg.Log == nil {
		cfg.Log = io.Discard
	}
	logf := func(format string, a ...any) { fmt.Fprintf(cfg.Log, format+"\n", a...) }
	if cfg.Workload == "" {
		cfg.Workload = "oltp_point_select"
	}
	abs := RunConfig{Root: cfg.Root}.abs
	if err := os.MkdirAll(cfg.Dir, 0o755); err != nil {
		return nil, err
	}
	var undo cleanups
	defer undo.run()
	logf("starting MariaDB")
	srv, err := mariadbd.Start(ctx, mariadbd.Options{BufferPoolSize: 256 << 20, LogFileSize: 48 << 20})
	if err != nil {
		return nil, err
	}
	undo.add(func() { _ = srv.Stop() })
	if err := srv.Exec(ctx, "CREATE DATABASE sbtest"); err != nil {
		return nil, err
	}
	common := sysbenchBase(1, cfg.TableSize)
	prepare := append([]string{cfg.SysbenchBin, "oltp_read_write"}, common...)
	prepare = append(prepare, "--mysql-user=root", "--mysql-port="+strconv.Itoa(srv.Port()), "prepare")
	if out, err := runCommand(ctx, prepare); err != nil {
		return nil, fmt.Errorf("sysbench prepare: %w\n%s", err, tailString(string(out), 20))
	}

	var results []SyscountResult
	var sim *OBSim // started for the first mode that needs it
	for _, mode := range cfg.Modes {
		var backendArgs []string
		user := "root"
		switch mode {
		case ModeMySQL:
			backendArgs = []string{"-r", srv.Addr(), "-o", "server_routing_mode=mysql"}
		case ModeOceanBase, ModeMySQLOBSim:
			if sim == nil {
				if sim, err = StartOBSim(ctx, abs(cfg.OBSimBin), cfg.Dir, srv.DSN("root", "", ""), time.Minute); err != nil {
					return results, err
				}
				stop := sim.Proc
				undo.add(func() { _ = stop.Stop(10 * time.Second) })
			}
			backendArgs = []string{"-r", sim.RSList, "-c", OBCluster}
			user = OBUser
			if mode == ModeMySQLOBSim {
				backendArgs = []string{"-r", sim.Addr(), "-o", "server_routing_mode=mysql"}
				user = OBDirectUser
			}
		default:
			return results, fmt.Errorf("unknown mode %q (want %s, %s or %s)", mode, ModeMySQL, ModeOceanBase, ModeMySQLOBSim)
		}
		port, err := freePort()
		if err != nil {
			return results, err
		}
		mport, err := freePort()
		if err != nil {
			return results, err
		}
		confDir := filepath.Join(cfg.Dir, "obgate-"+mode)
		if err := os.MkdirAll(confDir, 0o755); err != nil {
			return results, err
		}
		argv := obgateArgv(abs(cfg.ObgateBin), port, mport, confDir, backendArgs, cfg.ObgateOpts)
		p, err := StartProcess("obgate-"+mode, filepath.Join(cfg.Dir, "obgate-"+mode+".log"), argv...)
		if err != nil {
			return results, err
		}
		undo.add(func() { _ = p.Stop(10 * time.Second) })
		if err := WaitLogin(ctx, "obgate-"+mode, port, user, p, time.Minute); err != nil {
			return results, err
		}
		base := append([]string{cfg.SysbenchBin, cfg.Workload}, common...)
		base = append(base, "--mysql-user="+user, "--mysql-port="+strconv.Itoa(port),
			"--threads="+strconv.Itoa(cfg.Threads), "--time=0", "--report-interval=0")
		if cfg.Warmup > 0 {
			warm := append(append([]string(nil), base...), "--events="+strconv.Itoa(cfg.Warmup), "run")
			if out, err := runCommand(ctx, warm); err != nil {
				return results, fmt.Errorf("%s warm-up: %w\n%s", mode, err, tailString(string(out), 10))
			}
		}
		run := append(append([]string(nil), base...), "--events="+strconv.Itoa(cfg.Events), "run")
		logf("%s: counting obgate's system calls (%s) over %d %s events at %d threads", mode, cfg.Counter, cfg.Events, cfg.Workload, cfg.Threads)
		counter, err := StartSyscallCounter(ctx, cfg.Counter, p.PID(), filepath.Join(cfg.Dir, "syscalls-"+mode+".txt"), nil)
		if err != nil {
			return results, err
		}
		out, runErr := runCommand(ctx, run)
		count, cerr := counter.Stop(ctx)
		_ = os.WriteFile(filepath.Join(cfg.Dir, "sysbench-"+mode+".txt"), out, 0o644)
		if runErr != nil {
			return results, fmt.Errorf("%s: sysbench: %w\n%s", mode, runErr, tailString(string(out), 10))
		}
		if cerr != nil {
			return results, cerr
		}
		st, err := ParseSysbench(out)
		if err != nil {
			return results, fmt.Errorf("%s: %w", mode, err)
		}
		results = append(results, SyscountResult{Mode: mode, Statements: st.Queries, Count: count,
			Command: relArgs(cfg.Root, run), Obgate: relArgs(cfg.Root, argv)})
	}
	return results, nil
}

// FormatSyscounts renders the results side by side: system calls per
// statement by name (names any mode made at least 0.005 calls per statement
// of), with how many of them failed where strace saw failures (a read that
// fails with EAGAIN found nothing yet: how many do depends on timing, not
// on the protocol), then data calls and all calls.
func FormatSyscounts(results []SyscountResult) string {
	var b strings.Builder
	names := map[string]bool{}
	var order []string
	for _, r := range results {
		for _, n := range r.Count.Names() {
			if !names[n] && r.PerStatement(r.Count.ByName[n]) >= 0.005 {
				names[n] = true
				order = append(order, n)
			}
		}
	}
	fmt.Fprintf(&b, "%-16s", "per statement")
	for _, r := range results {
		fmt.Fprintf(&b, " %12s", r.Mode)
	}
	b.WriteString("\n")
	row := func(label string, get func(SyscountResult) int64) {
		fmt.Fprintf(&b, "%-16s", label)
		for _, r := range results {
			fmt.Fprintf(&b, " %12.3f", r.PerStatement(get(r)))
		}
		b.WriteString("\n")
	}
	for _, n := range order {
		row(n, func(r SyscountResult) int64 { return r.Count.ByName[n] })
		failed := false
		for _, r := range results {
			failed = failed || r.PerStatement(r.Count.Failed[n]) >= 0.005
		}
		if failed {
			row("  failed", func(r SyscountResult) int64 { return r.Count.Failed[n] })
		}
	}
	if len(results) > 0 && results[0].Count.Method == CounterPerf {
		row("(other)", func(r SyscountResult) int64 {
			var sum int64
			for _, v := range r.Count.ByName {
				sum += v
			}
			return r.Count.Total - sum
		})
	}
	row("data calls", func(r SyscountResult) int64 { return r.Count.Data() })
	row("all calls", func(r SyscountResult) int64 { return r.Count.Total })
	fmt.Fprintf(&b, "%-16s", "statements")
	for _, r := range results {
		fmt.Fprintf(&b, " %12d", r.Statements)
	}
	b.WriteString("\n")
	return b.String()
}
