package main

// Hot upgrade, ODP's way: `ALTER PROXYCONFIG SET hot_upgrade_cmd =
// 'hot_upgrade'` starts the binary at obgate's path (a new build put there
// beforehand) as a child that inherits the listening sockets by
// descriptor, so no connection is refused and none waits for a bind. Once
// the child serves (it says so over a unix socket), both processes accept;
// 'commit' makes the old one stop accepting and drain
// (hot_upgrade_exit_timeout), 'rollback' makes the new one do so. Neither
// within hot_upgrade_rollback_timeout rolls back. SIGUSR2 is a
// hot_upgrade that commits by itself once the child is ready, what nginx
// and HAProxy users expect of a reload. A child that does not come up
// (it exits, or is not ready within childReadyTimeout) is killed, the old
// process goes on serving, and the reason is in the log and in SHOW
// PROXYINFO UPGRADE; after hot_upgrade_failure_retries such failures
// hot_upgrade is refused.
//
// The commands reach whichever process the administrator is connected
// to: a child passes commit and rollback on to its parent. The child
// reads the same configuration files (ALTER PROXYCONFIG writes them), so
// it starts with the running configuration.
//
// Sessions are handed over live (reactor's handover.go): at a commit the
// old process gives each session that can move to the new one at its
// next idle point, over a
// SOCK_SEQPACKET socket the child inherits, if the child said it reads
// this process's session state ("ready sessions=1"; an obgate older than
// the hand-over says "ready" and gets none); the child lays its session
// ids out with the parent's proxy id and the other upgrade bit, so that
// adopted ids never meet its own. In mysql routing mode the server
// session moves with the client; in OceanBase mode the client connection
// moves with its login and session variables, and the new process opens
// and syncs server sessions of its own. The sessions that cannot move
// (TLS clients, OB 2.0 clients, client_io_mode=net, administrators, an
// OceanBase-mode session holding state obgate cannot replay; see
// reactor/handover.go) are closed at their next idle point outside a transaction (pooled
// drivers reconnect, to the new process), and the rest when the timeout
// ends. A rollback drains the child's sessions the same way: they are
// not handed back.

import (
	"bufio"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"obgate/config"
	"obgate/reactor"
)

// The environment a hot-upgrade child starts with.
const (
	// envListenFDs names the inherited listeners: "sql=3,metrics=4".
	envListenFDs = "OBGATE_LISTEN_FDS"
	// envUpgradeFD is the child's end of the socket to its parent.
	envUpgradeFD = "OBGATE_UPGRADE_FD"
	// envHandoverFD is the child's end of the socket sessions are handed
	// over on.
	envHandoverFD = "OBGATE_HANDOVER_FD"
	// envSessionIDs is the parent's session id base,
	// "proxy_id:upgrade_bit:sequence", with the bit already flipped for
	// the child.
	envSessionIDs = "OBGATE_SESSION_IDS"
)

// childReadyTimeout bounds how long a new process may take to serve:
// its configuration load and, in OceanBase mode, its first cluster
// metadata.
const childReadyTimeout = 60 * time.Second

// Upgrade states, as SHOW PROXYINFO UPGRADE names them.
const (
	stateNone        = "none"         // no upgrade in progress
	stateStarting    = "starting"     // the child is starting
	stateWaitCR      = "wait_cr_cmd"  // both serve; waiting for commit or rollback
	stateCommitted   = "committed"    // the parent drains and exits
	stateRollingBack = "rolling_back" // the child drains and exits
	stateNewProcess  = "new_process"  // this is the child; its parent still runs
)

