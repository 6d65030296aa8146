package suite

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// Ways of counting the system calls of a running process.
const (
	// CounterPerf counts with `perf stat -e raw_syscalls:sys_enter -p PID`:
	// the kernel increments a counter at every system call entry of every
	// thread of the process (threads created later inherit it). It costs
	// the process next to nothing, so it may run during a measured run.
	// Per-name counts come from the syscalls:sys_enter_<name> tracepoints
	// of the names asked for.
	CounterPerf = "perf"
	// CounterStrace counts with `strace -f -c -p PID`: every system call of
	// every thread, by name, but each one stops the process twice, which
	// slows it down several times and changes how often its threads sleep
	// and wake (futex, epoll_pwait, nanosleep counts). For counting only.
	CounterStrace = "strace"
)

// DataSyscalls are the calls that move bytes over a socket; the rest
// (futex, epoll_pwait, nanosleep, ...) is scheduling and bookkeeping.
var DataSyscalls = []string{"read", "write", "readv", "writev", "recvfrom", "sendto", "recvmsg", "sendmsg", "recvmmsg", "sendmmsg"}

// PerfSyscallNames are the names CounterPerf counts one by one by default:
// the data calls and what a Go network server does between them.
var PerfSyscallNames = append(append([]string(nil), DataSyscalls...),
	"futex", "epoll_pwait", "epoll_wait", "epoll_ctl", "nanosleep", "sched_yield", "getsockopt",
	"setsockopt", "tgkill", "rt_sigreturn", "madvise", "mmap", "munmap", "getpid", "clock_gettime")

// SyscallCount is what a counter saw between Start and Stop.
type SyscallCount struct {
	Method string `json:"method"`
	// Total counts every system call of the process.
	Total int64 `json:"total"`
	// ByName counts calls by name; with CounterPerf only the names asked
	// for, and Total minus their sum is "other".
	ByName map[string]int64 `json:"by_name"`
	// Failed counts, by name, the calls that returned an error (strace
	// only): for read mostly EAGAIN, a read that found nothing and made the
	// goroutine wait for the poller.
	Failed map[string]int64 `json:"failed,omitempty"`
	// ContextSwitches counts the process's context switches (perf's
	// context-switches software event); -1 when not counted (strace).
	ContextSwitches int64 `json:"context_switches"`
}

// Data sums the counts of DataSyscalls.
func (c SyscallCount) Data() int64 {
	var n int64
	for _, name := range DataSyscalls {
		n += c.ByName[name]
	}
	return n
}

// Names returns the counted names, most frequent first.
func (c SyscallCount) Names() []string {
	names := make([]string, 0, len(c.ByName))
	for n := range c.ByName {
		names = append(names, n)
	}
	sort.Slice(names, func(i, j int) bool {
		a, b := c.ByName[names[i]], c.ByName[names[j]]
		if a != b {
			return a > b
		}
		return names[i] < names[j]
	})
	return names
}

// SyscallCounter counts the system calls of one process from Start until
// Stop. One goroutine uses it.
type SyscallCounter struct {
	method string
	cmd    *exec.Cmd
	out    string // the counter's report file
	stderr bytes.Buffer
	ctl    *os.File // perf: control commands
	ack    *os.File // perf: acknowledgements
	exited chan struct{}
}

// StartSyscallCounter starts counting the system calls of pid with method
// (CounterPerf or CounterStrace) and returns once counting has begun. The
// counter's report goes to outPath. names are the per-name counts
// CounterPerf asks for (nil: PerfSyscallNames); strace counts every name.
func StartSyscallCounter(ctx context.Context, method string, pid int, outPath string, names []string) (*SyscallCounter, error) {
	c := &SyscallCounter{method: method, out: outPath, exited: make(chan struct{})}
	switch method {
	case CounterPerf:
		if names == nil {
			names = PerfSyscallNames
		}
		events := []string{"raw_syscalls:sys_enter", "context-switches"}
		for _, n := range names {
			events = append(events, "syscalls:sys_enter_"+n)
		}
		// perf starts with its counters disabled (-D -1) and enables them
		// when told on the control pipe, acknowledging on the other: so
		// counting starts exactly when Start returns.
		ctlR, ctlW, err := os.Pipe()
		if err != nil {
			return nil, err
		}
		ackR, ackW, err := os.Pipe()
		if err != nil {
			ctlR.Close()
			ctlW.Close()
			return nil, err
		}
		c.cmd = exec.Command("perf", "stat", "-x", ",", "-e", strings.Join(events, ","),
			"-D", "-1", "--control", "fd:3,4", "-p", strconv.Itoa(pid), "-o", outPath)
		c.cmd.ExtraFiles = []*os.File{ctlR, ackW}
		c.ctl, c.ack = ctlW, ackR
		c.cmd.Stderr = &c.stderr
		err = c.start()
		ctlR.Close()
		ackW.Close()
		if err != nil {
			c.ctl.Close()
			c.ack.Close()
			return nil, err
		}
		if err := c.perfCommand(ctx, "enable"); err != nil {
			c.kill()
			return nil, fmt.Errorf("perf stat: %w\n%s", err, c.stderr.String())
		}
		return c, nil
	case CounterStrace:
		// -f with -p attaches every thread of pid; strace reports on
		// stderr once it has ("Process N attached").
		c.cmd = exec.Command("strace", "-f", "-c", "-p", strconv.Itoa(pid), "-o", outPath)
		pr, pw, err := os.Pipe()
		if err != nil {
			return nil, err
		}
		c.cmd.Stderr = pw
		err = c.start()
		pw.Close()
		if err != nil {
			pr.Close()
			return nil, err
		}
		attached := make(chan error, 1)
		go func() {
			defer pr.Close()
			sc := bufio.NewScanner(pr)
			sent := false
			for sc.Scan() {
				line := sc.Text()
				c.stderr.WriteString(line + "\n")
				if !sent && strings.Contains(line, "attached") {
					attached <- nil
					sent = true
				}
			}
			if !sent {
				attached <- errors.New("strace exited before attaching")
			}
		}()
		select {
		case err = <-attached:
		case <-ctx.Done():
			err = ctx.Err()
		}
		if err != nil {
			c.kill()
			return nil, fmt.Errorf("strace -p %d: %w", pid, err)
		}
		return c, nil
	}
	return nil, fmt.Errorf("unknown syscall counter %q (want %s or %s)", method, CounterPerf, CounterStrace)
}

