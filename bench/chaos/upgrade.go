package chaos

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"syscall"
	"time"

	"obgate/bench/suite"
)

// The upgrade scenarios: three upgrades in a row under the load, each to
// another build. obgate gets SIGUSR2 (hot upgrade, committed by itself
// once the new process serves), which hands every session over to the
// new process; HAProxy, the reference in mysql routing mode, is reloaded
// the way its users do it (a new process with -sf: the old one stops
// listening and serves its open connections until they close).

// upgradeCount is how many upgrades a scenario runs.
const upgradeCount = 3

// prepareUpgrades builds the obgate versions the scenario upgrades to,
// from the repository (Settings.Root), into the run's directory, and
// copies the first to the path obgate will run from, which the upgrades
// then replace. Without a repository the builds are copies of the same
// binary, which the result notes.
func (r *run) prepareUpgrades(ctx context.Context) (string, error) {
	dir := filepath.Join(r.dir, "builds")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", err
	}
	exe := filepath.Join(r.dir, "obgate")
	if err := copyExecutable(r.set.Obgate, exe); err != nil {
		return "", err
	}
	var builds []string
	tree := ""
	if r.set.Root != "" {
		tree = treeVersion(ctx, r.set.Root)
	}
	for i := range upgradeCount {
		out := filepath.Join(dir, fmt.Sprintf("obgate-%d", i+1))
		if r.set.Root == "" {
			if err := copyExecutable(r.set.Obgate, out); err != nil {
				return "", err
			}
		} else {
			version := fmt.Sprintf("%s-upgrade-%d", tree, i+1)
			cmd := exec.CommandContext(ctx, "go", "build", "-ldflags", "-X main.version="+version, "-o", out, "./cmd/obgate")
			cmd.Dir = r.set.Root
			if msg, err := cmd.CombinedOutput(); err != nil {
				return "", fmt.Errorf("build %s: %v: %s", version, err, bytes.TrimSpace(msg))
			}
		}
		builds = append(builds, out)
	}
	if r.set.Root == "" {
		r.res.Notes = append(r.res.Notes, "no repository given: the upgrades are to copies of the same build")
	} else {
		r.res.Notes = append(r.res.Notes, fmt.Sprintf("upgrades to builds of the working tree at %s: %s-upgrade-1..%d", r.set.Root, tree, upgradeCount))
	}
	r.extra["builds"] = builds
	return exe, nil
}

// treeVersion names the working tree the builds come from: its commit,
// "-dirty" when it has changes.
func treeVersion(ctx context.Context, root string) string {
	out, err := exec.CommandContext(ctx, "git", "-C", root, "rev-parse", "--short", "HEAD").Output()
	if err != nil {
		return "unknown"
	}
	v := string(bytes.TrimSpace(out))
	if st, err := exec.CommandContext(ctx, "git", "-C", root, "status", "--porcelain", "--untracked-files=no").Output(); err != nil || len(bytes.TrimSpace(st)) > 0 {
		v += "-dirty"
	}
	return v
}

func copyExecutable(src, dst string) error {
	b, err := os.ReadFile(src)
	if err != nil {
		return err
	}
	tmp := dst + ".tmp"
	if err := os.WriteFile(tmp, b, 0o755); err != nil {
		return err
	}
	return os.Rename(tmp, dst)
}

// playUpgrades runs the upgrades of the target, a warm-up apart and
// after each the time for the sessions to settle.
func playUpgrades(ctx context.Context, r *run) error {
	gap := r.set.phase(5*time.Second, 2*time.Second)
	if err := sleepCtx(ctx, r.warm()); err != nil {
		return err
	}
	for i := range upgradeCount {
		var err error
		if r.proxy.Kind == "obgate" {
			err = r.upgradeObgate(ctx, i)
		} else {
			err = r.reloadHAProxy(ctx, i)
		}
		if err != nil {
			return err
		}
		if err := sleepCtx(ctx, gap); err != nil {
			return err
		}
	}
	// Still under load: which processes serve besides the newest.
	r.extra["older alive"] = r.olderAlive()
	return nil
}

// olderAlive counts the processes before the newest that still run: for
// obgate the first (the others were waited for), for HAProxy the first
// and every reload but the last.
func (r *run) olderAlive() int {
	alive := func(p *suite.Process) int {
		select {
		case <-p.Exited():
			return 0
		default:
			return 1
		}
	}
	n := alive(r.proxy.Proc)
	if k := len(r.proxy.Older); k > 0 {
		for _, p := range r.proxy.Older[:k-1] {
			n += alive(p)
		}
	}
	return n
}

var upgradePIDRe = regexp.MustCompile(`\bpid:(\d+)`)

