package main_test

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"obgate/internal/mariadbd"
	"obgate/internal/testkit"
	"obgate/mysqlproto"

	"golang.org/x/sys/unix"
)

// The end-to-end tests run the obgate binary as a child process. TestMain
// builds it once (or takes $OBGATE_BIN); MariaDB starts on first use and is
// shared by every test.
var (
	obgateBin string

	mariaOnce sync.Once
	maria     *mariadbd.Server
	mariaErr  error
)

func TestMain(m *testing.M) {
	code, err := runTests(m)
	if err != nil {
		fmt.Fprintln(os.Stderr, "obgate e2e:", err)
		os.Exit(1)
	}
	os.Exit(code)
}

func runTests(m *testing.M) (int, error) {
	dir, err := os.MkdirTemp("", "obgate-e2e-")
	if err != nil {
		return 0, err
	}
	defer os.RemoveAll(dir)
	flag.Parse()
	if testing.Short() {
		// Every test that runs obgate or MariaDB skips (testkit.EndToEnd).
		return m.Run(), nil
	}
	if obgateBin = os.Getenv("OBGATE_BIN"); obgateBin == "" {
		obgateBin = filepath.Join(dir, "obgate")
		// Built without -race whatever the tests use: the tests measure the
		// binary's memory, which the race detector multiplies.
		cmd := exec.Command("go", "build", "-o", obgateBin, ".")
		if out, err := cmd.CombinedOutput(); err != nil {
			return 0, fmt.Errorf("go build: %w\n%s", err, out)
		}
	}
	code := m.Run()
	if maria != nil {
		if err := maria.Stop(); err != nil {
			fmt.Fprintln(os.Stderr, "obgate e2e: stopping MariaDB:", err)
		}
	}
	return code, nil
}

// mariaDB returns the shared MariaDB server, starting it on first use. It
// allows 6000 connections, enough for the idle-connection test.
func mariaDB(t *testing.T) *mariadbd.Server {
	t.Helper()
	testkit.EndToEnd(t)
	mariaOnce.Do(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		defer cancel()
		maria, mariaErr = mariadbd.Start(ctx, mariadbd.Options{MaxConnections: 6000})
	})
	if mariaErr != nil {
		if errors.Is(mariaErr, mariadbd.ErrNotInstalled) {
			t.Fatalf("%v; on Debian: apt-get install mariadb-server", mariaErr)
		}
		t.Fatal(mariaErr)
	}
	return maria
}

// obgateProc is a running obgate child process.
type obgateProc struct {
	t       *testing.T
	args    []string
	bin     string // the binary to run; obgateBin when empty
	port    int    // SQL port
	mport   int    // metrics port
	confDir string
	logPath string
	// wrap is a command line obgate is started through (prlimit, for
	// one), which must exec it; timerSlack, when set, is the timer slack
	// it starts with.
	wrap       []string
	timerSlack uint64

	cmd     *exec.Cmd
	exited  chan struct{}
	waitErr error // valid once exited is closed
}

// startObgate starts obgate in mysql routing mode in front of the shared
// MariaDB, with its config in confDir (a new temporary directory when
// empty) and extra arguments after the standard ones, and waits until it
// accepts a login. The process is killed when the test ends.
func startObgate(t *testing.T, confDir string, extra ...string) *obgateProc {
	t.Helper()
	return startObgateUnder(t, nil, confDir, extra...)
}

// startObgateUnder is startObgate with obgate started through the command
// line wrap (prlimit, for one), which must exec it so that the process it
// starts is obgate.
func startObgateUnder(t *testing.T, wrap []string, confDir string, extra ...string) *obgateProc {
	t.Helper()
	return startObgateWith(t, func(p *obgateProc) { p.wrap = wrap }, confDir, extra...)
}

// startObgateWithSlack is startObgate with obgate started with the given
// timer slack, as a supervisor that sets one does (systemd's
// TimerSlackNSec=).
func startObgateWithSlack(t *testing.T, slack uint64, extra ...string) *obgateProc {
	t.Helper()
	return startObgateWith(t, func(p *obgateProc) { p.timerSlack = slack }, "", extra...)
}

// startObgateWith is startObgate with how the process starts set by
// setup.
func startObgateWith(t *testing.T, setup func(*obgateProc), confDir string, extra ...string) *obgateProc {
	t.Helper()
	srv := mariaDB(t)
	p := newObgateProc(t, confDir)
	setup(p)
	p.args = append([]string{"-N", "-p", strconv.Itoa(p.port), "-l", strconv.Itoa(p.mport),
		"-r", srv.Addr(), "-o", "server_routing_mode=mysql", "-o", "log_dir=" + filepath.Join(p.confDir, "log"), "--config-dir", p.confDir}, extra...)
	p.spawn()
	p.waitReady()
	return p
}

