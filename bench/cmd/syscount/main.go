// Command syscount counts obgate's system calls per statement under
// sysbench, in mysql mode (in front of MariaDB) and in OceanBase mode (in
// front of a one-node obsim cluster on the same MariaDB), and prints them
// side by side by name:
//
//	make build && go run ./bench/cmd/syscount
//	go run ./bench/cmd/syscount --counter perf --events 20000 --threads 8
//
// It counts; it does not time anything, so it may run on a busy machine.
// With --counter strace (the default) every call of every obgate thread is
// counted by name, but strace slows obgate down, which changes how often
// its threads sleep and wake (futex, epoll_pwait, nanosleep); --counter perf
// counts in the kernel without slowing it and names the calls in
// suite.PerfSyscallNames (the rest shows as "(other)").
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"syscall"

	"obgate/bench/internal/cli"
	"obgate/bench/suite"
)

func main() { cli.Main("syscount", run) }

func run(args []string) error {
	fs := flag.NewFlagSet("syscount", flag.ContinueOnError)
	var (
		modes      = fs.String("modes", suite.ModeMySQL+","+suite.ModeOceanBase, "comma-separated routing modes: mysql, oceanbase")
		workload   = fs.String("workload", "oltp_point_select", "sysbench workload")
		events     = fs.Int("events", 20000, "sysbench events counted per mode (--events)")
		warmup     = fs.Int("warmup", 2000, "sysbench events run before counting starts")
		threads    = fs.Int("threads", 8, "sysbench --threads")
		tableSize  = fs.Int("table-size", 10000, "rows of the one sysbench table")
		counter    = fs.String("counter", suite.CounterStrace, "how to count: strace (every call by name; slows obgate) or perf (kernel counters)")
		obgateBin  = fs.String("obgate", "bin/obgate", "obgate binary (relative to the repository root)")
		obsimBin   = fs.String("obsim", "bin/obsim", "obsim binary (relative to the repository root)")
		sysbench   = fs.String("sysbench", "sysbench", "sysbench binary")
		dir        = fs.String("dir", "", "directory for logs and raw counter output (default: a new temporary directory)")
		jsonOut    = fs.String("json", "", "also write the results as JSON to this file")
		root       = fs.String("root", "", "repository root (default: found from the working directory)")
		obgateOpts cli.List
	)
	fs.Var(&obgateOpts, "obgate-opt", "extra `key=value` passed as -o to obgate; repeatable")
	if err := cli.Parse(fs, args); err != nil {
		return err
	}
	cfg := suite.SyscountConfig{
		ObgateBin: *obgateBin, OBSimBin: *obsimBin, SysbenchBin: *sysbench, ObgateOpts: obgateOpts,
		Workload: *workload, Events: *events, Warmup: *warmup, Threads: *threads, TableSize: *tableSize,
		Counter: *counter, Dir: *dir, Log: os.Stderr,
	}
	cfg.Modes = suite.SplitList(*modes)
	var err error
	if cfg.Root, err = suite.FindRoot(*root); err != nil {
		return err
	}
	if cfg.Dir == "" {
		if cfg.Dir, err = os.MkdirTemp("", "syscount-"); err != nil {
			return err
		}
	} else if cfg.Dir, err = filepath.Abs(cfg.Dir); err != nil {
		return err
	}
	fmt.Fprintf(os.Stderr, "logs and raw counts: %s\n", cfg.Dir)
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	results, err := suite.CountSyscalls(ctx, cfg)
	if len(results) > 0 {
		fmt.Printf("obgate system calls per statement (%s, %s, %d threads, counted with %s)\n\n%s",
			*workload, fmt.Sprint(*events)+" events", *threads, *counter, suite.FormatSyscounts(results))
		if *jsonOut != "" {
			if werr := suite.WriteJSON(*jsonOut, results); werr != nil && err == nil {
				err = werr
			}
		}
	}
	return err
}