// upgrader runs hot upgrades for one process. Any goroutine may call
// Command and Info; the rest runs on its own goroutines.
type upgrader struct {
	log   *slog.Logger
	store *config.Store
	// guard contains panics on the upgrader's goroutines (set by main
	// before anything starts; nil in tests that start none).
	guard *loopGuard
	exe   string   // obgate's path, resolved at startup
	args  []string // the command line to start the child with
	// exit receives the reason when this process must drain and exit
	// (a commit in the parent, a rollback in the child); serve reads it.
	exit chan string

	mu        sync.Mutex
	sql       *net.TCPListener
	metrics   *net.TCPListener // nil without the metrics listener
	state     string
	cmd       string // the last command taken
	failures  int
	lastErr   string
	childPID  int
	childCtl  net.Conn // the parent's end, while a child runs
	parentCtl net.Conn // the child's end, while its parent runs
	rollback  *time.Timer
	// ids is this process's session id base now, for the child (set by
	// attach); childHandover and parentHandover are the two ends of the
	// hand-over socket, in the parent while its child runs and in the
	// child.
	ids            func() reactor.SessionIDBase
	childHandover  *net.UnixConn
	parentHandover *net.UnixConn
	// childTakesSessions says the child announced that it reads this
	// process's session state (its "ready" line).
	childTakesSessions bool
}

func newUpgrader(log *slog.Logger, store *config.Store, args []string) *upgrader {
	exe, err := os.Executable()
	if err != nil {
		exe = os.Args[0]
	}
	return &upgrader{log: log, store: store, exe: exe, args: args, exit: make(chan string, 1), state: stateNone, cmd: "none"}
}

// inheritedListeners returns the listeners a parent handed down (nil when
// this process was not started by a hot upgrade).
func inheritedListeners() (sql, metrics net.Listener, err error) {
	spec := os.Getenv(envListenFDs)
	if spec == "" {
		return nil, nil, nil
	}
	for _, kv := range strings.Split(spec, ",") {
		name, fdText, _ := strings.Cut(kv, "=")
		fd, perr := strconv.Atoi(fdText)
		if perr != nil || fd < 3 {
			return nil, nil, fmt.Errorf("%s=%q: bad descriptor", envListenFDs, spec)
		}
		f := os.NewFile(uintptr(fd), name)
		ln, lerr := net.FileListener(f) // a duplicate: the inherited descriptor is closed
		f.Close()
		if lerr != nil {
			return nil, nil, fmt.Errorf("inherited %s listener: %w", name, lerr)
		}
		switch name {
		case "sql":
			sql = ln
		case "metrics":
			metrics = ln
		}
	}
	if sql == nil {
		return nil, nil, fmt.Errorf("%s=%q names no sql listener", envListenFDs, spec)
	}
	return sql, metrics, nil
}

// inheritedSessionIDs is the session id base a parent handed down (nil
// when this process was not started by a hot upgrade).
func inheritedSessionIDs() (*reactor.SessionIDBase, error) {
	v := os.Getenv(envSessionIDs)
	if v == "" {
		return nil, nil
	}
	parts := strings.Split(v, ":")
	if len(parts) != 3 {
		return nil, fmt.Errorf("%s=%q: want proxy_id:upgrade_bit:sequence", envSessionIDs, v)
	}
	id, err := strconv.ParseInt(parts[0], 10, 64)
	seq, serr := strconv.ParseUint(parts[2], 10, 32)
	if err != nil || serr != nil || (parts[1] != "0" && parts[1] != "1") {
		return nil, fmt.Errorf("%s=%q: want proxy_id:upgrade_bit:sequence", envSessionIDs, v)
	}
	return &reactor.SessionIDBase{ProxyID: id, UpgradeBit: parts[1] == "1", Seq: uint32(seq)}, nil
}

