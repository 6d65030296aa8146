package suite

import (
	"flag"
	"fmt"
)

// RunDefaults are the defaults that differ between the suites' shared
// flags (AddRunFlags).
type RunDefaults struct {
	Workloads  string // --workloads, comma-separated
	Threads    string // --threads, comma-separated
	Rounds     int    // --rounds
	BufferPool string // --buffer-pool, a size such as 1G
}

// RunFlags are the flags that sysbench-suite and routing-suite take with
// the same meaning: the sysbench parameters, MariaDB's sizes, the programs
// and the directories.
type RunFlags struct {
	cfg                                               *RunConfig
	workloads, threads, bufferPool, logFileSize, root string
}

// AddRunFlags defines the shared flags on fs. The plain values go into
// cfg as fs parses them; Resolve reads the rest once fs has parsed.
func AddRunFlags(fs *flag.FlagSet, cfg *RunConfig, d RunDefaults) *RunFlags {
	f := &RunFlags{cfg: cfg}
	fs.StringVar(&f.workloads, "workloads", d.Workloads, "comma-separated sysbench workloads")
	fs.StringVar(&f.threads, "threads", d.Threads, "comma-separated sysbench thread counts")
	fs.IntVar(&cfg.Tables, "tables", 8, "sysbench --tables")
	fs.IntVar(&cfg.TableSize, "table-size", 10000, "sysbench --table-size (rows per table)")
	fs.IntVar(&cfg.TimeSeconds, "time", 20, "seconds per measured run")
	fs.IntVar(&cfg.WarmupSeconds, "warmup", 5, "seconds of warm-up (a separate sysbench run, not measured) before each measured run; 0 for none")
	fs.IntVar(&cfg.Rounds, "rounds", d.Rounds, "measured runs per (workload, threads, target); the report shows medians")
	fs.StringVar(&f.bufferPool, "buffer-pool", d.BufferPool, "MariaDB innodb_buffer_pool_size")
	fs.StringVar(&f.logFileSize, "log-file-size", "256M", "MariaDB innodb_log_file_size")
	fs.IntVar(&cfg.HAProxy.Threads, "haproxy-threads", DefaultHAProxySettings.Threads, "HAProxy nbthread")
	fs.StringVar(&cfg.ObgateBin, "obgate", "bin/obgate", "obgate binary (relative to the repository root)")
	fs.StringVar(&cfg.SysbenchBin, "sysbench", "sysbench", "sysbench binary")
	fs.StringVar(&cfg.HAProxyBin, "haproxy", "haproxy", "haproxy binary")
	fs.StringVar(&cfg.PlotsDir, "plots", "bench/plots", "directory for the charts BENCHMARKS.md embeds")
	fs.StringVar(&f.root, "root", "", "repository root (default: found from the working directory)")
	return f
}

// Resolve completes the configuration from the parsed flags: the
// workloads split, the repository root found, the thread counts and sizes
// read.
func (f *RunFlags) Resolve() error {
	var err error
	f.cfg.Workloads = SplitList(f.workloads)
	if f.cfg.Root, err = FindRoot(f.root); err != nil {
		return err
	}
	if f.cfg.Threads, err = ParseInts(f.threads); err != nil {
		return fmt.Errorf("--threads: %w", err)
	}
	if f.cfg.BufferPoolSize, err = ParseSize(f.bufferPool); err != nil {
		return fmt.Errorf("--buffer-pool: %w", err)
	}
	if f.cfg.LogFileSize, err = ParseSize(f.logFileSize); err != nil {
		return fmt.Errorf("--log-file-size: %w", err)
	}
	return nil
}
