// Command memory-suite measures what obgate costs in memory, with both
// client I/O modes and with HAProxy (TCP mode) as the reference:
//
//   - slow client: MariaDB streams a large result (1 GiB by default) to a
//     client that reads a little, stops reading for a while, then drains
//     the rest; the proxy's RSS is sampled throughout;
//   - idle connections: thousands of logged-in connections sit idle; the
//     proxy's RSS and goroutines per connection are read.
//
// It writes raw JSON under bench/results/<timestamp>-memory/ and rewrites
// the memory section of BENCHMARKS.md.
//
//	go run ./bench/cmd/memory-suite --help
//	go run ./bench/cmd/memory-suite --quick
package main

import (
	"errors"
	"fmt"
	"os"
	"strings"
	"time"

	"obgate/bench/internal/cli"
	"obgate/bench/suite"
)

// quickSettings replace the defaults of flags not given explicitly when
// --quick is set: the whole pipeline in well under a minute.
var quickSettings = map[string]string{
	"rows":  "65536",
	"stall": "2s",
	"idle":  "500",
}

const about = `Measures obgate's RSS while a slow client holds up a large result, and its
RSS and goroutines per idle connection, for client_io_mode netpoll and net,
with HAProxy as the reference; writes bench/results/<timestamp>-memory/ and
the memory section of BENCHMARKS.md.`

func main() { cli.Main("memory-suite", run) }

func run(args []string) error {
	cfg, err := parseFlags(args)
	if err != nil {
		return err
	}
	ctx, stop := cli.SignalContext()
	defer stop()
	return runSuite(ctx, cfg)
}

func parseFlags(args []string) (config, error) {
	fs := cli.NewFlagSet("memory-suite", about)
	var (
		targets     = fs.String("targets", strings.Join(allTargets, ","), "comma-separated targets: "+strings.Join(allTargets, ", "))
		obgateBin   = fs.String("obgate", "bin/obgate", "obgate binary (relative to the repository root)")
		haproxyBin  = fs.String("haproxy", "haproxy", "haproxy binary")
		rows        = fs.Int("rows", 1<<20, "rows of the streamed result")
		rowLen      = fs.Int("row-len", 1024, "bytes per row of the streamed result")
		readFirst   = fs.String("read-first", "1M", "response bytes the slow client reads before it stalls")
		stall       = fs.Duration("stall", 5*time.Second, "how long the slow client stops reading")
		rcvBuf      = fs.String("rcvbuf", "64K", "SO_RCVBUF of the slow client's socket")
		interval    = fs.Duration("interval", 100*time.Millisecond, "RSS sampling period")
		idle        = fs.Int("idle", 5000, "idle connections to hold")
		concurrency = fs.Int("concurrency", 32, "logins in flight while opening the idle connections")
		sample      = fs.Int("sample", 100, "idle connections that must answer SELECT 1 again before they are closed")
		settle      = fs.Duration("settle", time.Second, "pause before each idle-connection RSS reading")
		hapThreads  = fs.Int("haproxy-threads", suite.DefaultHAProxySettings.Threads, "HAProxy nbthread")
		limit       = fs.String("limit", "64M", "the acceptance bound on obgate's RSS growth during the stall")
		quick       = fs.Bool("quick", false, "smoke test: a 64 MiB result, a 2 s stall, 500 idle connections (explicit flags still win)")
		resultsDir  = fs.String("results", "bench/results", "directory for raw results; each run makes a <timestamp>-memory directory inside")
		report      = fs.String("report", "BENCHMARKS.md", "report file whose memory section is rewritten; empty to leave it alone")
		root        = fs.String("root", "", "repository root (default: found from the working directory)")
	)
	if err := cli.Parse(fs, args); err != nil {
		return config{}, err
	}
	if *quick {
		if err := suite.DefaultFlags(fs, quickSettings); err != nil {
			return config{}, err
		}
	}
	cfg := config{
		CommandLine: suite.CommandLine("go run ./bench/cmd/memory-suite", args),
		ObgateBin:   *obgateBin,
		HAProxyBin:  *haproxyBin,
		Settings: Settings{
			Quick: *quick, Rows: *rows, RowLen: *rowLen, Stall: *stall, Interval: *interval,
			Idle: *idle, Concurrency: *concurrency, Sample: *sample, Settle: *settle,
			HAProxy: suite.HAProxySettings{Threads: *hapThreads, MaxConn: *idle + 2**concurrency + 100},
		},
		ResultsDir: *resultsDir,
		ReportPath: *report,
		Log:        os.Stderr,
	}
	var err error
	if cfg.Root, err = suite.FindRoot(*root); err != nil {
		return cfg, err
	}
	if cfg.Settings.ReadFirst, err = suite.ParseSize(*readFirst); err != nil {
		return cfg, fmt.Errorf("--read-first: %w", err)
	}
	rb, err := suite.ParseSize(*rcvBuf)
	if err != nil {
		return cfg, fmt.Errorf("--rcvbuf: %w", err)
	}
	cfg.Settings.RcvBuf = int(rb)
	if cfg.Settings.Limit, err = suite.ParseSize(*limit); err != nil {
		return cfg, fmt.Errorf("--limit: %w", err)
	}
	for _, name := range strings.Split(*targets, ",") {
		if name = strings.TrimSpace(name); name == "" {
			continue
		}
		if kindOf(name) == "" {
			return cfg, fmt.Errorf("unknown target %q (known: %s)", name, strings.Join(allTargets, ", "))
		}
		cfg.Targets = append(cfg.Targets, name)
	}
	s := cfg.Settings
	switch {
	case len(cfg.Targets) == 0:
		return cfg, errors.New("no targets")
	case s.Rows < 1 || s.RowLen < 1 || s.RowLen > 16<<10:
		return cfg, errors.New("--rows must be at least 1 and --row-len between 1 and 16384")
	case s.Idle < 1 || s.Concurrency < 1 || s.Sample < 0 || s.Interval <= 0:
		return cfg, errors.New("--idle, --concurrency and --interval must be positive, --sample at least 0")
	}
	return cfg, nil
}