// attach records the listeners to hand down and this process's session
// id base and, in a child, connects to the parent. Call it before
// serving.
func (u *upgrader) attach(sql, metrics net.Listener, ids func() reactor.SessionIDBase) {
	u.mu.Lock()
	defer u.mu.Unlock()
	u.sql, _ = sql.(*net.TCPListener)
	u.metrics, _ = metrics.(*net.TCPListener)
	u.ids = ids
	if v := os.Getenv(envHandoverFD); v != "" {
		if fd, err := strconv.Atoi(v); err == nil {
			f := os.NewFile(uintptr(fd), "handover")
			if c, err := net.FileConn(f); err == nil {
				u.parentHandover, _ = c.(*net.UnixConn)
			}
			f.Close()
		}
	}
	if v := os.Getenv(envUpgradeFD); v != "" {
		if fd, err := strconv.Atoi(v); err == nil {
			f := os.NewFile(uintptr(fd), "upgrade")
			if c, err := net.FileConn(f); err == nil {
				u.parentCtl = c
				u.state = stateNewProcess
			}
			f.Close()
		}
	}
	os.Unsetenv(envListenFDs)
	os.Unsetenv(envUpgradeFD)
	os.Unsetenv(envHandoverFD)
	os.Unsetenv(envSessionIDs)
}

// handoverFromParent is the socket the parent hands sessions over on, in
// a child (nil otherwise).
func (u *upgrader) handoverFromParent() *net.UnixConn {
	u.mu.Lock()
	defer u.mu.Unlock()
	return u.parentHandover
}

// handoverToChild is the socket to hand sessions to the child on, once
// this process committed an upgrade (nil otherwise).
func (u *upgrader) handoverToChild() *net.UnixConn {
	u.mu.Lock()
	defer u.mu.Unlock()
	if u.state != stateCommitted || !u.childTakesSessions {
		return nil
	}
	return u.childHandover
}

// serving tells the parent, in a child, that this process serves now, and
// listens for its decision.
func (u *upgrader) serving() {
	u.mu.Lock()
	ctl := u.parentCtl
	u.mu.Unlock()
	if ctl == nil {
		return
	}
	msg := "ready\n"
	if u.handoverFromParent() != nil {
		// This process takes sessions in this version of their state.
		msg = "ready sessions=" + strconv.Itoa(reactor.HandoverStateVersion) + "\n"
	}
	if _, err := ctl.Write([]byte(msg)); err != nil {
		u.log.Warn("hot upgrade: cannot tell the old process this one is ready", "err", err)
	}
	go u.readParent(ctl)
}

// readParent follows the parent's messages in a child: "exit" (a
// rollback: drain and exit), "commit"; the socket's end means the parent
// is gone and this process serves alone. Each message is taken inside
// the guard.
func (u *upgrader) readParent(ctl net.Conn) {
	sc := bufio.NewScanner(ctl)
	for sc.Scan() {
		msg := sc.Text()
		u.guard.do(whereUpgradeParent, func() { u.parentSaid(msg) })
	}
	u.mu.Lock()
	if u.state == stateNewProcess {
		u.state = stateNone
	}
	u.parentCtl = nil
	u.mu.Unlock()
	ctl.Close()
	u.log.Info("hot upgrade: the old process is gone; this one serves alone")
}

// parentSaid takes one message of the parent (readParent).
func (u *upgrader) parentSaid(msg string) {
	switch msg {
	case "exit":
		u.log.Info("hot upgrade rolled back: this new process drains and exits")
		u.mu.Lock()
		u.state = stateRollingBack
		u.mu.Unlock()
		u.requestExit("rollback")
	case "commit":
		u.log.Info("hot upgrade committed: the old process drains; this one serves on")
	}
}

func (u *upgrader) requestExit(why string) {
	select {
	case u.exit <- why:
	default:
	}
}

