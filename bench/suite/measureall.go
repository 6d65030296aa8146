package suite

import "context"

// measureAll measures every cell of cfg, one (workload, threads, target),
// in each of its rounds, in the suites' order: workloads, then thread
// counts, then rounds, each round running every target once. The targets'
// order rotates by one from round to round and cell to cell, so that no
// target always runs first or right after the same other one. record gets
// each run with the number of runs so far and the total.
//
// It returns the first error of record, and ctx's cause once ctx is
// cancelled, without recording the run it cut short.
func measureAll[R any](ctx context.Context, cfg RunConfig, targets []target,
	measure func(t target, workload string, threads, round int) R, record func(r R, n, total int) error) error {
	total := len(cfg.Workloads) * len(cfg.Threads) * cfg.Rounds * len(targets)
	n, turn := 0, 0
	for _, w := range cfg.Workloads {
		for _, th := range cfg.Threads {
			for round := 1; round <= cfg.Rounds; round++ {
				for k := range targets {
					t := targets[(k+turn)%len(targets)]
					if err := ctx.Err(); err != nil {
						return context.Cause(ctx)
					}
					r := measure(t, w, th, round)
					if err := ctx.Err(); err != nil {
						return context.Cause(ctx)
					}
					n++
					if err := record(r, n, total); err != nil {
						return err
					}
				}
				turn++
			}
		}
	}
	return nil
}
