package suite

import (
	"fmt"
	"path/filepath"
)

// runKey names one measured run of a suite: a workload at a thread count
// on a target, in one round.
type runKey struct {
	workload string
	threads  int
	target   string
	round    int
}

// measured is what the suites' code common to both kinds of measured run
// (Measurement, RoutingRun) needs of one.
type measured interface {
	key() runKey
	failure() string // the error; empty when the run succeeded
}

func (r Measurement) key() runKey     { return runKey{r.Workload, r.Threads, r.Target, r.Round} }
func (r Measurement) failure() string { return r.Error }
func (r RoutingRun) key() runKey      { return runKey{r.Workload, r.Threads, r.Target, r.Round} }
func (r RoutingRun) failure() string  { return r.Error }

// name is the run's part of its file names, e.g.
// "oltp_read_write-t008-obgate-r1".
func (k runKey) name() string {
	return fmt.Sprintf("%s-t%03d-%s-r%d", k.workload, k.threads, k.target, k.round)
}

// jsonFile is the base name of the run's file in the results' runs
// directory.
func (k runKey) jsonFile() string { return k.name() + ".json" }

// rawFile is where sysbench's output of the run is kept, relative to the
// results directory, with forward slashes.
func (k runKey) rawFile() string { return filepath.ToSlash(filepath.Join("raw", k.name()+".txt")) }

// countFailures counts the runs that failed.
func countFailures[R measured](runs []R) int {
	n := 0
	for _, r := range runs {
		if r.failure() != "" {
			n++
		}
	}
	return n
}
