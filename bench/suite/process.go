package suite

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"syscall"
	"time"
)

// Process is a long-running child (HAProxy, obgate) whose output goes to a
// log file.
type Process struct {
	Name    string
	Args    []string
	LogPath string

	cmd     *exec.Cmd
	exited  chan struct{}
	waitErr error // valid once exited is closed
	stopped bool
}

// StartProcess starts argv with stdout and stderr appended to logPath. The
// child gets its own process group (a Ctrl-C reaches only the suite, which
// then stops the child in order) and is killed by the kernel if the suite
// dies without stopping it.
func StartProcess(name, logPath string, argv ...string) (*Process, error) {
	logf, err := os.OpenFile(logPath, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o644)
	if err != nil {
		return nil, err
	}
	defer logf.Close() // the child keeps its own descriptor
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Stdout = logf
	cmd.Stderr = logf
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	p := &Process{Name: name, Args: argv, LogPath: logPath, cmd: cmd, exited: make(chan struct{})}
	started := make(chan error, 1)
	go func() {
		// Pdeathsig fires when the thread that forked the child exits, so
		// that thread stays locked to this goroutine until the child is
		// reaped.
		runtime.LockOSThread()
		if err := cmd.Start(); err != nil {
			started <- err
			return
		}
		started <- nil
		p.waitErr = cmd.Wait()
		close(p.exited)
	}()
	if err := <-started; err != nil {
		return nil, fmt.Errorf("starting %s: %w", name, err)
	}
	return p, nil
}

// PID returns the child's process id.
func (p *Process) PID() int { return p.cmd.Process.Pid }

// Exited is closed once the child has exited.
func (p *Process) Exited() <-chan struct{} { return p.exited }

// ExitError describes how the child ended; nil while it runs.
func (p *Process) ExitError() error {
	select {
	case <-p.exited:
		if p.waitErr == nil {
			return fmt.Errorf("%s exited with status 0", p.Name)
		}
		return fmt.Errorf("%s: %w", p.Name, p.waitErr)
	default:
		return nil
	}
}

// Stop sends SIGTERM, waits up to timeout, then sends SIGKILL. It reports
// an error if the child had died on its own or had to be killed.
func (p *Process) Stop(timeout time.Duration) error {
	if p.stopped {
		return nil
	}
	p.stopped = true
	select {
	case <-p.exited:
		return fmt.Errorf("%s had already exited: %v", p.Name, p.waitErr)
	default:
	}
	_ = p.cmd.Process.Signal(syscall.SIGTERM)
	t := time.NewTimer(timeout)
	defer t.Stop()
	select {
	case <-p.exited:
		return nil
	case <-t.C:
	}
	_ = p.cmd.Process.Kill()
	<-p.exited
	return errors.New(p.Name + " ignored SIGTERM and was killed")
}
