package main

import (
	"fmt"
	"os"
	"strconv"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// Timer slack (timer_slack): why obgate sets it, and why by executing
// itself again.
//
// Go's sysmon thread wakes every 20 µs (plus the thread's timer slack)
// while the process is busy, and takes the CPU slot (the P) from a thread
// it finds in the same system call at two wake-ups in a row. With
// GOMAXPROCS=1 (go_max_procs=0 narrows to it at low load) it does so even
// when nothing else wants the slot, and the netpoll event loop, blocked in
// epoll_wait until the server answers, is such a thread: each take wakes a
// spare thread, which finds nothing and sleeps, and the event loop, back
// from epoll_wait without a P, sleeps until that thread hands it over.
// One statement in flight whose server takes longer than two wake-ups
// (OceanBase mode, range queries) then costs about 2.4 futex calls and 5
// more context switches, and once sysmon takes one P it stays at 20 µs.
//
// The slack stretches sysmon's 20 µs sleeps. The kernel lets a thread set
// only its own slack (another thread's needs CAP_SYS_NICE), and sysmon's
// thread starts before any of obgate's code runs; threads inherit the
// slack of the thread that creates them, and exec keeps it. So obgate
// sets it on its first thread and executes itself again: the runtime of
// the new image, sysmon included, starts with it.

// reexecMark is set in the environment, to the process id, by the
// execution that applied the slack, so that a kernel that reports less
// than it was given (it may for real-time threads) cannot make obgate
// execute itself over and over. A hot upgrade's new process has another
// id and may apply a larger slack of its own.
const reexecMark = "OBGATE_TIMER_SLACK_PID"

// applyTimerSlack makes sure the process runs with at least slack: it
// returns nil when it does already (or slack is 0), else sets it and
// executes its own binary again with the same arguments and environment
// (selfPath), and returns only if that failed. It must run before obgate
// opens anything that the new image would not know about.
func applyTimerSlack(slack time.Duration) error {
	if slack <= 0 {
		return nil
	}
	cur, err := currentTimerSlack()
	if err != nil {
		return err
	}
	if cur >= slack {
		return nil
	}
	pid := strconv.Itoa(os.Getpid())
	if os.Getenv(reexecMark) == pid {
		return fmt.Errorf("timer slack is %v after executing again with %v", cur, slack)
	}
	if err := unix.Prctl(unix.PR_SET_TIMERSLACK, uintptr(slack.Nanoseconds()), 0, 0, 0); err != nil {
		return fmt.Errorf("set timer slack: %w", err)
	}
	exe := selfPath()
	err = syscall.Exec(exe, os.Args, append(os.Environ(), reexecMark+"="+pid))
	return fmt.Errorf("execute %s with timer slack %v: %w", exe, slack, err)
}

// selfPath is the path of the running image: its file's own path, so that
// the process keeps its name (the kernel names a process after the file
// it executes, and /proc/self/exe would name it "exe"), unless that path
// is no longer the same file (replaced or deleted since the start); then
// /proc/self/exe, which always is.
func selfPath() string {
	const proc = "/proc/self/exe"
	path, err := os.Executable()
	if err != nil {
		return proc
	}
	want, err1 := os.Stat(proc)
	got, err2 := os.Stat(path)
	if err1 != nil || err2 != nil || !os.SameFile(want, got) {
		return proc
	}
	return path
}

// currentTimerSlack is the calling thread's timer slack.
func currentTimerSlack() (time.Duration, error) {
	r, _, errno := unix.Syscall6(unix.SYS_PRCTL, unix.PR_GET_TIMERSLACK, 0, 0, 0, 0, 0)
	if errno != 0 {
		return 0, fmt.Errorf("get timer slack: %w", errno)
	}
	return time.Duration(r), nil
}
