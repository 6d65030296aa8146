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
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

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

type listFlag []string

func (l *listFlag) String() string     { return strings.Join(*l, " ") }
func (l *listFlag) Set(s string) error { *l = append(*l, s); return nil }

func main() {
	if err := run(os.Args[1:]); err != nil {
		fmt.Fprintln(os.Stderr, "sysbench-suite:", err)
		os.Exit(1)
	}
}

func run(args []string) error {
	fs := flag.NewFlagSet("sysbench-suite", flag.ContinueOnError)
	var (
		targets     = fs.String("targets", "direct,haproxy,obgate,obsim,haproxy-ob,obgate-ob", "comma-separated targets to run, in column order: direct, haproxy, obgate, obsim (a simulated OceanBase node), haproxy-ob (HAProxy in front of that node), obgate-ob (obgate in OceanBase mode in front of it) and names defined with --target or --ob-target")
		obgateBin   = fs.String("obgate", "bin/obgate", "obgate binary (relative to the repository root)")
		obsimBin    = fs.String("obsim", "bin/obsim", "obsim binary for the OceanBase-mode targets (relative to the repository root)")
		syscalls    = fs.String("syscalls", suite.CounterPerf, "count the proxies' system calls during each measured run: perf, or none")
		workloads   = fs.String("workloads", "oltp_point_select,go_args_point_select,oltp_read_only,oltp_read_write", "comma-separated sysbench workloads")
		threads     = fs.String("threads", "1,8,32", "comma-separated sysbench thread counts")
		tables      = fs.Int("tables", 8, "sysbench --tables")
		tableSize   = fs.Int("table-size", 10000, "sysbench --table-size (rows per table)")
		runTime     = fs.Int("time", 20, "seconds per measured run")
		warmup      = fs.Int("warmup", 5, "seconds of warm-up (a separate sysbench run, not measured) before each measured run; 0 for none")
		rounds      = fs.Int("rounds", 1, "measured runs per (workload, threads, target); the report shows medians")
		quick       = fs.Bool("quick", false, "smoke test: 1 table × 1000 rows, threads 1,8, 2 s runs, no warm-up (explicit flags still win)")
		bufferPool  = fs.String("buffer-pool", "1G", "MariaDB innodb_buffer_pool_size")
		logFileSize = fs.String("log-file-size", "256M", "MariaDB innodb_log_file_size")
		hapThreads  = fs.Int("haproxy-threads", suite.DefaultHAProxySettings.Threads, "HAProxy nbthread")
		hapMaxConn  = fs.Int("haproxy-maxconn", suite.DefaultHAProxySettings.MaxConn, "HAProxy maxconn (global, frontend and server)")
		resultsDir  = fs.String("results", "bench/results", "directory for raw results; each run makes a timestamped directory inside")
		plotsDir    = fs.String("plots", "bench/plots", "directory for the charts BENCHMARKS.md embeds")
		report      = fs.String("report", "BENCHMARKS.md", "report file whose sysbench section is rewritten; empty to leave it alone")
		sysbench    = fs.String("sysbench", "sysbench", "sysbench binary")
		haproxy     = fs.String("haproxy", "haproxy", "haproxy binary")
		startWait   = fs.Duration("start-timeout", 60*time.Second, "how long a proxy may take to accept its first MySQL login")
		root        = fs.String("root", "", "repository root (default: found from the working directory)")
		serverTLS   = fs.Bool("server-tls", false, "MariaDB and obsim accept TLS (self-signed, made for the run), for targets given -o,enable_server_ssl=true")
		extras      listFlag
		obExtras    listFlag
		obgateOpts  listFlag
		binaries    listFlag
	)
	fs.Var(&extras, "target", "extra obgate target `name=arg,arg,...`: another obgate process started with these extra arguments after the standard ones, split at commas (e.g. obgate-net=-o,client_io_mode=net); added to --targets unless that flag is given; repeatable")
	fs.Var(&obExtras, "ob-target", "like --target, for obgate in OceanBase mode in front of obsim (`name=arg,arg,...`); repeatable")
	fs.Var(&binaries, "target-binary", "`name=path`: the target defined with --target or --ob-target runs this obgate binary (relative to the repository root) instead of --obgate, for an interleaved A/B of two builds; repeatable")
	fs.Var(&obgateOpts, "obgate-opt", "extra `key=value` passed as -o to every obgate target; repeatable")
	fs.Usage = func() {
		fmt.Fprintf(fs.Output(), "Usage: sysbench-suite [flags]\n\nRuns sysbench against MariaDB directly, through HAProxy and through obgate,\nand against a simulated OceanBase node directly and through obgate in\nOceanBase mode, then writes bench/results/<timestamp>/, bench/plots/ and\nthe sysbench section of BENCHMARKS.md.\n\nFlags:\n")
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return nil
		}
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("unexpected arguments %q", fs.Args())
	}
	set := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { set[f.Name] = true })
	if *quick {
		if err := suite.DefaultFlags(fs, quickSettings); err != nil {
			return err
		}
	}

	cfg := suite.Config{
		CommandLine:   suite.CommandLine("go run ./bench/cmd/sysbench-suite", args),
		ObgateBin:     *obgateBin,
		ServerTLS:     *serverTLS,
		OBSimBin:      *obsimBin,
		ObgateOpts:    obgateOpts,
		SysbenchBin:   *sysbench,
		HAProxyBin:    *haproxy,
		HAProxy:       suite.HAProxySettings{Threads: *hapThreads, MaxConn: *hapMaxConn},
		Workloads:     suite.SplitList(*workloads),
		Tables:        *tables,
		TableSize:     *tableSize,
		TimeSeconds:   *runTime,
		WarmupSeconds: *warmup,
		Rounds:        *rounds,
		Quick:         *quick,
		ResultsDir:    *resultsDir,
		PlotsDir:      *plotsDir,
		ReportPath:    *report,
		StartTimeout:  *startWait,
		Log:           os.Stderr,
	}
	var err error
	if cfg.Root, err = suite.FindRoot(*root); err != nil {
		return err
	}
	if cfg.Threads, err = suite.ParseInts(*threads); err != nil {
		return fmt.Errorf("--threads: %w", err)
	}
	if cfg.BufferPoolSize, err = suite.ParseSize(*bufferPool); err != nil {
		return fmt.Errorf("--buffer-pool: %w", err)
	}
	if cfg.LogFileSize, err = suite.ParseSize(*logFileSize); err != nil {
		return fmt.Errorf("--log-file-size: %w", err)
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

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	go func() {
		<-ctx.Done()
		stop() // a second Ctrl-C kills at once; children die with us
	}()
	return suite.Run(ctx, cfg)
}