// Command implements admin.Upgrader.
func (u *upgrader) Command(cmd string) error {
	switch cmd {
	case "hot_upgrade":
		return u.start(false)
	case "commit", "rollback":
		u.mu.Lock()
		defer u.mu.Unlock()
		if u.parentCtl != nil {
			// This is the new process: the old one decides.
			if _, err := u.parentCtl.Write([]byte(cmd + "\n")); err != nil {
				return fmt.Errorf("cannot reach the old process: %w", err)
			}
			u.cmd = cmd
			return nil
		}
		if u.state != stateWaitCR {
			return fmt.Errorf("no hot upgrade is waiting for %s (state %s)", cmd, u.state)
		}
		u.cmd = cmd
		if cmd == "commit" {
			u.commitLocked()
		} else {
			u.rollbackLocked("rollback")
		}
		return nil
	}
	return errors.New("unknown command; hot_upgrade, commit or rollback")
}

// signalUpgrade is SIGUSR2: a hot upgrade that commits once the child
// is ready.
func (u *upgrader) signalUpgrade() {
	if err := u.start(true); err != nil {
		u.log.Warn("SIGUSR2: no hot upgrade", "err", err)
	}
}

// start begins a hot upgrade: it starts the child and returns; the rest
// happens in the background.
func (u *upgrader) start(auto bool) error {
	u.mu.Lock()
	defer u.mu.Unlock()
	if u.state != stateNone {
		return fmt.Errorf("a hot upgrade is in progress (state %s)", u.state)
	}
	if u.sql == nil {
		return errors.New("the SQL listener cannot be handed down")
	}
	if limit := int(u.store.Load().HotUpgradeFailureRetries); u.failures >= limit {
		return fmt.Errorf("%d hot upgrades failed (hot_upgrade_failure_retries %d); restart obgate to try again", u.failures, limit)
	}
	u.cmd = "hot_upgrade"
	if auto {
		u.cmd = "hot_upgrade (SIGUSR2)"
	}
	u.state = stateStarting
	go u.guard.do(whereUpgradeChild, func() { u.runChild(auto) })
	return nil
}

// runChild starts the child, waits until it serves, and then follows it.
func (u *upgrader) runChild(auto bool) {
	proc, ctl, err := u.spawn()
	if err != nil {
		u.failed(fmt.Errorf("start %s: %w", u.exe, err))
		return
	}
	u.log.Info("hot upgrade: new process started", "path", u.exe, "pid", proc.Pid)
	exited := make(chan error, 1)
	go func() {
		st, err := proc.Wait()
		if err == nil && !st.Success() {
			err = errors.New(st.String())
		}
		exited <- err
	}()
	ready := make(chan error, 1)
	lines := bufio.NewScanner(ctl)
	go func() {
		if lines.Scan() {
			if fields := strings.Fields(lines.Text()); len(fields) > 0 && fields[0] == "ready" {
				u.mu.Lock()
				u.childTakesSessions = slices.Contains(fields[1:], "sessions="+strconv.Itoa(reactor.HandoverStateVersion))
				u.mu.Unlock()
				ready <- nil
				return
			}
		}
		ready <- errors.New("it closed its socket before it was ready")
	}()
	timer := time.NewTimer(childReadyTimeout)
	defer timer.Stop()
	select {
	case err = <-ready:
		if err != nil {
			// Most likely it is exiting: its status says more.
			select {
			case st := <-exited:
				err = fmt.Errorf("it exited before it was ready: %v", st)
				exited <- st
			case <-time.After(2 * time.Second):
			}
		}
	case err = <-exited:
		err = fmt.Errorf("it exited before it was ready: %v", err)
		exited <- err // for the wait below
	case <-timer.C:
		err = fmt.Errorf("it was not ready within %v", childReadyTimeout)
	}
	if err != nil {
		_ = proc.Kill()
		ctl.Close()
		<-exited
		u.mu.Lock()
		u.dropChildHandoverLocked()
		u.mu.Unlock()
		u.failed(fmt.Errorf("new process %d: %w", proc.Pid, err))
		return
	}

	u.mu.Lock()
	u.state, u.childPID, u.childCtl = stateWaitCR, proc.Pid, ctl
	u.rollback = time.AfterFunc(u.store.Load().HotUpgradeRollbackTimeout, func() {
		u.mu.Lock()
		defer u.mu.Unlock()
		if u.state == stateWaitCR {
			u.log.Warn("hot upgrade neither committed nor rolled back within hot_upgrade_rollback_timeout: rolling back")
			u.rollbackLocked("timeout rollback")
		}
	})
	if auto {
		u.commitLocked()
	}
	u.mu.Unlock()
	u.log.Info("hot upgrade: new process serves", "pid", proc.Pid)

	go u.followChild(lines)
	err = <-exited
	u.mu.Lock()
	defer u.mu.Unlock()
	ctl.Close()
	u.childCtl, u.childPID = nil, 0
	u.dropChildHandoverLocked()
	if u.rollback != nil {
		u.rollback.Stop()
	}
	switch u.state {
	case stateRollingBack:
		u.state = stateNone
		u.log.Info("hot upgrade rolled back: the new process exited", "status", err)
	case stateWaitCR:
		u.failures++
		u.lastErr = fmt.Sprintf("the new process exited before commit: %v", err)
		u.state = stateNone
		u.log.Warn("hot upgrade failed: "+u.lastErr, "upgrade_failures", u.failures)
	}
}

