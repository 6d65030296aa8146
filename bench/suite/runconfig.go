package suite

import (
	"errors"
	"fmt"
	"io"
	"time"
)

// RunConfig is what the configurations of both sysbench suites (Config,
// RoutingConfig) hold: where the repository and the programs are, what
// sysbench runs, MariaDB's sizes and where the results go.
type RunConfig struct {
	Root        string   // repository root; relative paths below are under it
	CommandLine string   // recorded in the report
	Targets     []string // names to run, in table order
	ObgateBin   string
	OBSimBin    string
	SysbenchBin string
	HAProxyBin  string
	ObgateOpts  []string // extra "-o" values for every obgate target
	HAProxy     HAProxySettings

	Workloads     []string
	Threads       []int
	Tables        int
	TableSize     int
	TimeSeconds   int
	WarmupSeconds int
	Rounds        int
	Quick         bool

	BufferPoolSize int64
	LogFileSize    int64

	ResultsDir string // each run makes a directory of its own inside
	PlotsDir   string // stable copies of the charts
	ReportPath string // BENCHMARKS.md; empty: do not update it

	StartTimeout time.Duration // per process start
	Log          io.Writer     // progress lines
}

func (cfg RunConfig) abs(p string) string { return underRoot(cfg.Root, p) }

// checkRun gives Rounds and StartTimeout their defaults and checks what
// every run needs: targets, workloads and thread counts to run, tables,
// rows and a measured time.
func (cfg *RunConfig) checkRun() error {
	if cfg.Rounds < 1 {
		cfg.Rounds = 1
	}
	if cfg.StartTimeout <= 0 {
		cfg.StartTimeout = 60 * time.Second
	}
	if len(cfg.Targets) == 0 || len(cfg.Workloads) == 0 || len(cfg.Threads) == 0 {
		return errors.New("nothing to run: targets, workloads and threads must not be empty")
	}
	if cfg.Tables < 1 || cfg.TableSize < 1 || cfg.TimeSeconds < 1 || cfg.WarmupSeconds < 0 {
		return errors.New("tables, table size and time must be at least 1, warm-up at least 0")
	}
	return nil
}

// checkThreads refuses a thread count below one.
func (cfg *RunConfig) checkThreads() error {
	for _, th := range cfg.Threads {
		if th < 1 {
			return fmt.Errorf("bad thread count %d", th)
		}
	}
	return nil
}

// checkTargets returns the set of Targets after checking that each is
// named once and known: kind returns "" for a name that is not, and known
// lists the names in the error.
func (cfg *RunConfig) checkTargets(kind func(string) string, known string) (map[string]bool, error) {
	seen := map[string]bool{}
	for _, name := range cfg.Targets {
		if seen[name] {
			return nil, fmt.Errorf("target %q listed twice", name)
		}
		seen[name] = true
		if kind(name) == "" {
			return nil, fmt.Errorf("unknown target %q (known: %s)", name, known)
		}
	}
	return seen, nil
}
