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
	"errors"
	"os"
	"strings"
	"time"

	"obgate/bench/internal/cli"
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

const about = `Runs sysbench against a three-node simulated OceanBase cluster (obsim) through
obgate with partition routing, obgate with the tenant's server list, HAProxy
round robin and straight to one node, then writes bench/results/routing-<timestamp>/,
bench/plots/routing-*.png and the routing section of BENCHMARKS.md.`

func main() { cli.Main("routing-suite", run) }

func run(args []string) error {
	var cfg suite.RoutingConfig
	fs := cli.NewFlagSet("routing-suite", about)
	shared := suite.AddRunFlags(fs, &cfg.RunConfig, suite.RunDefaults{
		Workloads: "oltp_point_select,oltp_read_write", Threads: "8", Rounds: 3, BufferPool: "256M"})
	targets := fs.String("targets", strings.Join(suite.RoutingTargets, ","), "comma-separated targets, in table order: "+strings.Join(suite.RoutingTargets, ", "))
	fs.DurationVar(&cfg.RemotePlanCost, "remote-plan-cost", time.Millisecond, "what a node adds to every statement it runs as a remote plan (obsim remote_plan_cost); 0 for nothing")
	fs.StringVar(&cfg.IgnoreErrors, "ignore-errors", "none", "sysbench --mysql-ignore-errors: none (any error fails the run), all, or error codes such as 1213,1020,1205")
	fs.BoolVar(&cfg.Quick, "quick", false, "smoke test: 1 table × 1000 rows, 2 s runs, no warm-up, 1 round, deadlocks (1213) ignored (explicit flags still win)")
	fs.IntVar(&cfg.HAProxy.MaxConn, "haproxy-maxconn", suite.DefaultHAProxySettings.MaxConn, "HAProxy maxconn (global, listener and each server)")
	fs.StringVar(&cfg.OBSimBin, "obsim", "bin/obsim", "obsim binary (relative to the repository root)")
	fs.StringVar(&cfg.ResultsDir, "results", "bench/results", "directory for raw results; each run makes routing-<timestamp> inside")
	fs.StringVar(&cfg.ReportPath, "report", "BENCHMARKS.md", "report file whose routing section is rewritten; empty to leave it alone")
	fs.DurationVar(&cfg.StartTimeout, "start-timeout", 60*time.Second, "how long obsim or a proxy may take to start")
	fs.Var((*cli.List)(&cfg.ObgateOpts), "obgate-opt", "extra `key=value` passed as -o to both obgate targets; repeatable")
	if err := cli.Parse(fs, args); err != nil {
		return err
	}
	if cfg.Quick {
		if err := suite.DefaultFlags(fs, quickSettings); err != nil {
			return err
		}
	}
	if cfg.IgnoreErrors == "" {
		return errors.New("--ignore-errors: empty; use none, all or error codes")
	}
	cfg.CommandLine = suite.CommandLine("go run ./bench/cmd/routing-suite", args)
	cfg.Targets = suite.SplitList(*targets)
	cfg.Log = os.Stderr
	if err := shared.Resolve(); err != nil {
		return err
	}

	ctx, stop := cli.SignalContext()
	defer stop()
	return suite.RunRouting(ctx, cfg)
}