// followChild takes the commands the child passes on from its own
// administrators (commit, rollback), each inside the guard, until the
// child's socket closes.
func (u *upgrader) followChild(lines *bufio.Scanner) {
	for lines.Scan() {
		c := lines.Text()
		u.guard.do(whereUpgradeChild, func() {
			if c != "commit" && c != "rollback" {
				return
			}
			if err := u.Command(c); err != nil {
				u.log.Warn("hot upgrade: command from the new process not taken", "cmd", c, "err", err)
			}
		})
	}
}

// spawn starts the child with the listeners and its end of a control
// socket, and returns its process and the parent's end of the socket.
//
// It forks with syscall.ForkExec and raw descriptors, not os/exec:
// os/exec takes each extra file's Fd(), which puts the descriptor in
// blocking mode, and a socket's mode belongs to the open file it shares
// with this process's listener, whose accept would then block in the
// kernel where Close cannot reach it.
func (u *upgrader) spawn() (*os.Process, net.Conn, error) {
	u.mu.Lock()
	lns := []*net.TCPListener{u.sql}
	if u.metrics != nil {
		lns = append(lns, u.metrics)
	}
	u.mu.Unlock()
	fds := []uintptr{0, 1, 2}
	spec := []string{}
	for i, ln := range lns {
		f, err := ln.File() // a duplicate that stays open until the fork is done
		if err != nil {
			return nil, nil, err
		}
		defer f.Close()
		fd, err := rawFD(f)
		if err != nil {
			return nil, nil, err
		}
		fds = append(fds, fd)
		spec = append(spec, []string{"sql", "metrics"}[i]+"="+strconv.Itoa(len(fds)-1))
	}
	pair, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return nil, nil, err
	}
	defer unix.Close(pair[1])
	mine := os.NewFile(uintptr(pair[0]), "upgrade")
	defer mine.Close()
	ctl, err := net.FileConn(mine)
	if err != nil {
		return nil, nil, err
	}
	fds = append(fds, uintptr(pair[1]))
	ctlFD := len(fds) - 1
	hpair, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_SEQPACKET|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		ctl.Close()
		return nil, nil, err
	}
	defer unix.Close(hpair[1])
	hmine := os.NewFile(uintptr(hpair[0]), "handover")
	hconn, err := net.FileConn(hmine)
	hmine.Close()
	if err != nil {
		ctl.Close()
		return nil, nil, err
	}
	fds = append(fds, uintptr(hpair[1]))
	ids := u.ids()
	bit := "1"
	if ids.UpgradeBit {
		bit = "0"
	}
	env := append(withoutUpgradeEnv(os.Environ()), envListenFDs+"="+strings.Join(spec, ","),
		envUpgradeFD+"="+strconv.Itoa(ctlFD), envHandoverFD+"="+strconv.Itoa(len(fds)-1),
		envSessionIDs+"="+strconv.FormatInt(ids.ProxyID, 10)+":"+bit+":"+strconv.FormatUint(uint64(ids.Seq), 10))
	argv := append([]string{u.exe}, u.args...)
	pid, err := syscall.ForkExec(u.exe, argv, &syscall.ProcAttr{
		Env:   env,
		Files: fds,
		// Its own process group: a signal to the old process's group (a
		// terminal's ^C) does not reach the new one.
		Sys: &syscall.SysProcAttr{Setpgid: true},
	})
	if err != nil {
		ctl.Close()
		hconn.Close()
		return nil, nil, err
	}
	proc, err := os.FindProcess(pid)
	if err != nil {
		ctl.Close()
		hconn.Close()
		return nil, nil, err
	}
	u.mu.Lock()
	u.childHandover = hconn.(*net.UnixConn)
	u.mu.Unlock()
	return proc, ctl, nil
}

