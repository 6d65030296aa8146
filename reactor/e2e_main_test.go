package reactor_test

import (
	"bytes"
	"context"
	"database/sql"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/go-sql-driver/mysql"

	"obgate/internal/mariadbd"
	"obgate/internal/testkit"
	"obgate/internal/testproxy"
	"obgate/mysqlproto"
)

// The end-to-end tests run obgate in this process, in mysql routing mode,
// in front of one MariaDB that TestMain starts for the whole package.
// Every test starts its own obgate (or one per group of subtests) and
// checks on the way out that stopping it left no goroutine behind.

// testDB is the database the tests create their tables in.
const testDB = "obtest"

// Users besides root (which has no password).
const (
	otherUser = "other" // all privileges on obtest, for "only their own" checks
	otherPass = "other-pw"
	fuzzUser  = "fuzz" // SELECT on obtest only: random bytes cannot shut MariaDB down
	fuzzPass  = "fuzz-pw"
	// fuzzStatementTime is how long MariaDB lets a statement of the fuzz
	// user run, so that no random input keeps a session busy for long.
	fuzzStatementTime = 5
)

// ioModes are the client transports every main suite runs with.
var ioModes = []string{"netpoll", "net"}

// hangLimit bounds waits that only end early when something is broken. It
// is a guard against hanging, not a statement about speed.
const hangLimit = 60 * time.Second

func TestMain(m *testing.M) {
	flag.Parse()
	if !testing.Short() { // -short runs the unit tests alone (maria skips)
		startMaria()
	}
	code := m.Run()
	if srv := mariaSrv; srv != nil {
		if err := srv.Stop(); err != nil {
			fmt.Fprintf(os.Stderr, "reactor e2e: stop MariaDB: %v\n", err)
		}
	}
	if mariaTLSDir != "" {
		os.RemoveAll(mariaTLSDir)
	}
	os.Exit(code)
}

// The package's MariaDB, started before the tests (its goroutines then
// predate every test's leak check). When it cannot start, the unit tests
// still run and every test that needs it fails (maria).
var (
	mariaSrv *mariadbd.Server
	mariaErr error
)

// The package's MariaDB accepts TLS with a self-signed certificate for
// 127.0.0.1, which is also the CA that verifies it (serverCA).
var (
	mariaTLSDir string
	serverCA    string
)

func startMaria() {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	var args []string
	if dir, err := os.MkdirTemp("", "obgate-maria-tls-"); err == nil {
		if cert, key, err := testkit.WriteSelfSignedCert(dir); err == nil {
			mariaTLSDir, serverCA = dir, cert
			args = []string{"--ssl-cert=" + cert, "--ssl-key=" + key, "--ssl-ca=" + cert}
		}
	}
	s, err := mariadbd.Start(ctx, mariadbd.Options{Args: args})
	if err != nil {
		mariaErr = fmt.Errorf("start MariaDB: %w", err)
		fmt.Fprintf(os.Stderr, "reactor e2e: %v; only the unit tests can pass\n", mariaErr)
		return
	}
	err = s.Exec(ctx,
		"CREATE DATABASE "+testDB,
		fmt.Sprintf("CREATE USER '%s'@'%%' IDENTIFIED BY '%s'", otherUser, otherPass),
		fmt.Sprintf("GRANT ALL ON %s.* TO '%s'@'%%'", testDB, otherUser),
		fmt.Sprintf("CREATE USER '%s'@'%%' IDENTIFIED BY '%s' WITH MAX_STATEMENT_TIME %d", fuzzUser, fuzzPass, fuzzStatementTime),
		fmt.Sprintf("GRANT SELECT ON %s.* TO '%s'@'%%'", testDB, fuzzUser),
	)
	if err != nil {
		_ = s.Stop()
		mariaErr = fmt.Errorf("set up MariaDB: %w", err)
		fmt.Fprintf(os.Stderr, "reactor e2e: %v; only the unit tests can pass\n", mariaErr)
		return
	}
	mariaSrv = s
}

// maria returns the package's MariaDB; a test that needs it fails when it
// could not start.
func maria(t testing.TB) *mariadbd.Server {
	t.Helper()
	testkit.EndToEnd(t)
	if mariaErr != nil {
		t.Fatalf("reactor e2e: %v", mariaErr)
	}
	return mariaSrv
}

// forEachMode runs f as a subtest per client I/O mode.
func forEachMode(t *testing.T, f func(t *testing.T, mode string)) {
	for _, mode := range ioModes {
		t.Run(mode, func(t *testing.T) { f(t, mode) })
	}
}

// startProxy starts an obgate in front of the package's MariaDB, with
// extra config name/value pairs.
func startProxy(t *testing.T, mode string, kv ...string) *testproxy.Proxy {
	t.Helper()
	cfg, err := testproxy.Config(maria(t).Addr(), mode, kv...)
	if err != nil {
		t.Fatal(err)
	}
	return testproxy.Start(t, cfg)
}

