package mariadbd

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// sysProcAttr puts the server in its own process group, so a Ctrl-C at the
// terminal reaches the test or benchmark (which then stops the server
// cleanly) rather than the server, and asks the kernel to kill the server if
// the thread that started it dies, so a crashed test leaves no daemon behind.
// The caller keeps that thread alive with runtime.LockOSThread for as long as
// the server runs.
func sysProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
}

// lockFile takes an exclusive flock on path, polling so that ctx can cancel
// the wait. The returned function releases it.
func lockFile(ctx context.Context, path string) (func(), error) {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return nil, err
	}
	for {
		err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
		if err == nil {
			return func() {
				_ = syscall.Flock(int(f.Fd()), syscall.LOCK_UN)
				f.Close()
			}, nil
		}
		if !errors.Is(err, syscall.EWOULDBLOCK) && !errors.Is(err, syscall.EINTR) {
			f.Close()
			return nil, err
		}
		select {
		case <-ctx.Done():
			f.Close()
			return nil, context.Cause(ctx)
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// sweepStale removes server directories under os.TempDir() left by processes
// that died without calling Stop (the kernel killed their servers, but the
// files stayed). A directory goes only if its pid file is over a minute old
// and names no live process.
func sweepStale() {
	dirs, _ := filepath.Glob(filepath.Join(os.TempDir(), tempPrefix+"*"))
	for _, d := range dirs {
		pidFile := filepath.Join(d, "mariadbd.pid")
		st, err := os.Stat(pidFile)
		if err != nil || time.Since(st.ModTime()) < time.Minute {
			continue
		}
		b, err := os.ReadFile(pidFile)
		if err != nil {
			continue
		}
		pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
		if err != nil || pid <= 0 {
			continue
		}
		if err := syscall.Kill(pid, 0); errors.Is(err, syscall.ESRCH) {
			_ = os.RemoveAll(d)
		}
	}
}