// newObgateProc picks free ports and a log file for an obgate process, with
// its config in confDir (a new temporary directory when empty); spawn
// starts it once p.args is set.
func newObgateProc(t *testing.T, confDir string) *obgateProc {
	t.Helper()
	testkit.EndToEnd(t)
	if confDir == "" {
		confDir = t.TempDir()
	}
	return &obgateProc{t: t, port: freePort(t), mport: freePort(t), confDir: confDir,
		logPath: filepath.Join(t.TempDir(), "obgate.log"), exited: make(chan struct{})}
}

// spawn starts obgate with p.args, through the command line wrap if any,
// without waiting for it to serve. The process is killed when the test
// ends, and its log is shown if the test failed.
func (p *obgateProc) spawn() {
	t := p.t
	t.Helper()
	logf, err := os.Create(p.logPath)
	if err != nil {
		t.Fatal(err)
	}
	defer logf.Close()
	bin := obgateBin
	if p.bin != "" {
		bin = p.bin
	}
	argv := append(append(append([]string(nil), p.wrap...), bin), p.args...)
	p.cmd = exec.Command(argv[0], argv[1:]...)
	p.cmd.Stdout, p.cmd.Stderr = logf, logf
	p.cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	started := make(chan error, 1)
	go func() {
		// Pdeathsig follows the thread that forked the child: keep it until
		// the child is reaped.
		runtime.LockOSThread()
		if p.timerSlack != 0 {
			// The child inherits this thread's slack; the thread ends
			// with the goroutine, locked.
			if err := unix.Prctl(unix.PR_SET_TIMERSLACK, uintptr(p.timerSlack), 0, 0, 0); err != nil {
				started <- err
				return
			}
		}
		if err := p.cmd.Start(); err != nil {
			started <- err
			return
		}
		started <- nil
		p.waitErr = p.cmd.Wait()
		close(p.exited)
	}()
	if err := <-started; err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		select {
		case <-p.exited:
		default:
			_ = p.cmd.Process.Kill()
			<-p.exited
		}
		if t.Failed() {
			t.Logf("obgate %s log:\n%s", strings.Join(p.args, " "), tail(p.log(), 40))
		}
	})
}

// waitReady polls a root login until it works or obgate exits.
func (p *obgateProc) waitReady() {
	p.t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		c, err := mysqlproto.Dial(ctx, p.addr(), mysqlproto.ClientOptions{User: "root"})
		cancel()
		if err == nil {
			c.Close()
			return
		}
		select {
		case <-p.exited:
			p.t.Fatalf("obgate exited during start-up: %v\n%s", p.waitErr, tail(p.log(), 40))
		case <-time.After(50 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			p.t.Fatalf("obgate did not accept a login within 30s: %v", err)
		}
	}
}

func (p *obgateProc) addr() string { return net.JoinHostPort("127.0.0.1", strconv.Itoa(p.port)) }

func (p *obgateProc) metricsURL() string {
	return "http://" + net.JoinHostPort("127.0.0.1", strconv.Itoa(p.mport)) + "/metrics"
}

func (p *obgateProc) pid() int { return p.cmd.Process.Pid }

func (p *obgateProc) log() string {
	b, _ := os.ReadFile(p.logPath)
	return string(b)
}

// stop sends SIGTERM and waits up to timeout for obgate to exit; it
// returns the exit code, or fails the test if obgate is still running.
func (p *obgateProc) stop(timeout time.Duration) int {
	p.t.Helper()
	_ = p.cmd.Process.Signal(syscall.SIGTERM)
	return p.wait(timeout)
}

// wait waits up to timeout for obgate to exit and returns its exit code.
func (p *obgateProc) wait(timeout time.Duration) int {
	p.t.Helper()
	select {
	case <-p.exited:
	case <-time.After(timeout):
		p.t.Fatalf("obgate still running; waited %v", timeout)
	}
	return p.cmd.ProcessState.ExitCode()
}

func freePort(t *testing.T) int {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port
}

// runObgate runs the binary to completion (for flags that exit at once).
func runObgate(t *testing.T, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	testkit.EndToEnd(t)
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	var out, errb bytes.Buffer
	cmd := exec.CommandContext(ctx, obgateBin, args...)
	cmd.Dir = t.TempDir() // a stray ./etc lands there
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	var ee *exec.ExitError
	if err != nil && !errors.As(err, &ee) {
		t.Fatal(err)
	}
	return out.String(), errb.String(), cmd.ProcessState.ExitCode()
}

func tail(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}