// upgradeObgate moves build i to obgate's path, sends SIGUSR2 to the
// serving process and waits until it exited (every session handed over
// or drained) and the new one answers; the new pid becomes the proxy's.
func (r *run) upgradeObgate(ctx context.Context, i int) error {
	builds, _ := r.extra["builds"].([]string)
	if i >= len(builds) {
		return errors.New("no build to upgrade to")
	}
	exe := r.proxy.Argv[0]
	if err := os.Rename(builds[i], exe); err != nil {
		return err
	}
	old := r.proxy.servingPID()
	started := time.Now()
	if err := r.upgradeEvent(fmt.Sprintf("upgrade %d (SIGUSR2 to %d)", i+1, old), func() error {
		return syscall.Kill(old, syscall.SIGUSR2)
	}); err != nil {
		return err
	}
	if err := waitPIDGone(ctx, old, 90*time.Second); err != nil {
		return fmt.Errorf("upgrade %d: the old process: %w", i+1, err)
	}
	r.event("note", fmt.Sprintf("upgrade %d: old process gone after %.1fs", i+1, time.Since(started).Seconds()))
	pid, err := r.newestPID(ctx)
	if err != nil {
		return fmt.Errorf("upgrade %d: %w", i+1, err)
	}
	if pid == old {
		return fmt.Errorf("upgrade %d: process %d still serves", i+1, pid)
	}
	r.proxy.Newest = pid
	r.extra["upgrades"] = i + 1
	return nil
}

func (r *run) upgradeEvent(what string, f func() error) error {
	if err := f(); err != nil {
		return fmt.Errorf("%s: %w", what, err)
	}
	r.event("upgrade", what)
	return nil
}

// newestPID asks the process serving the proxy's port for its pid.
func (r *run) newestPID(ctx context.Context) (int, error) {
	deadline := time.Now().Add(30 * time.Second)
	for {
		a, err := openAdmin(r.proxy)
		if err == nil {
			var name, info string
			cctx, cancel := context.WithTimeout(ctx, 5*time.Second)
			err = a.db.QueryRowContext(cctx, "SHOW PROXYINFO UPGRADE").Scan(&name, &info)
			cancel()
			a.Close()
			if m := upgradePIDRe.FindStringSubmatch(info); err == nil && m != nil {
				return strconv.Atoi(m[1])
			}
			if err == nil {
				err = fmt.Errorf("no pid in %q", info)
			}
		}
		if time.Now().After(deadline) {
			return 0, fmt.Errorf("SHOW PROXYINFO UPGRADE: %w", err)
		}
		if err := sleepCtx(ctx, 100*time.Millisecond); err != nil {
			return 0, err
		}
	}
}

// reloadHAProxy starts a new HAProxy with -sf naming the serving one:
// the old process stops listening and keeps its open connections.
func (r *run) reloadHAProxy(ctx context.Context, i int) error {
	old := r.proxy.servingPID()
	argv := append(append([]string(nil), r.proxy.Argv...), "-sf", strconv.Itoa(old))
	var proc *suite.Process
	if err := r.upgradeEvent(fmt.Sprintf("reload %d (haproxy -sf %d)", i+1, old), func() error {
		var err error
		proc, err = suite.StartProcess("haproxy", filepath.Join(r.dir, "haproxy.log"), argv...)
		return err
	}); err != nil {
		return err
	}
	r.proxy.Older = append(r.proxy.Older, proc)
	r.proxy.Newest = proc.PID()
	r.extra["upgrades"] = i + 1
	return suite.WaitLogin(ctx, "haproxy", r.proxy.Port, "root", proc, 30*time.Second)
}

// waitPIDGone waits until pid has exited (a zombie counts as gone).
func waitPIDGone(ctx context.Context, pid int, limit time.Duration) error {
	deadline := time.Now().Add(limit)
	for {
		b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
		if err != nil || zombie(b) {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("process %d still running after %v", pid, limit)
		}
		if err := sleepCtx(ctx, 20*time.Millisecond); err != nil {
			return err
		}
	}
}

// zombie reads the state field of /proc/pid/stat.
func zombie(stat []byte) bool {
	if i := bytes.LastIndexByte(stat, ')'); i >= 0 && i+2 < len(stat) {
		return stat[i+2] == 'Z'
	}
	return false
}

// judgeUpgrades: the clients saw nothing of the upgrades.
func judgeUpgrades(r *run) {
	n, _ := r.extra["upgrades"].(int)
	r.check("upgrades done", n == upgradeCount, "%d of %d upgrades completed", n, upgradeCount)
	r.checkNoReadErrors()
	r.checkNoWriteErrors()
	l := r.res.Load
	r.check("no reconnects", l.Reconnects == 0, "%d connections opened beyond one per client", l.Reconnects)
	older, _ := r.extra["older alive"].(int)
	what := "each old obgate exited once its sessions were handed over"
	if r.proxy.Kind != "obgate" {
		what = "a reload leaves the open connections on the old HAProxy processes, which exit when those close"
	}
	r.check("newest process serves all", n == upgradeCount && older == 0,
		"%d older processes still served at the end of the load (%s)", older, what)
	r.checkLedger()
	r.checkLeak()
}
