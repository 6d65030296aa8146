// Command routing-suite shows what partition routing buys against a
// simulated OceanBase cluster (obsim, three zones) whose remote plans cost
// an internal round trip: it runs sysbench through obgate routing by
// partition, through obgate picking a random server of the tenant,
// through HAProxy round robin over the nodes and straight to one node,
// counts with obsim where every statement ran, and writes the results, a
// chart per workload and the routing section of BENCHMARKS.md.
//
//	go run ./bench/cmd/routing-suite --help
//	go run ./bench/cmd/routing-suite --quick --report ''
//
// See bench/README.md ("routing suite") for what the numbers mean.
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
// --quick is set: enough to check the whole pipeline in well under a
// minute. Eight threads on one table of 1000 rows deadlock within seconds
// in oltp_read_write (sysbench's hot rows are 1% of the table), so a smoke
// run tolerates deadlocks (1213), and counts them; any other error still
// fails the run.
var quickSettings = map[string]string{
	"ignore-errors": "1213",
	"tables":        "1",
	"table-size":    "1000",
	"time":          "2",
	"warmup":        "0",
	"rounds":        "1",
	"log-file-size": "48M",
}

type listFlag []string

func (l *listFlag) String() string     { return strings.Join(*l, " ") }
func (l *listFlag) Set(s string) error { *l = append(*l, s); return nil }

func main() {
	if err := run(os.Args[1:]); err != nil {
		fmt.Fprintln(os.Stderr, "routing-suite:", err)
		os.Exit(1)
	}
}

func run(args []string) error {
	fs := flag.NewFlagSet("routing-suite", flag.ContinueOnError)
	var (
		targets      = fs.String("targets", strings.Join(suite.RoutingTargets, ","), "comma-separated targets, in table order: "+strings.Join(suite.RoutingTargets, ", "))
		workloads    = fs.String("workloads", "oltp_point_select,oltp_read_write", "comma-separated sysbench workloads")
		threads      = fs.String("threads", "8", "comma-separated sysbench thread counts")
		tables       = fs.Int("tables", 8, "sysbench --tables")
		tableSize    = fs.Int("table-size", 10000, "sysbench --table-size (rows per table)")
		runTime      = fs.Int("time", 20, "seconds per measured run")
		warmup       = fs.Int("warmup", 5, "seconds of warm-up (a separate sysbench run, not measured) before each measured run; 0 for none")
		rounds       = fs.Int("rounds", 3, "measured runs per (workload, threads, target); the report shows medians")
		remoteCost   = fs.Duration("remote-plan-cost", time.Millisecond, "what a node adds to every statement it runs as a remote plan (obsim remote_plan_cost); 0 for nothing")
		ignoreErrors = fs.String("ignore-errors", "none", "sysbench --mysql-ignore-errors: none (any error fails the run), all, or error codes such as 1213,1020,1205")
		quick        = fs.Bool("quick", false, "smoke test: 1 table × 1000 rows, 2 s runs, no warm-up, 1 round, deadlocks (1213) ignored (explicit flags still win)")
		bufferPool   = fs.String("buffer-pool", "256M", "MariaDB innodb_buffer_pool_size")
		logFileSize  = fs.String("log-file-size", "256M", "MariaDB innodb_log_file_size")
		hapThreads   = fs.Int("haproxy-threads", suite.DefaultHAProxySettings.Threads, "HAProxy nbthread")
		hapMaxConn   = fs.Int("haproxy-maxconn", suite.DefaultHAProxySettings.MaxConn, "HAProxy maxconn (global, listener and each server)")
		obgateBin    = fs.String("obgate", "bin/obgate", "obgate binary (relative to the repository root)")
		obsimBin     = fs.String("obsim", "bin/obsim", "obsim binary (relative to the repository root)")
		sysbench     = fs.String("sysbench", "sysbench", "sysbench binary")
		haproxy      = fs.String("haproxy", "haproxy", "haproxy binary")
		resultsDir   = fs.String("results", "bench/results", "directory for raw results; each run makes routing-<timestamp> inside")
		plotsDir     = fs.String("plots", "bench/plots", "directory for the charts BENCHMARKS.md embeds")
		report       = fs.String("report", "BENCHMARKS.md", "report file whose routing section is rewritten; empty to leave it alone")
		startWait    = fs.Duration("start-timeout", 60*time.Second, "how long obsim or a proxy may take to start")
		root         = fs.String("root", "", "repository root (default: found from the working directory)")
		obgateOpts   listFlag
	)
	fs.Var(&obgateOpts, "obgate-opt", "extra `key=value` passed as -o to both obgate targets; repeatable")
	fs.Usage = func() {
		fmt.Fprintf(fs.Output(), "Usage: routing-suite [flags]\n\nRuns sysbench against a three-node simulated OceanBase cluster (obsim) through\nobgate with partition routing, obgate with the tenant's server list, HAProxy\nround robin and straight to one node, then writes bench/results/routing-<timestamp>/,\nbench/plots/routing-*.png and the routing section of BENCHMARKS.md.\n\nFlags:\n")
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
	if *quick {
		if err := suite.DefaultFlags(fs, quickSettings); err != nil {
			return err
		}
	}
	if *ignoreErrors == "" {
		return errors.New("--ignore-errors: empty; use none, all or error codes")
	}

	cfg := suite.RoutingConfig{
		CommandLine:    suite.CommandLine("go run ./bench/cmd/routing-suite", args),
		Targets:        suite.SplitList(*targets),
		ObgateBin:      *obgateBin,
		OBSimBin:       *obsimBin,
		SysbenchBin:    *sysbench,
		HAProxyBin:     *haproxy,
		ObgateOpts:     obgateOpts,
		HAProxy:        suite.HAProxySettings{Threads: *hapThreads, MaxConn: *hapMaxConn},
		Workloads:      suite.SplitList(*workloads),
		Tables:         *tables,
		TableSize:      *tableSize,
		TimeSeconds:    *runTime,
		WarmupSeconds:  *warmup,
		Rounds:         *rounds,
		Quick:          *quick,
		RemotePlanCost: *remoteCost,
		IgnoreErrors:   *ignoreErrors,
		ResultsDir:     *resultsDir,
		PlotsDir:       *plotsDir,
		ReportPath:     *report,
		StartTimeout:   *startWait,
		Log:            os.Stderr,
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

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	go func() {
		<-ctx.Done()
		stop() // a second Ctrl-C kills at once; children die with us
	}()
	return suite.RunRouting(ctx, cfg)
}
