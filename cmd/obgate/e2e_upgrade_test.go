package main_test

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/go-sql-driver/mysql"
	"obgate/mysqlproto"
	"obgate/tools/obsim"
)

// buildVersion builds obgate with main.version set to version into dir.
func buildVersion(t *testing.T, dir, version string) string {
	t.Helper()
	out := filepath.Join(dir, "obgate-"+version)
	cmd := exec.Command("go", "build", "-ldflags", "-X main.version="+version, "-o", out, ".")
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build %s: %v\n%s", version, err, b)
	}
	return out
}

// copyFile copies src to dst, executable.
func copyFile(t *testing.T, src, dst string) {
	t.Helper()
	in, err := os.Open(src)
	if err != nil {
		t.Fatal(err)
	}
	defer in.Close()
	out, err := os.OpenFile(dst, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, 0o755)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := io.Copy(out, in); err != nil {
		t.Fatal(err)
	}
	if err := out.Close(); err != nil {
		t.Fatal(err)
	}
}

// upgradeInfo is SHOW PROXYINFO UPGRADE's text, from a new administrator
// session on addr.
func upgradeInfo(t *testing.T, addr string) string {
	t.Helper()
	c := adminSession(t, addr)
	defer c.Close()
	res, err := c.Query("SHOW PROXYINFO UPGRADE")
	if err != nil {
		t.Fatalf("SHOW PROXYINFO UPGRADE: %v", err)
	}
	return res.String(0, "info")
}

func adminSession(t *testing.T, addr string) *mysqlproto.Client {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	c, err := mysqlproto.Dial(ctx, addr, mysqlproto.ClientOptions{User: "root@proxysys"})
	if err != nil {
		t.Fatalf("root@proxysys login: %v", err)
	}
	return c
}

// hotUpgradeCmd runs ALTER PROXYCONFIG SET hot_upgrade_cmd = cmd.
func hotUpgradeCmd(t *testing.T, addr, cmd string) {
	t.Helper()
	c := adminSession(t, addr)
	defer c.Close()
	if _, err := c.Exec("ALTER PROXYCONFIG SET hot_upgrade_cmd = '" + cmd + "'"); err != nil {
		t.Fatalf("hot_upgrade_cmd %s: %v", cmd, err)
	}
}

var subPIDRe = regexp.MustCompile(`sub_pid:(\d+)`)

