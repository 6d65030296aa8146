package reactor_test

import (
	"context"
	"database/sql"
	"encoding/hex"
	"fmt"
	"net"
	"os"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"obgate/internal/mariadbd"
	"obgate/internal/testkit"
	"obgate/internal/testproxy"
	"obgate/mysqlproto"
)

// TestMySQLModeAvoidsDeadAndHungServers lists, in mysql routing mode, a
// server that refuses connections and one that accepts them but never
// greets (a stopped mariadbd) beside the real MariaDB. Every login
// succeeds; the refusing server is avoided after its first failed
// connect, the hung one once the detect task (server_detect_mode=2,
// detect_server_timeout=1s) finds it dead, and from then on logins do not
// wait for either.
func TestMySQLModeAvoidsDeadAndHungServers(t *testing.T) {
	forEachMode(t, func(t *testing.T, haMode string) {
		testkit.CheckLeaks(t)
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		refused := ln.Addr().String()
		ln.Close()
		hung, err := net.Listen("tcp", "127.0.0.1:0") // accepts (backlog), never greets
		if err != nil {
			t.Fatal(err)
		}
		defer hung.Close()
		p := startProxy(t, haMode, "rootservice_list", refused+";"+hung.Addr().String()+";"+maria(t).Addr(),
			"server_detect_mode", "2", "detect_server_timeout", "1s", "server_detect_refresh_interval", "200ms")
		login := func() {
			db := rootDB(t, p)
			if n := queryInt(t, db, "SELECT 1"); n != 1 {
				t.Fatalf("SELECT 1 = %d", n)
			}
			db.Close()
		}
		for range 3 {
			login()
		}
		waitFor(t, 10*time.Second, "hung server found dead", func() bool {
			v, _ := viewOf(p, hung.Addr().String())
			return v.DetectCongested
		})
		if v, _ := viewOf(p, refused); !v.Congested {
			t.Fatalf("refusing server not listed: %+v", v)
		}
		before := metricValue(t, p, "obgate_server_connect_failures_total")
		for range 6 {
			login()
		}
		if after := metricValue(t, p, "obgate_server_connect_failures_total"); after != before {
			t.Fatalf("logins tried listed servers again: %v more connect failures", after-before)
		}
	})
}

// metricValue reads one series of obgate's /metrics.
func metricValue(t *testing.T, p *testproxy.Proxy, series string) float64 {
	t.Helper()
	var b strings.Builder
	p.Metrics.WritePrometheus(&b)
	for _, line := range strings.Split(b.String(), "\n") {
		name, val, ok := strings.Cut(line, " ")
		if ok && (name == series || strings.HasPrefix(name, series+"{")) {
			f, err := strconv.ParseFloat(val, 64)
			if err != nil {
				t.Fatalf("%s: %v", line, err)
			}
			return f
		}
	}
	t.Fatalf("no series %s", series)
	return 0
}

