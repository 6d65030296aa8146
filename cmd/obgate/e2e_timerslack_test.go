package main_test

import (
	"os"
	"strconv"
	"strings"
	"testing"

	"golang.org/x/sys/unix"
)

// TestTimerSlack: obgate runs every thread with timer_slack (1ms by
// default), the Go runtime's own threads included, which only executing
// itself again can give them; with timer_slack=0 it keeps the slack it was
// started with, and started with enough (a supervisor's TimerSlackNSec=) it
// keeps that without executing itself again. Either way it serves.
func TestTimerSlack(t *testing.T) {
	started, _, errno := unix.Syscall6(unix.SYS_PRCTL, unix.PR_GET_TIMERSLACK, 0, 0, 0, 0, 0)
	if errno != 0 {
		t.Fatalf("prctl: %v", errno)
	}
	for _, c := range []struct {
		opt   string
		given uint64 // the slack obgate is started with; 0: the test's own
		want  uint64
	}{
		{"", 0, 1_000_000},
		{"timer_slack=250us", 0, 250_000},
		{"timer_slack=0", 0, uint64(started)},
		{"timer_slack=1ms", 2_000_000, 2_000_000},
	} {
		t.Run(c.opt+"/"+strconv.FormatUint(c.given, 10), func(t *testing.T) {
			var extra []string
			if c.opt != "" {
				extra = []string{"-o", c.opt}
			}
			var p *obgateProc
			if c.given != 0 {
				p = startObgateWithSlack(t, c.given, extra...)
			} else {
				p = startObgate(t, "", extra...)
			}
			admin := adminSession(t, p.addr())
			defer admin.Close()
			if _, err := admin.Query("SHOW PROXYCONFIG LIKE 'timer_slack'"); err != nil {
				t.Fatal(err)
			}
			pid := p.cmd.Process.Pid
			environ, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/environ")
			if err != nil {
				t.Fatal(err)
			}
			// The execution that applied the slack marks the environment.
			if executed := strings.Contains(string(environ), "OBGATE_TIMER_SLACK_PID="); executed != (c.want != uint64(started) && c.given == 0) {
				t.Errorf("obgate executed itself again: %v", executed)
			}
			// Executed again, it keeps its name (ps, pgrep and top show it).
			if comm, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/comm"); err != nil || strings.TrimSpace(string(comm)) != "obgate" {
				t.Errorf("obgate %d is named %q (%v)", pid, comm, err)
			}
			tasks, err := os.ReadDir("/proc/" + strconv.Itoa(pid) + "/task")
			if err != nil {
				t.Fatal(err)
			}
			if len(tasks) < 2 {
				t.Fatalf("obgate has %d threads", len(tasks))
			}
			for _, task := range tasks {
				// The kernel has the file at /proc/<thread id> only.
				b, err := os.ReadFile("/proc/" + task.Name() + "/timerslack_ns")
				if err != nil {
					t.Fatal(err)
				}
				got, err := strconv.ParseUint(strings.TrimSpace(string(b)), 10, 64)
				if err != nil || got != c.want {
					t.Errorf("thread %s of obgate %d: timer slack %q, want %d", task.Name(), pid, b, c.want)
				}
			}
		})
	}
}
