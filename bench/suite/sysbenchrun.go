package suite

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"syscall"
	"time"
)

// sysbenchArgv is the start of every sysbench command of one cell on t:
// script (a workload), the suite's common options, then t's login and
// port and the thread count, without a time.
func sysbenchArgv(bin, script string, common []string, t target, threads int) []string {
	argv := append([]string{bin, script}, common...)
	return append(argv, "--mysql-user="+t.user(), "--mysql-port="+strconv.Itoa(t.Port), "--threads="+strconv.Itoa(threads), "--events=0", "--report-interval=0")
}

// warmUp runs base for seconds, not measured, and returns the command it
// ran; with seconds 0 it runs nothing and returns nil.
func warmUp(ctx context.Context, base []string, seconds int) ([]string, error) {
	if seconds <= 0 {
		return nil, nil
	}
	argv := append(slices.Clone(base), "--time="+strconv.Itoa(seconds), "run")
	if out, err := runCommand(ctx, argv); err != nil {
		return argv, fmt.Errorf("warm-up: %w\n%s", err, tailString(string(out), 10))
	}
	return argv, nil
}

// measuredArgv is the measured run of base: seconds long, with the
// latency histogram and its 95th percentile.
func measuredArgv(base []string, seconds int) []string {
	return append(slices.Clone(base), "--time="+strconv.Itoa(seconds), "--percentile=95", "--histogram=on", "run")
}

// sysbenchStats keeps out, the output of a sysbench run that exited with
// runErr, in rawPath and reads its figures; the error says why the run
// counts as failed.
func sysbenchStats(out []byte, runErr error, rawPath string) (Stats, error) {
	_ = os.WriteFile(rawPath, out, 0o644)
	st, perr := ParseSysbench(out)
	switch {
	case runErr != nil && perr != nil:
		return st, fmt.Errorf("sysbench: %v: %v", runErr, perr)
	case runErr != nil:
		return st, fmt.Errorf("sysbench: %w", runErr)
	case perr != nil:
		return st, perr
	}
	return st, nil
}

// perQuery is d in microseconds per query of queries; NaN for none.
func perQuery(d time.Duration, queries uint64) Num {
	if queries == 0 {
		return NaN
	}
	return Num(d.Seconds() * 1e6 / float64(queries))
}

// cpuTime is the CPU time (user + system) of an exited process; false
// when it did not start.
func cpuTime(ps *os.ProcessState) (time.Duration, bool) {
	if ps == nil {
		return 0, false
	}
	return ps.UserTime() + ps.SystemTime(), true
}

// exitedError says that p has exited, when: before or during the run,
// with the end of its log; nil when p is nil or still running.
func exitedError(p *Process, when string) error {
	if p == nil {
		return nil
	}
	if err := p.ExitError(); err != nil {
		return fmt.Errorf("%v %s\n%s", err, when, tailString(readFile(p.LogPath), 20))
	}
	return nil
}

// runCommand runs argv to completion in its own process group and returns
// its combined output.
func runCommand(ctx context.Context, argv []string) ([]byte, error) {
	out, _, err := runProcess(ctx, argv)
	return out, err
}

// runProcess runs argv to completion in its own process group, killed if
// the suite dies, and returns its combined output and how it exited (nil
// when it did not start).
func runProcess(ctx context.Context, argv []string) ([]byte, *os.ProcessState, error) {
	cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	out, err := cmd.CombinedOutput()
	return out, cmd.ProcessState, err
}