func (c *SyscallCounter) start() error {
	c.cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	if err := c.cmd.Start(); err != nil {
		return fmt.Errorf("%s: %w", c.method, err)
	}
	go func() {
		_ = c.cmd.Wait()
		close(c.exited)
	}()
	return nil
}

// perfCommand sends a control command to perf and waits for its ack.
func (c *SyscallCounter) perfCommand(ctx context.Context, cmd string) error {
	if _, err := io.WriteString(c.ctl, cmd+"\n"); err != nil {
		return err
	}
	got := make(chan error, 1)
	go func() {
		var b [16]byte
		n, err := c.ack.Read(b[:])
		if err == nil && !strings.HasPrefix(string(b[:n]), "ack") {
			err = fmt.Errorf("perf answered %q to %s", b[:n], cmd)
		}
		got <- err
	}()
	select {
	case err := <-got:
		return err
	case <-c.exited:
		return errors.New("perf exited")
	case <-ctx.Done():
		return ctx.Err()
	}
}

func (c *SyscallCounter) kill() {
	_ = c.cmd.Process.Kill()
	<-c.exited
	if c.ctl != nil {
		c.ctl.Close()
		c.ack.Close()
	}
}

// Stop ends counting and returns the counts.
func (c *SyscallCounter) Stop(ctx context.Context) (SyscallCount, error) {
	if c.method == CounterPerf {
		if err := c.perfCommand(ctx, "disable"); err != nil {
			c.kill()
			return SyscallCount{}, fmt.Errorf("perf stat: %w\n%s", err, c.stderr.String())
		}
	}
	_ = c.cmd.Process.Signal(syscall.SIGINT)
	select {
	case <-c.exited:
	case <-time.After(30 * time.Second):
		c.kill()
		return SyscallCount{}, fmt.Errorf("%s did not stop on SIGINT", c.method)
	}
	if c.ctl != nil {
		c.ctl.Close()
		c.ack.Close()
	}
	b, err := os.ReadFile(c.out)
	if err != nil {
		return SyscallCount{}, fmt.Errorf("%s: %w\n%s", c.method, err, c.stderr.String())
	}
	if c.method == CounterPerf {
		return ParsePerfStat(b)
	}
	return ParseStraceSummary(b)
}

// ParsePerfStat reads the CSV output of `perf stat -x ,` over
// raw_syscalls:sys_enter and syscalls:sys_enter_<name> events.
func ParsePerfStat(b []byte) (SyscallCount, error) {
	c := SyscallCount{Method: CounterPerf, ByName: map[string]int64{}, ContextSwitches: -1}
	seenTotal := false
	for _, line := range strings.Split(string(b), "\n") {
		f := strings.Split(line, ",")
		if len(f) < 3 || strings.HasPrefix(line, "#") {
			continue
		}
		n, err := strconv.ParseInt(f[0], 10, 64)
		if err != nil {
			if strings.HasPrefix(f[0], "<not") {
				return c, fmt.Errorf("perf could not count %s: %s", f[2], f[0])
			}
			continue
		}
		switch ev := f[2]; {
		case ev == "raw_syscalls:sys_enter":
			c.Total, seenTotal = n, true
		case ev == "context-switches" || ev == "cs":
			c.ContextSwitches = n
		case strings.HasPrefix(ev, "syscalls:sys_enter_"):
			if n > 0 {
				c.ByName[strings.TrimPrefix(ev, "syscalls:sys_enter_")] = n
			}
		}
	}
	if !seenTotal {
		return c, fmt.Errorf("no raw_syscalls:sys_enter count in perf's output:\n%s", b)
	}
	return c, nil
}

// ParseStraceSummary reads the table `strace -c` writes:
//
//	% time     seconds  usecs/call     calls    errors syscall
//	------ ----------- ----------- --------- --------- ----------------
//	 45.00    0.123456           2     50000       120 read
//	...
//	100.00    0.274336           2    120000       120 total
func ParseStraceSummary(b []byte) (SyscallCount, error) {
	c := SyscallCount{Method: CounterStrace, ByName: map[string]int64{}, Failed: map[string]int64{}, ContextSwitches: -1}
	seenTotal := false
	for _, line := range strings.Split(string(b), "\n") {
		f := strings.Fields(line)
		if len(f) < 5 || strings.HasPrefix(f[0], "%") || strings.HasPrefix(f[0], "-") {
			continue
		}
		name := f[len(f)-1]
		// calls is the 4th column; errors (5th) is empty when none failed.
		n, err := strconv.ParseInt(f[3], 10, 64)
		if err != nil {
			continue
		}
		if name == "total" {
			c.Total, seenTotal = n, true
			continue
		}
		c.ByName[name] = n
		if len(f) == 6 {
			if e, err := strconv.ParseInt(f[4], 10, 64); err == nil && e > 0 {
				c.Failed[name] = e
			}
		}
	}
	if !seenTotal {
		if len(bytes.TrimSpace(b)) == 0 {
			return c, nil // no system call at all
		}
		return c, fmt.Errorf("no total line in strace's summary:\n%s", b)
	}
	return c, nil
}
