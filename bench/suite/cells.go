package suite

import "slices"

// CellRounds names a cell, one (workload, threads, target) of a suite
// run, and counts its rounds.
type CellRounds struct {
	Workload string `json:"workload"`
	Threads  int    `json:"threads"`
	Target   string `json:"target"`
	Kind     string `json:"kind"`
	Rounds   int    `json:"rounds"`
	Failed   int    `json:"failed"`
	Error    string `json:"error,omitempty"` // the first failure
}

// rounds returns c; the cell types that embed CellRounds have it too.
func (c CellRounds) rounds() CellRounds { return c }

// findCell returns the cell of (workload, threads, target) in cells, or
// nil.
func findCell[C any, P interface {
	*C
	rounds() CellRounds
}](cells []C, workload string, threads int, target string) *C {
	for i := range cells {
		if c := P(&cells[i]).rounds(); c.Workload == workload && c.Threads == threads && c.Target == target {
			return &cells[i]
		}
	}
	return nil
}

// cellRuns are the runs of one cell.
type cellRuns[R measured] struct {
	CellRounds
	ok []R // the successful runs, in run order
}

// groupCells gathers runs into cells in the order of workloads, threads
// and targets, leaving out the cells without a run.
func groupCells[R measured](runs []R, workloads []string, threads []int, targets []TargetInfo) []cellRuns[R] {
	var cells []cellRuns[R]
	for _, w := range workloads {
		for _, th := range threads {
			for _, t := range targets {
				c := cellRuns[R]{CellRounds: CellRounds{Workload: w, Threads: th, Target: t.Name, Kind: t.Kind}}
				for _, r := range runs {
					if k := r.key(); k.workload != w || k.threads != th || k.target != t.Name {
						continue
					}
					c.Rounds++
					if err := r.failure(); err != "" {
						c.Failed++
						if c.Error == "" {
							c.Error = err
						}
						continue
					}
					c.ok = append(c.ok, r)
				}
				if c.Rounds > 0 {
					cells = append(cells, c)
				}
			}
		}
	}
	return cells
}

// medianOf is the median of figure over runs.
func medianOf[R any](runs []R, figure func(R) Num) Num {
	v := make([]Num, len(runs))
	for i, r := range runs {
		v[i] = figure(r)
	}
	return median(v)
}

// median of the known values; NaN if there are none.
func median(v []Num) Num {
	var ok []float64
	for _, x := range v {
		if x.Valid() {
			ok = append(ok, float64(x))
		}
	}
	if len(ok) == 0 {
		return NaN
	}
	slices.Sort(ok)
	n := len(ok)
	if n%2 == 1 {
		return Num(ok[n/2])
	}
	return Num((ok[n/2-1] + ok[n/2]) / 2)
}