// waitUpgradeState polls SHOW PROXYINFO UPGRADE until its state is state
// and returns the text.
func waitUpgradeState(t *testing.T, addr, state string) string {
	t.Helper()
	deadline := time.Now().Add(90 * time.Second)
	for {
		info := upgradeInfo(t, addr)
		if strings.Contains(info, `state:"`+state+`"`) {
			return info
		}
		if time.Now().After(deadline) {
			t.Fatalf("hot upgrade state never became %s: %s", state, info)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// proxyVersion is SELECT PROXY_VERSION() on a new session.
func proxyVersion(t *testing.T, addr string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	c, err := mysqlproto.Dial(ctx, addr, mysqlproto.ClientOptions{User: "root"})
	if err != nil {
		t.Fatalf("login: %v", err)
	}
	defer c.Close()
	res, err := c.Query("SELECT PROXY_VERSION()")
	if err != nil {
		t.Fatal(err)
	}
	return string(res.Rows[0][0])
}

// socketTargets lists the sockets pid's descriptors point at, sorted.
func socketTargets(pid int) []string {
	var out []string
	for _, ft := range fdTargets(pid) {
		if _, target, _ := strings.Cut(ft, "→"); strings.HasPrefix(target, "socket:") {
			out = append(out, target)
		}
	}
	slices.Sort(out)
	return out
}

// socketPeers describes pid's TCP sockets as local→remote (hex, as
// /proc/net/tcp has them) with their state, for a failure message.
func socketPeers(pid int) []string {
	inodes := map[string]bool{}
	for _, s := range socketTargets(pid) {
		inodes[strings.TrimSuffix(strings.TrimPrefix(s, "socket:["), "]")] = true
	}
	var out []string
	for _, f := range []string{"tcp", "tcp6"} {
		b, _ := os.ReadFile(fmt.Sprintf("/proc/%d/net/%s", pid, f))
		for _, line := range strings.Split(string(b), "\n")[1:] {
			fields := strings.Fields(line)
			if len(fields) > 9 && inodes[fields[9]] {
				out = append(out, fields[1]+"→"+fields[2]+" st="+fields[3])
			}
		}
	}
	return out
}

// fdTargets lists what pid's descriptors point at.
func fdTargets(pid int) []string {
	dir := fmt.Sprintf("/proc/%d/fd", pid)
	ents, _ := os.ReadDir(dir)
	var out []string
	for _, e := range ents {
		target, _ := os.Readlink(filepath.Join(dir, e.Name()))
		out = append(out, e.Name()+"→"+target)
	}
	return out
}

// processGone reports whether pid has exited (gone, or a zombie).
func processGone(pid int) bool {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return true
	}
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	return i < 0 || i+2 >= len(s) || s[i+2] == 'Z' || s[i+2] == 'X'
}

func waitGone(t *testing.T, pid int, timeout time.Duration) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for !processGone(pid) {
		if time.Now().After(deadline) {
			t.Fatalf("process %d still running after %v", pid, timeout)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// appLoad is what applications do while obgate is upgraded: a pool of
// go-sql-driver connections (server-side prepared statements, a 5s
// timeout per statement) running writes of unique rows, some in a
// transaction, and reads, with up to 10ms between one request and the
// next. dials counts the connections the pool opened.
type appLoad struct {
	db      *sql.DB
	table   string
	dials   atomic.Int64
	slowest atomic.Int64 // nanoseconds of the longest operation
	next    atomic.Int64
	ok      atomic.Int64
	stop    chan struct{}
	wg      sync.WaitGroup
	mu      sync.Mutex
	errs    map[string]int
	written []int64
}

func startAppLoad(t *testing.T, addr, table string, workers int) *appLoad {
	t.Helper()
	return startAppLoadAs(t, addr, "root", "", table, workers)
}

// startAppLoadAs is startAppLoad logged in as user with password.
func startAppLoadAs(t *testing.T, addr, user, password, table string, workers int) *appLoad {
	t.Helper()
	c := mysql.NewConfig()
	c.User, c.Passwd, c.Net, c.Addr, c.DBName = user, password, "tcp", addr, "test"
	c.Timeout, c.ReadTimeout, c.WriteTimeout = 5*time.Second, 5*time.Second, 5*time.Second
	c.Logger = &mysql.NopLogger{}
	conn, err := mysql.NewConnector(c)
	if err != nil {
		t.Fatal(err)
	}
	l := &appLoad{table: table, stop: make(chan struct{}), errs: map[string]int{}}
	db := sql.OpenDB(countingConnector{conn, &l.dials})
	l.db = db
	db.SetMaxOpenConns(workers)
	db.SetMaxIdleConns(workers)
	if _, err := db.Exec("CREATE TABLE IF NOT EXISTS " + table + " (id BIGINT PRIMARY KEY, w INT)"); err != nil {
		t.Fatal(err)
	}
	for w := range workers {
		l.wg.Add(1)
		go l.work(w)
	}
	return l
}

func (l *appLoad) work(w int) {
	defer l.wg.Done()
	for {
		select {
		case <-l.stop:
			return
		default:
		}
		id := l.next.Add(1)
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		began := time.Now()
		var err error
		if id%4 == 0 {
			err = l.insertInTxn(ctx, id, w)
		} else {
			_, err = l.db.ExecContext(ctx, "INSERT INTO "+l.table+" VALUES (?, ?)", id, w)
		}
		if err == nil {
			l.mu.Lock()
			l.written = append(l.written, id)
			l.mu.Unlock()
			var n int64
			err = l.db.QueryRowContext(ctx, "SELECT COUNT(*) FROM "+l.table+" WHERE id = ?", id).Scan(&n)
		}
		cancel()
		for took := int64(time.Since(began)); ; {
			if old := l.slowest.Load(); took <= old || l.slowest.CompareAndSwap(old, took) {
				break
			}
		}
		if err != nil {
			l.mu.Lock()
			l.errs[err.Error()]++
			l.mu.Unlock()
			continue
		}
		l.ok.Add(1)
		// An application's think time between requests.
		time.Sleep(time.Duration(rand.IntN(10)) * time.Millisecond)
	}
}

// insertInTxn writes row id in a transaction of its own, with a read
// of the table inside it.
func (l *appLoad) insertInTxn(ctx context.Context, id int64, w int) error {
	tx, err := l.db.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	if _, err := tx.ExecContext(ctx, "INSERT INTO "+l.table+" VALUES (?, ?)", id, w); err != nil {
		_ = tx.Rollback()
		return err
	}
	var n int64
	if err := tx.QueryRowContext(ctx, "SELECT COUNT(*) FROM "+l.table+" WHERE id = ?", id).Scan(&n); err != nil || n != 1 {
		_ = tx.Rollback()
		return fmt.Errorf("read inside the transaction: %d rows, %v", n, err)
	}
	return tx.Commit()
}

// countingConnector counts the connections a pool opens.
type countingConnector struct {
	driver.Connector
	n *atomic.Int64
}

func (c countingConnector) Connect(ctx context.Context) (driver.Conn, error) {
	c.n.Add(1)
	return c.Connector.Connect(ctx)
}

// waitOps waits until n more operations succeeded.
func (l *appLoad) waitOps(t *testing.T, n int64) {
	t.Helper()
	target := l.ok.Load() + n
	deadline := time.Now().Add(60 * time.Second)
	for l.ok.Load() < target {
		if time.Now().After(deadline) {
			t.Fatalf("the load made %d of %d operations in 60s", l.ok.Load()-target+n, n)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// finish stops the load and checks what the clients saw: every
// acknowledged write in the table exactly once, and no error but at most
// maxBroken broken connections (sessions that are not handed over are
// closed once quiet, and a client that sends its next statement in the
// microseconds the close takes to reach it sees its connection break).
func (l *appLoad) finish(t *testing.T, direct *sql.DB, maxBroken int) {
	t.Helper()
	close(l.stop)
	l.wg.Wait()
	defer l.db.Close()
	// A drained session that races a statement breaks one of two ways:
	// the close arrives first (a broken connection), or the ERR 1053 the
	// drain says first is read as the statement's answer. Either way the
	// statement never ran (the ledger below stays exact).
	broken := 0
	for msg, n := range l.errs {
		if msg != mysql.ErrInvalidConn.Error() && !strings.Contains(msg, "Error 1053 ") {
			t.Errorf("clients saw %d × %q during the upgrade; want at most %d broken connections and no other error", n, msg, maxBroken)
		}
		broken += n
	}
	if broken > maxBroken {
		t.Errorf("clients saw %d broken connections or shutdown errors during the upgrade (%v); want at most %d", broken, l.errs, maxBroken)
	}
	var rows int64
	if err := direct.QueryRow("SELECT COUNT(*) FROM test." + l.table).Scan(&rows); err != nil {
		t.Fatal(err)
	}
	if rows != int64(len(l.written)) {
		t.Errorf("%d rows in the table, %d writes acknowledged", rows, len(l.written))
	}
	t.Logf("%d operations, %d writes, errors %v, slowest operation %v", l.ok.Load(), len(l.written), l.errs,
		time.Duration(l.slowest.Load()).Round(time.Millisecond))
}

// sessionMarker is a client session that left state on its server (a
// user variable): while it is handed over from process to process it
// keeps its connection, its connection id and the variable, and in mysql
// routing mode its server session (sameServer).
type sessionMarker struct {
	c          *mysqlproto.Client
	serverID   string
	sameServer bool
}

func newSessionMarker(t *testing.T, addr string) *sessionMarker {
	t.Helper()
	return newSessionMarkerAs(t, addr, mysqlproto.ClientOptions{User: "root"}, true)
}

func newSessionMarkerAs(t *testing.T, addr string, login mysqlproto.ClientOptions, sameServer bool) *sessionMarker {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	c, err := mysqlproto.Dial(ctx, addr, login)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	if _, err := c.Exec("SET @marker = 'handed over'"); err != nil {
		t.Fatal(err)
	}
	m := &sessionMarker{c: c, sameServer: sameServer}
	m.serverID, _ = m.look(t)
	return m
}

// look returns the server's connection id and the user variable.
func (m *sessionMarker) look(t *testing.T) (string, string) {
	t.Helper()
	res, err := m.c.Query("SELECT CONNECTION_ID(), @marker")
	if err != nil {
		t.Fatalf("the marker session broke: %v", err)
	}
	return string(res.Rows[0][0]), string(res.Rows[0][1])
}

// check fails the test unless the session still is the one it was.
func (m *sessionMarker) check(t *testing.T, when string) {
	t.Helper()
	id, v := m.look(t)
	if (m.sameServer && id != m.serverID) || v != "handed over" {
		t.Errorf("%s: the marker session has server connection %s and @marker %q; want %s and its value", when, id, v, m.serverID)
	}
}

var upgradePIDRe = regexp.MustCompile(`\bpid:(\d+)`)

// servingPID is the pid of the process that answers on addr, from SHOW
// PROXYINFO UPGRADE; it is killed when the test ends (it is no child of
// the test).
func servingPID(t *testing.T, addr string) int {
	t.Helper()
	info := upgradeInfo(t, addr)
	m := upgradePIDRe.FindStringSubmatch(info)
	if m == nil {
		t.Fatalf("no pid in %s", info)
	}
	pid, _ := strconv.Atoi(m[1])
	killLater(t, pid)
	return pid
}

// upgradeChain upgrades p by SIGUSR2 to each build in turn (moved to exe,
// obgate's path): each time the old process must exit (its sessions
// handed over), after runs, the load goes on and the marker session is
// intact. It returns the newest process's pid.
func upgradeChain(t *testing.T, p *obgateProc, exe string, builds []string, load *appLoad, marker *sessionMarker, after func(i int)) int {
	t.Helper()
	pid := p.pid()
	for i, b := range builds {
		if err := os.Rename(b, exe); err != nil {
			t.Fatal(err)
		}
		if err := syscall.Kill(pid, syscall.SIGUSR2); err != nil {
			t.Fatal(err)
		}
		waitGone(t, pid, 60*time.Second)
		if after != nil {
			after(i)
		}
		pid = servingPID(t, p.addr())
		load.waitOps(t, 100)
		marker.check(t, fmt.Sprintf("upgrade %d", i+1))
	}
	return pid
}

// checkAllHandedOver: the pool opened no connection since dials, and the
// newest process lists the marker and the pool's 16 sessions.
func checkAllHandedOver(t *testing.T, p *obgateProc, load *appLoad, dials int64, marker *sessionMarker) {
	t.Helper()
	if n := load.dials.Load() - dials; n != 0 {
		t.Errorf("the pool opened %d connections during the upgrades; its sessions should have been handed over", n)
	}
	if ids := sessionIDs(t, p.addr()); !ids[marker.c.ConnectionID()] || len(ids) < 17 {
		t.Errorf("the newest process serves sessions %v; want the marker %d and the pool's 16", ids, marker.c.ConnectionID())
	}
}

// sessionIDs lists the client session ids SHOW PROXYSESSION shows on
// the process addr reaches, but its own.
func sessionIDs(t *testing.T, addr string) map[uint32]bool {
	t.Helper()
	c := adminSession(t, addr)
	defer c.Close()
	res, err := c.Query("SHOW PROXYSESSION")
	if err != nil {
		t.Fatal(err)
	}
	ids := map[uint32]bool{}
	for i := range res.Rows {
		id, _ := strconv.ParseUint(res.String(i, "Id"), 10, 32)
		if uint32(id) != c.ConnectionID() {
			ids[uint32(id)] = true
		}
	}
	return ids
}

// upgradeProc starts obgate from a copy of its binary at a path of its
// own (which the test then replaces), in mysql routing mode.
func upgradeProc(t *testing.T, dir string) (*obgateProc, string) {
	t.Helper()
	exe := filepath.Join(dir, "obgate")
	copyFile(t, obgateBin, exe)
	srv := mariaDB(t)
	p := newObgateProc(t, "")
	p.bin = exe
	p.args = []string{"-N", "-p", strconv.Itoa(p.port), "-l", strconv.Itoa(p.mport),
		"-r", srv.Addr(), "-o", "server_routing_mode=mysql", "-o", "log_dir=" + filepath.Join(p.confDir, "log"),
		"-o", "hot_upgrade_exit_timeout=10s", "--config-dir", p.confDir}
	p.spawn()
	p.waitReady()
	return p, exe
}

// killLater kills pid when the test ends (a new process the test did not
// start itself).
func killLater(t *testing.T, pid int) {
	t.Cleanup(func() {
		if !processGone(pid) {
			_ = syscall.Kill(pid, syscall.SIGKILL)
		}
	})
}

func subPID(t *testing.T, info string) int {
	t.Helper()
	m := subPIDRe.FindStringSubmatch(info)
	if m == nil {
		t.Fatalf("no sub_pid in %s", info)
	}
	pid, _ := strconv.Atoi(m[1])
	return pid
}

// directTestDB opens MariaDB itself (not through obgate), with database
// test and no table named table in it.
func directTestDB(t *testing.T, table string) *sql.DB {
	t.Helper()
	srv := mariaDB(t)
	db, err := sql.Open("mysql", "root@tcp("+srv.Addr()+")/")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	for _, q := range []string{"CREATE DATABASE IF NOT EXISTS test", "DROP TABLE IF EXISTS test." + table} {
		if _, err := db.Exec(q); err != nil {
			t.Fatal(err)
		}
	}
	return db
}

// TestHotUpgradeCommitAndRollback: hot_upgrade starts the binary now at
// obgate's path on the inherited listeners, both serve until commit, then
// the old process drains and exits and the new one serves alone; a
// rollback instead ends the new process. An application pool under load
// sees no error throughout, and every acknowledged write is there once.
func TestHotUpgradeCommitAndRollback(t *testing.T) {
	direct := directTestDB(t, "upgrade_ledger")
	dir := t.TempDir()
	newBin := buildVersion(t, dir, "upgrade-b")
	p, exe := upgradeProc(t, dir)
	oldVersion := proxyVersion(t, p.addr())
	load := startAppLoad(t, p.addr(), "upgrade_ledger", 8)
	marker := newSessionMarker(t, p.addr())
	load.waitOps(t, 50)
	dials := load.dials.Load()

	// Rollback first: the new process ends, the old one goes on.
	if err := os.Rename(newBin, exe); err != nil {
		t.Fatal(err)
	}
	hotUpgradeCmd(t, p.addr(), "hot_upgrade")
	info := waitUpgradeState(t, p.addr(), "wait_cr_cmd")
	child := subPID(t, info)
	killLater(t, child)
	seen := map[string]bool{}
	for i := 0; i < 200 && len(seen) < 2; i++ {
		seen[proxyVersion(t, p.addr())] = true
	}
	if !seen["upgrade-b"] || !seen[oldVersion] {
		t.Errorf("while both processes serve, new sessions reached versions %v; want %s and upgrade-b", seen, oldVersion)
	}
	hotUpgradeCmd(t, p.addr(), "rollback")
	waitGone(t, child, 30*time.Second)
	waitUpgradeState(t, p.addr(), "none")
	for range 20 {
		if v := proxyVersion(t, p.addr()); v != oldVersion {
			t.Fatalf("after the rollback a new session reached %s", v)
		}
	}

	// Then commit, sent to whichever process answers.
	hotUpgradeCmd(t, p.addr(), "hot_upgrade")
	info = waitUpgradeState(t, p.addr(), "wait_cr_cmd")
	child = subPID(t, info)
	killLater(t, child)
	hotUpgradeCmd(t, p.addr(), "commit")
	if code := p.wait(30 * time.Second); code != 0 {
		t.Errorf("the old process exited with %d after commit", code)
	}
	for range 20 {
		if v := proxyVersion(t, p.addr()); v != "upgrade-b" {
			t.Fatalf("after the commit a new session reached %s", v)
		}
	}
	load.waitOps(t, 200) // load on the new process alone
	marker.check(t, "after the commit")
	if ids := sessionIDs(t, p.addr()); !ids[marker.c.ConnectionID()] {
		t.Errorf("the new process does not serve the marker session %d: %v", marker.c.ConnectionID(), ids)
	}
	load.finish(t, direct, 0)
	if n := load.dials.Load() - dials; n != 0 {
		t.Errorf("the pool opened %d connections during the upgrade; its sessions should have been handed over", n)
	}
	if !strings.Contains(upgradeInfo(t, p.addr()), `state:"none"`) {
		t.Errorf("the new process after commit: %s", upgradeInfo(t, p.addr()))
	}
	_ = syscall.Kill(child, syscall.SIGTERM)
	waitGone(t, child, 30*time.Second)
}

// TestHotUpgradeSIGUSR2Chain: SIGUSR2 upgrades and commits by itself;
// three in a row, each to another build, end with the newest process
// serving alone, the load without an error.
func TestHotUpgradeSIGUSR2Chain(t *testing.T) {
	direct := directTestDB(t, "usr2_ledger")
	dir := t.TempDir()
	builds := []string{buildVersion(t, dir, "chain-1"), buildVersion(t, dir, "chain-2"), buildVersion(t, dir, "chain-3")}
	p, exe := upgradeProc(t, dir)
	load := startAppLoad(t, p.addr(), "usr2_ledger", 16)
	marker := newSessionMarker(t, p.addr())
	load.waitOps(t, 50)
	dials := load.dials.Load()
	pid := upgradeChain(t, p, exe, builds, load, marker, func(i int) {
		want := fmt.Sprintf("chain-%d", i+1)
		if v := proxyVersion(t, p.addr()); v != want {
			t.Fatalf("upgrade %d: a new session reached %s, want %s", i+1, v, want)
		}
	})
	checkAllHandedOver(t, p, load, dials, marker)
	load.finish(t, direct, 0)
	marker.c.Close()
	// Nothing inherited is left open: once the load's sessions are gone
	// the newest process holds two sockets, its two listeners, each
	// once (a descriptor left over from a hand-down would be a second
	// one for the same socket, or the control socket to a parent).
	deadline := time.Now().Add(20 * time.Second)
	for socks := socketTargets(pid); len(socks) != 2 || socks[0] == socks[1]; socks = socketTargets(pid) {
		if time.Now().After(deadline) {
			t.Errorf("the third new process holds sockets %v, want its two listeners: %v", socks, fdTargets(pid))
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	_ = syscall.Kill(pid, syscall.SIGTERM)
	waitGone(t, pid, 30*time.Second)
}

// TestHotUpgradeChildFails: a binary that cannot start leaves the old
// process serving, with the reason in SHOW PROXYINFO UPGRADE and the
// log, and the load sees no error.
func TestHotUpgradeChildFails(t *testing.T) {
	direct := directTestDB(t, "fail_ledger")
	dir := t.TempDir()
	p, exe := upgradeProc(t, dir)
	load := startAppLoad(t, p.addr(), "fail_ledger", 4)
	broken := filepath.Join(dir, "broken")
	if err := os.WriteFile(broken, []byte("#!/bin/sh\necho 'this build does not start' >&2\nexit 3\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(broken, exe); err != nil {
		t.Fatal(err)
	}
	hotUpgradeCmd(t, p.addr(), "hot_upgrade")
	deadline := time.Now().Add(30 * time.Second)
	var info string
	for {
		info = upgradeInfo(t, p.addr())
		if strings.Contains(info, "upgrade_failures:1") {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the failed start was not recorded: %s", info)
		}
		time.Sleep(20 * time.Millisecond)
	}
	if !strings.Contains(info, `state:"none"`) || !strings.Contains(info, "exit status 3") {
		t.Errorf("after a child that exits 3: %s", info)
	}
	if !strings.Contains(p.log(), "hot upgrade failed") {
		t.Error("the log does not say the hot upgrade failed")
	}
	load.waitOps(t, 200) // load on the old process after the failure
	load.finish(t, direct, 0)
	if code := p.stop(30 * time.Second); code != 0 {
		t.Errorf("obgate exited with %d", code)
	}
}

// TestHotUpgradeOceanBaseChain: in OceanBase routing mode, three SIGUSR2
// upgrades in a row, each to another build, under the application load:
// the client connections move (the new process opens its own server
// sessions and replays the session state there), no client sees an error
// or opens a connection, a user variable survives, and the newest
// process serves every session.
func TestHotUpgradeOceanBaseChain(t *testing.T) {
	direct := directTestDB(t, "ob_usr2_ledger")
	dir := t.TempDir()
	builds := []string{buildVersion(t, dir, "obchain-1"), buildVersion(t, dir, "obchain-2"), buildVersion(t, dir, "obchain-3")}
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	defer cancel()
	cl, err := obsim.Start(ctx, obsim.Config{
		Topology: &obsim.Topology{
			Cluster: "upg", ClusterID: 9,
			Zones:   []obsim.Zone{{Name: "zone1", Region: "r1"}, {Name: "zone2", Region: "r1"}},
			Tenants: []obsim.Tenant{{Name: "sys"}, {Name: "app", PrimaryZone: "RANDOM"}},
			Users:   []obsim.User{{Name: "u", Password: "u-Secret7"}},
		},
		MariaDBDSN: mariaDB(t).DSN("root", "", ""),
	})
	if err != nil {
		t.Fatalf("start obsim: %v", err)
	}
	t.Cleanup(func() {
		if err := cl.Close(); err != nil {
			t.Errorf("obsim close: %v", err)
		}
	})
	exe := filepath.Join(dir, "obgate")
	copyFile(t, obgateBin, exe)
	p := newObgateProc(t, "")
	p.bin = exe
	p.args = []string{"-N", "-p", strconv.Itoa(p.port), "-l", strconv.Itoa(p.mport), "-r", cl.RSList(), "-c", cl.Name(),
		"-o", "log_dir=" + filepath.Join(p.confDir, "log"), "-o", "hot_upgrade_exit_timeout=10s", "--config-dir", p.confDir}
	p.spawn()
	const user, password = "u@app#upg", "u-Secret7"
	waitLogin(t, p, mysqlproto.ClientOptions{User: user, Password: password})
	load := startAppLoadAs(t, p.addr(), user, password, "ob_usr2_ledger", 16)
	marker := newSessionMarkerAs(t, p.addr(), mysqlproto.ClientOptions{User: user, Password: password}, false)
	load.waitOps(t, 50)
	dials := load.dials.Load()
	pid := upgradeChain(t, p, exe, builds, load, marker, nil)
	checkAllHandedOver(t, p, load, dials, marker)
	load.finish(t, direct, 0)
	marker.c.Close()
	// No client descriptor the hand-overs brought is left open in the
	// newest process once the clients are gone (the old ones have
	// exited): no socket on the SQL port but the listener.
	listen := fmt.Sprintf(":%04X", p.port)
	clientSockets := func() (n int, all []string) {
		all = socketPeers(pid)
		for _, s := range all {
			local, _, _ := strings.Cut(s, "→")
			if strings.HasSuffix(local, listen) && !strings.HasSuffix(s, "st=0A") {
				n++
			}
		}
		return n, all
	}
	deadline := time.Now().Add(20 * time.Second)
	for n, all := clientSockets(); n > 0; n, all = clientSockets() {
		if time.Now().After(deadline) {
			t.Errorf("the newest process holds %d client sockets after the clients left: %v", n, all)
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	_ = syscall.Kill(pid, syscall.SIGTERM)
	waitGone(t, pid, 30*time.Second)
}

// waitLogin waits until a login through p works (an OceanBase-mode
// obgate serves once it loaded its cluster).
func waitLogin(t *testing.T, p *obgateProc, login mysqlproto.ClientOptions) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		c, err := mysqlproto.Dial(ctx, p.addr(), login)
		cancel()
		if err == nil {
			c.Close()
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("no login through obgate within 30s: %v\n%s", err, tail(p.log(), 20))
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// TestHotUpgradeToBuildWithoutHandover: a new process that does not say
// it takes sessions (an obgate older than the hand-over, here one whose
// hand-over socket is withheld) gets none: the old process drains its
// sessions as before, the pool reconnects to the new one, and the
// upgrade completes within the drain's time.
func TestHotUpgradeToBuildWithoutHandover(t *testing.T) {
	direct := directTestDB(t, "nohandover_ledger")
	dir := t.TempDir()
	p, exe := upgradeProc(t, dir)
	load := startAppLoad(t, p.addr(), "nohandover_ledger", 8)
	load.waitOps(t, 50)
	dials := load.dials.Load()
	real := filepath.Join(dir, "obgate-real")
	copyFile(t, obgateBin, real)
	script := filepath.Join(dir, "older")
	if err := os.WriteFile(script, []byte("#!/bin/sh\nunset OBGATE_HANDOVER_FD\nexec "+real+" \"$@\"\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(script, exe); err != nil {
		t.Fatal(err)
	}
	old := p.pid()
	started := time.Now()
	if err := syscall.Kill(old, syscall.SIGUSR2); err != nil {
		t.Fatal(err)
	}
	waitGone(t, old, 30*time.Second)
	took := time.Since(started)
	pid := servingPID(t, p.addr())
	load.waitOps(t, 100)
	if n := load.dials.Load() - dials; n == 0 {
		t.Error("the pool opened no connection: its sessions were not drained to the new process")
	}
	if strings.Contains(p.log(), "handing sessions over to the new process") || strings.Contains(p.log(), "hand-over of a session failed") {
		t.Error("the old process offered sessions to a process that does not take them")
	}
	// A drain closes sessions at quiet points; a client may race one.
	load.finish(t, direct, 2)
	t.Logf("the old process exited %v after SIGUSR2; the pool opened %d connections", took.Round(time.Millisecond), load.dials.Load()-dials)
	_ = syscall.Kill(pid, syscall.SIGTERM)
	waitGone(t, pid, 30*time.Second)
}
