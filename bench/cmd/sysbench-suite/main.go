// Command sysbench-suite runs sysbench against MariaDB directly, through
// HAProxy (TCP mode) and through obgate, and against a simulated OceanBase
// cluster (obsim) directly and through obgate in OceanBase mode, in one run
// on one machine, and writes the results, charts and the sysbench section
// of BENCHMARKS.md.
//
//	go run ./bench/cmd/sysbench-suite --help
//	go run ./bench/cmd/sysbench-suite --quick --targets direct,haproxy
//
// See bench/README.md for what the numbers mean.
package main

import (
	"flag"
	"fmt"
	"os"
	"strings"
	"time"

	"obgate/bench/internal/cli"
	"obgate/bench/suite"
)

// quickSettings replace the defaults of flags not given explicitly when
// --quick is set: enough to check the whole pipeline in well under a minute.
var quickSettings = map[string]string{
	"tables":        "1",
	"table-size":    "1000",
	"threads":       "1,8",
	"time":          "2",
	"warmup":        "0",
	"buffer-pool":   "256M",
	"log-file-size": "48M",
}

const about = `Runs sysbench against MariaDB directly, through HAProxy and through obgate,
and against a simulated OceanBase node directly and through obgate in
OceanBase mode, then writes bench/results/<timestamp>/, bench/plots/ and
the sysbench section of BENCHMARKS.md.`

func main() { cli.Main("sysbench-suite", run) }

func run(args []string) error {
	var cfg suite.Config
	fs := cli.NewFlagSet("sysbench-suite", about)
	shared := suite.AddRunFlags(fs, &cfg.RunConfig, suite.RunDefaults{
		Workloads: "oltp_point_select,go_args_point_select,oltp_read_only,oltp_read_write", Threads: "1,8,32", Rounds: 1, BufferPool: "1G"})
	var extras, obExtras, binaries cli.List
	targets := fs.String("targets", "direct,haproxy,obgate,obsim,haproxy-ob,obgate-ob", "comma-separated targets to run, in column order: direct, haproxy, obgate, obsim (a simulated OceanBase node), haproxy-ob (HAProxy in front of that node), obgate-ob (obgate in OceanBase mode in front of it) and names defined with --target or --ob-target")
	fs.StringVar(&cfg.OBSimBin, "obsim", "bin/obsim", "obsim binary for the OceanBase-mode targets (relative to the repository root)")
	syscalls := fs.String("syscalls", suite.CounterPerf, "count the proxies' system calls during each measured run: perf, or none")
	fs.BoolVar(&cfg.Quick, "quick", false, "smoke test: 1 table × 1000 rows, threads 1,8, 2 s runs, no warm-up (explicit flags still win)")
	fs.IntVar(&cfg.HAProxy.MaxConn, "haproxy-maxconn", suite.DefaultHAProxySettings.MaxConn, "HAProxy maxconn (global, frontend and server)")
	fs.StringVar(&cfg.ResultsDir, "results", "bench/results", "directory for raw results; each run makes a timestamped directory inside")
	fs.StringVar(&cfg.ReportPath, "report", "BENCHMARKS.md", "report file whose sysbench section is rewritten; empty to leave it alone")
	fs.DurationVar(&cfg.StartTimeout, "start-timeout", 60*time.Second, "how long a proxy may take to accept its first MySQL login")
	fs.BoolVar(&cfg.ServerTLS, "server-tls", false, "MariaDB and obsim accept TLS (self-signed, made for the run), for targets given -o,enable_server_ssl=true")
	fs.Var(&extras, "target", "extra obgate target `name=arg,arg,...`: another obgate process started with these extra arguments after the standard ones, split at commas (e.g. obgate-net=-o,client_io_mode=net); added to --targets unless that flag is given; repeatable")
	fs.Var(&obExtras, "ob-target", "like --target, for obgate in OceanBase mode in front of obsim (`name=arg,arg,...`); repeatable")
	fs.Var(&binaries, "target-binary", "`name=path`: the target defined with --target or --ob-target runs this obgate binary (relative to the repository root) instead of --obgate, for an interleaved A/B of two builds; repeatable")
	fs.Var((*cli.List)(&cfg.ObgateOpts), "obgate-opt", "extra `key=value` passed as -o to every obgate target; repeatable")
	if err := cli.Parse(fs, args); err != nil {
		return err
	}
	set := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { set[f.Name] = true })
	if cfg.Quick {
		if err := suite.DefaultFlags(fs, quickSettings); err != nil {
			return err
		}
	}
	cfg.CommandLine = suite.CommandLine("go run ./bench/cmd/sysbench-suite", args)
	cfg.Log = os.Stderr
	if err := shared.Resolve(); err != nil {
		return err
	}
	switch *syscalls {
	case suite.CounterPerf:
		cfg.SyscallCounter = suite.CounterPerf
	case "none":
	default:
		return fmt.Errorf("--syscalls %q: want perf or none", *syscalls)
	}
	cfg.Targets = suite.SplitList(*targets)
	for _, list := range []struct {
		flag      string
		values    []string
		oceanBase bool
	}{{"--target", extras, false}, {"--ob-target", obExtras, true}} {
		for _, e := range list.values {
			name, argList, ok := strings.Cut(e, "=")
			if !ok || name == "" || strings.ContainsAny(name, "/ ") {
				return fmt.Errorf("%s %q: want name=arg,arg,...", list.flag, e)
			}
			cfg.Extras = append(cfg.Extras, suite.ExtraTarget{Name: name, Args: suite.SplitList(argList), OceanBase: list.oceanBase})
			if !set["targets"] {
				cfg.Targets = append(cfg.Targets, name)
			}
		}
	}

	for _, e := range binaries {
		name, path, ok := strings.Cut(e, "=")
		found := false
		for i := range cfg.Extras {
			if cfg.Extras[i].Name == name {
				cfg.Extras[i].Binary, found = path, true
			}
		}
		if !ok || path == "" || !found {
			return fmt.Errorf("--target-binary %q: want name=path for a target defined with --target or --ob-target", e)
		}
	}

	ctx, stop := cli.SignalContext()
	defer stop()
	return suite.Run(ctx, cfg)
}