// driverConfig is a go-sql-driver configuration for user through obgate.
// Prepared statements are server-side (interpolateParams=false).
func driverConfig(p *testproxy.Proxy, user, pass, db string) *mysql.Config {
	c := mysql.NewConfig()
	c.User, c.Passwd, c.DBName = user, pass, db
	c.Net, c.Addr = "tcp", p.Addr
	c.InterpolateParams = false
	c.ParseTime = true
	c.Timeout = 10 * time.Second
	c.Logger = &mysql.NopLogger{} // the tests break connections on purpose
	return c
}

// openDB opens a pool with the configuration; it is closed in t.Cleanup.
func openDB(t *testing.T, c *mysql.Config) *sql.DB {
	t.Helper()
	conn, err := mysql.NewConnector(c)
	if err != nil {
		t.Fatal(err)
	}
	db := sql.OpenDB(conn)
	t.Cleanup(func() { db.Close() })
	return db
}

// rootDB opens a pool to obtest as root through obgate.
func rootDB(t *testing.T, p *testproxy.Proxy, mod ...func(*mysql.Config)) *sql.DB {
	t.Helper()
	c := driverConfig(p, "root", "", testDB)
	for _, f := range mod {
		f(c)
	}
	return openDB(t, c)
}

// directDB opens a pool to obtest as root on MariaDB itself, bypassing
// obgate, to check what really happened on the server.
func directDB(t *testing.T) *sql.DB {
	t.Helper()
	c := mysql.NewConfig()
	c.User, c.Net, c.Addr, c.DBName = "root", "tcp", maria(t).Addr(), testDB
	c.ParseTime = true
	return openDB(t, c)
}

func mustExec(t *testing.T, db interface {
	Exec(string, ...any) (sql.Result, error)
}, query string, args ...any) sql.Result {
	t.Helper()
	res, err := db.Exec(query, args...)
	if err != nil {
		t.Fatalf("%s: %v", abbrev(query), err)
	}
	return res
}

func queryInt(t *testing.T, db interface {
	QueryRow(string, ...any) *sql.Row
}, query string, args ...any) int64 {
	t.Helper()
	var n int64
	if err := db.QueryRow(query, args...).Scan(&n); err != nil {
		t.Fatalf("%s: %v", abbrev(query), err)
	}
	return n
}

// sqlErrorCode returns the MySQL error number in err, or 0.
func sqlErrorCode(err error) uint16 {
	var me *mysql.MySQLError
	if errors.As(err, &me) {
		return me.Number
	}
	return 0
}

// isOBError reports whether err is the ERR packet OceanBase sends for e
// (errno and SQLSTATE).
func isOBError(err error, e mysqlproto.OBErr) bool {
	var me *mysql.MySQLError
	return errors.As(err, &me) && e.Is(me.Number, string(me.SQLState[:]))
}

func abbrev(s string) string {
	if len(s) > 100 {
		return s[:100] + "..."
	}
	return s
}

// cli runs the mariadb command-line client against obgate (no option
// files), feeding it stdin, and returns its standard output. It fails the
// test when the client fails.
func cli(t *testing.T, p *testproxy.Proxy, stdin string, args ...string) string {
	t.Helper()
	out, errOut, err := cliResult(p, stdin, args...)
	if err != nil {
		t.Fatalf("mariadb %s: %v\nstderr: %s\nstdout: %s", strings.Join(args, " "), err, errOut, abbrev(out))
	}
	return out
}

// cliResult runs the mariadb client and returns what it printed and how
// it exited.
func cliResult(p *testproxy.Proxy, stdin string, args ...string) (stdout, stderr string, err error) {
	host, port, _ := strings.Cut(p.Addr, ":")
	full := append([]string{"--no-defaults", "--protocol=TCP", "-h", host, "-P", port, "--connect-timeout=10"}, args...)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "mariadb", full...)
	cmd.Stdin = strings.NewReader(stdin)
	var o, e bytes.Buffer
	cmd.Stdout, cmd.Stderr = &o, &e
	err = cmd.Run()
	return o.String(), e.String(), err
}

// lines splits output into lines without the trailing empty one.
func lines(s string) []string {
	s = strings.TrimRight(s, "\n")
	if s == "" {
		return nil
	}
	return strings.Split(s, "\n")
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }

// waitNoClients waits until obgate has torn down every client session, so
// that a test that lists sessions sees none left over from the previous
// one (a closed connection's teardown runs after the client has gone).
func waitNoClients(t *testing.T, p *testproxy.Proxy) {
	t.Helper()
	testkit.EventuallyDescribe(t, hangLimit, func() bool { return p.Server.ClientCount() == 0 }, func() string {
		return fmt.Sprintf("%d client connections still open: %s", p.Server.ClientCount(),
			strings.Join(p.Server.DescribeSessions(), "; "))
	})
}