// rawFD is f's descriptor, read without Fd (which would make it blocking).
func rawFD(f *os.File) (uintptr, error) {
	rc, err := f.SyscallConn()
	if err != nil {
		return 0, err
	}
	var fd uintptr
	if err := rc.Control(func(d uintptr) { fd = d }); err != nil {
		return 0, err
	}
	return fd, nil
}

func withoutUpgradeEnv(env []string) []string {
	out := env[:0:0]
	for _, kv := range env {
		if !strings.HasPrefix(kv, envListenFDs+"=") && !strings.HasPrefix(kv, envUpgradeFD+"=") &&
			!strings.HasPrefix(kv, envHandoverFD+"=") && !strings.HasPrefix(kv, envSessionIDs+"=") {
			out = append(out, kv)
		}
	}
	return out
}

// dropChildHandoverLocked closes the hand-over socket to a child that is
// gone. u.mu is held.
func (u *upgrader) dropChildHandoverLocked() {
	if u.childHandover != nil {
		u.childHandover.Close()
		u.childHandover = nil
	}
}

// failed records a child that did not come up; the process goes on.
func (u *upgrader) failed(err error) {
	u.mu.Lock()
	defer u.mu.Unlock()
	u.failures++
	u.lastErr = err.Error()
	u.state = stateNone
	u.log.Warn("hot upgrade failed; this process goes on serving", "err", err, "upgrade_failures", u.failures)
}

// commitLocked makes this (old) process drain and exit; the child serves
// on. u.mu is held.
func (u *upgrader) commitLocked() {
	u.state = stateCommitted
	if u.rollback != nil {
		u.rollback.Stop()
	}
	if u.childCtl != nil {
		_, _ = u.childCtl.Write([]byte("commit\n"))
	}
	u.log.Info("hot upgrade committed: this old process stops accepting and drains", "new_pid", u.childPID)
	u.requestExit("hot upgrade committed")
}

// rollbackLocked makes the child drain and exit; this process serves on.
// u.mu is held.
func (u *upgrader) rollbackLocked(why string) {
	u.state = stateRollingBack
	u.cmd = why
	if u.rollback != nil {
		u.rollback.Stop()
	}
	if u.childCtl != nil {
		_, _ = u.childCtl.Write([]byte("exit\n"))
	}
	u.log.Info("hot upgrade "+why+": the new process drains and exits", "new_pid", u.childPID)
}

// Info implements admin.Upgrader: SHOW PROXYINFO UPGRADE's text.
func (u *upgrader) Info() string {
	u.mu.Lock()
	defer u.mu.Unlock()
	return fmt.Sprintf(`{hot_upgrade:"supported", state:%q, cmd:%q, pid:%d, sub_pid:%d, upgrade_failures:%d, last_error:%q}`,
		u.state, u.cmd, os.Getpid(), u.childPID, u.failures, u.lastErr)
}