// TestMySQLModeMovesSessionsOffAHungServer fronts two MariaDB servers in
// mysql routing mode, with the client's mysql_native_password hash in
// mysql_user_hashes. The first server is stopped with SIGSTOP: a read
// waiting on it is answered by the other server once the detect task
// finds the first one dead, and an idle session on it moves with its next
// statement; neither client sees an error. A session that set a variable
// cannot move and is disconnected instead.
func TestMySQLModeMovesSessionsOffAHungServer(t *testing.T) {
	testkit.CheckLeaks(t)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	second, err := mariadbd.Start(ctx, mariadbd.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer second.Stop()
	if err := second.Exec(ctx, "CREATE DATABASE "+testDB,
		fmt.Sprintf("CREATE USER '%s'@'%%' IDENTIFIED BY '%s'", otherUser, otherPass),
		fmt.Sprintf("GRANT ALL ON %s.* TO '%s'@'%%'", testDB, otherUser)); err != nil {
		t.Fatal(err)
	}
	for _, srv := range []*mariadbd.Server{second, maria(t)} {
		if err := srv.Exec(ctx, "CREATE DATABASE IF NOT EXISTS "+moveDB,
			fmt.Sprintf("GRANT ALL ON %s.* TO '%s'@'%%'", moveDB, otherUser)); err != nil {
			t.Fatal(err)
		}
	}
	hash := "*" + strings.ToUpper(hex.EncodeToString(mysqlproto.PasswordStage2(mysqlproto.PasswordStage1([]byte(otherPass)))))
	forEachMode(t, func(t *testing.T, haMode string) {
		for _, known := range []struct{ name, k, v string }{
			{"configured", "mysql_user_hashes", otherUser + ":" + hash},
			{"read_from_mysql_user", "mysql_hash_reader_user", "root"},
		} {
			t.Run(known.name, func(t *testing.T) {
				p := startProxy(t, haMode, "rootservice_list", second.Addr()+";"+maria(t).Addr(), known.k, known.v,
					"server_detect_mode", "2", "detect_server_timeout", "1s", "server_detect_refresh_interval", "200ms",
					"short_async_task_timeout", "1s")
				checkSessionsMove(t, ctx, p, second)
			})
		}
	})
}

// moveDB is a database on both servers of the move tests, other than the
// one their sessions log in to.
const moveDB = "obtest_move"

// checkSessionsMove opens sessions through p until three sit on second,
// stops second with SIGSTOP and checks that a busy and an idle session
// move to the package's MariaDB without an error while a stateful one
// fails; second runs again afterwards.
func checkSessionsMove(t *testing.T, ctx context.Context, p *testproxy.Proxy, second *mariadbd.Server) {
	session := func() *sql.Conn {
		db := openDB(t, driverConfig(p, otherUser, otherPass, testDB))
		c, err := db.Conn(ctx)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.Close() })
		return c
	}
	port := func(c *sql.Conn) (int, error) {
		var n int
		err := c.QueryRowContext(ctx, "SELECT @@port").Scan(&n)
		return n, err
	}
	var onSecond []*sql.Conn
	for len(onSecond) < 7 {
		c := session()
		if n, err := port(c); err != nil {
			t.Fatal(err)
		} else if n == second.Port() {
			onSecond = append(onSecond, c)
		}
	}
	busy, idle, stateful, inTxn, chained := onSecond[0], onSecond[1], onSecond[2], onSecond[3], onSecond[4]
	// Prepared statements and USE leave nothing obgate cannot carry: a
	// session with both moves, its statements prepared again on the new
	// server, in the database it chose.
	preparedBusy, preparedIdle := onSecond[5], onSecond[6]
	var stmts []*sql.Stmt
	for _, c := range []*sql.Conn{preparedBusy, preparedIdle} {
		if _, err := c.ExecContext(ctx, "USE "+moveDB); err != nil {
			t.Fatal(err)
		}
		st, err := c.PrepareContext(ctx, "SELECT @@port, DATABASE(), ? + 1")
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { st.Close() })
		stmts = append(stmts, st)
	}
	preparedPort := func(i int) (int, string, error) {
		var n, sum int
		var db string
		err := stmts[i].QueryRowContext(ctx, 41).Scan(&n, &db, &sum)
		if err == nil && sum != 42 {
			err = fmt.Errorf("? + 1 gave %d", sum)
		}
		return n, db, err
	}
	for i := range stmts {
		if n, db, err := preparedPort(i); err != nil || n != second.Port() || db != moveDB {
			t.Fatalf("prepared statement before the stop: port %d, database %q, %v", n, db, err)
		}
	}
	if _, err := stateful.ExecContext(ctx, "SET @kept = 1"); err != nil {
		t.Fatal(err)
	}
	if _, err := inTxn.ExecContext(ctx, "BEGIN"); err != nil {
		t.Fatal(err)
	}
	if _, err := port(inTxn); err != nil {
		t.Fatal(err)
	}
	if _, err := chained.ExecContext(ctx, "BEGIN"); err != nil {
		t.Fatal(err)
	}
	if _, err := port(chained); err != nil {
		t.Fatal(err)
	}
	sigstop(t, second.PID())
	defer syscall.Kill(second.PID(), syscall.SIGCONT)
	type portAnswer struct {
		port int
		db   string
		err  error
	}
	inFlight := make(chan portAnswer, 1)
	go func() {
		n, db, err := preparedPort(0) // waits on the stopped server
		inFlight <- portAnswer{n, db, err}
	}()
	if n, err := port(busy); err != nil || n != maria(t).Port() {
		t.Fatalf("read waiting on the stopped server: port %d, %v; want the other server's answer", n, err)
	}
	if a := <-inFlight; a.err != nil || a.port != maria(t).Port() || a.db != moveDB {
		t.Fatalf("prepared read on the stopped server: port %d, database %q, %v; want the other server's answer in %s", a.port, a.db, a.err, moveDB)
	}
	if n, db, err := preparedPort(1); err != nil || n != maria(t).Port() || db != moveDB {
		t.Fatalf("idle session with a prepared statement: port %d, database %q, %v; want it moved, in %s", n, db, err, moveDB)
	}
	// Its statement was prepared again on the new server by an internal
	// command, whose time limit (short_async_task_timeout, 1 s here) must
	// not outlive it: a statement longer than that runs to its end.
	var slept int
	if err := preparedIdle.QueryRowContext(ctx, "SELECT SLEEP(1.5)").Scan(&slept); err != nil || slept != 0 {
		t.Fatalf("a statement longer than short_async_task_timeout after the move: %d, %v", slept, err)
	}
	if n, err := port(idle); err != nil || n != maria(t).Port() {
		t.Fatalf("idle session after its server was found dead: port %d, %v; want it moved", n, err)
	}
	if _, err := port(stateful); err == nil {
		t.Fatal("a session with a user variable moved without it")
	}
	// The open transaction is lost: ERR 6002 until ROLLBACK, then the
	// session moves.
	if _, err := port(inTxn); sqlErrorCode(err) != mysqlproto.OBTransRollbacked {
		t.Fatalf("statement of a transaction on the stopped server: %v, want ERR 6002", err)
	}
	if _, err := inTxn.ExecContext(ctx, "ROLLBACK"); err != nil {
		t.Fatalf("ROLLBACK of the lost transaction: %v", err)
	}
	if n, err := port(inTxn); err != nil || n != maria(t).Port() {
		t.Fatalf("after ROLLBACK: port %d, %v; want the session moved", n, err)
	}
	// ROLLBACK AND CHAIN ends the lost transaction and opens another, on
	// the server the session moves to: what follows runs in it, not in
	// autocommit.
	if _, err := port(chained); sqlErrorCode(err) != mysqlproto.OBTransRollbacked {
		t.Fatalf("statement of a transaction on the stopped server: %v, want ERR 6002", err)
	}
	if _, err := chained.ExecContext(ctx, "ROLLBACK AND CHAIN"); err != nil {
		t.Fatalf("ROLLBACK AND CHAIN of the lost transaction: %v", err)
	}
	var inTrans, chainedPort int
	if err := chained.QueryRowContext(ctx, "SELECT @@in_transaction, @@port").Scan(&inTrans, &chainedPort); err != nil || inTrans != 1 || chainedPort != maria(t).Port() {
		t.Fatalf("after ROLLBACK AND CHAIN: in_transaction %d on port %d, %v; want a transaction open on %d", inTrans, chainedPort, err, maria(t).Port())
	}
	if _, err := chained.ExecContext(ctx, "ROLLBACK"); err != nil {
		t.Fatal(err)
	}
	if n := metricValue(t, p, "obgate_session_moved_total"); n < 2 {
		t.Fatalf("obgate_session_moved_total = %v, want at least 2", n)
	}
}

// sigstop stops a process and waits until the kernel shows it stopped
// (a signal is delivered asynchronously; the process may run briefly).
func sigstop(t *testing.T, pid int) {
	t.Helper()
	if err := syscall.Kill(pid, syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	waitFor(t, 10*time.Second, "process stopped", func() bool {
		b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
		if err != nil {
			return false
		}
		_, rest, _ := strings.Cut(string(b), ") ")
		return strings.HasPrefix(rest, "T")
	})
}
