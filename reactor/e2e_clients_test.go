package reactor_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"obgate/internal/testkit"
	"obgate/tools/obsim"
)

// The tests in this file run real third-party drivers, as separate
// programs, through obgate in OceanBase mode and directly against an
// obsim node: Node's mysql2 (tools/clients/node) for COM_CHANGE_USER and
// COM_RESET_CONNECTION, and MariaDB Connector/J (tools/clients/java) for
// the JDBC connection reset. Each program checks what it reads back and
// prints the checks as JSON; the tests assert them and read obsim's
// statement log for where the statements ran. `make deps` installs Node,
// npm, a JRE and the driver jar; the npm packages are installed once per
// package-lock.json under bin/clients.

// clientsDB is a second database for COM_CHANGE_USER with a database.
const clientsDB = "obe2e_clients"

// clientCheck is one check a client program made.
type clientCheck struct {
	Name  string          `json:"name"`
	OK    bool            `json:"ok"`
	Got   json.RawMessage `json:"got,omitempty"`
	Want  json.RawMessage `json:"want,omitempty"`
	Error string          `json:"error,omitempty"`
}

// clientResult is what a client program printed.
type clientResult struct {
	Driver        string        `json:"driver"`
	Version       string        `json:"version"`
	ServerVersion string        `json:"server_version"`
	OK            bool          `json:"ok"`
	Checks        []clientCheck `json:"checks"`
}

func (r *clientResult) failures() string {
	var sb strings.Builder
	for _, c := range r.Checks {
		switch {
		case c.Error != "":
			fmt.Fprintf(&sb, "\n  %s: %s", c.Name, c.Error)
		case !c.OK:
			fmt.Fprintf(&sb, "\n  %s: got %s, want %s", c.Name, c.Got, c.Want)
		}
	}
	return sb.String()
}

// check returns the check whose name starts with prefix.
func (r *clientResult) check(prefix string) (clientCheck, bool) {
	for _, c := range r.Checks {
		if strings.HasPrefix(c.Name, prefix) {
			return c, true
		}
	}
	return clientCheck{}, false
}

// runClient runs a client program with env added to its environment and
// returns the result it printed; the test fails when it printed none.
func runClient(t *testing.T, env []string, name string, args ...string) *clientResult {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*hangLimit)
	defer cancel()
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Env = append(os.Environ(), env...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	start := time.Now()
	err := cmd.Run()
	elapsed := time.Since(start).Round(time.Millisecond)
	var res clientResult
	lines := strings.Split(strings.TrimSpace(stdout.String()), "\n")
	if jerr := json.Unmarshal([]byte(lines[len(lines)-1]), &res); jerr != nil {
		t.Fatalf("%s %s: %v (no result: %v)\nstdout: %s\nstderr: %s", name, strings.Join(args, " "), err, jerr, stdout.String(), stderr.String())
	}
	if err != nil && res.OK {
		t.Fatalf("%s: exited with %v after printing ok", name, err)
	}
	if stderr.Len() > 0 {
		t.Logf("%s stderr: %s", name, abbrev(stderr.String()))
	}
	t.Logf("%s %s (server %q): %d checks in %v", res.Driver, res.Version, res.ServerVersion, len(res.Checks), elapsed)
	return &res
}

// repoRoot is the module's root directory (the tests run in reactor/).
func repoRoot(t *testing.T) string {
	t.Helper()
	root, err := filepath.Abs("..")
	if err == nil {
		_, err = os.Stat(filepath.Join(root, "go.mod"))
	}
	if err != nil {
		t.Fatalf("find the repository root: %v", err)
	}
	return root
}

// needTool returns the path of a program the tests need, failing the test
// with how to install it when it is missing.
func needTool(t *testing.T, name, pkg string) string {
	t.Helper()
	path, err := exec.LookPath(name)
	if err != nil {
		t.Fatalf("%s not found in PATH: `make deps` installs it (Debian package %s)", name, pkg)
	}
	return path
}

// nodeModules is the node_modules folder of tools/clients/node, installed
// once per package.json and package-lock.json (npm ci) into
// bin/clients/node-<hash>, where later runs find it.
var nodeModules struct {
	once sync.Once
	dir  string
	err  error
}

// mysql2Program returns the node binary and the script to run, with
// NODE_PATH pointing at the installed packages.
func mysql2Program(t *testing.T) (node, script string, env []string) {
	t.Helper()
	node = needTool(t, "node", "nodejs")
	needTool(t, "npm", "npm")
	root := repoRoot(t)
	nodeModules.once.Do(func() {
		nodeModules.dir, nodeModules.err = installNodeModules(root)
	})
	if nodeModules.err != nil {
		t.Fatalf("install the mysql2 client's packages: %v", nodeModules.err)
	}
	return node, filepath.Join(root, "tools", "clients", "node", "changeuser.js"), []string{"NODE_PATH=" + nodeModules.dir}
}

func installNodeModules(root string) (string, error) {
	src := filepath.Join(root, "tools", "clients", "node")
	h := sha256.New()
	files := map[string][]byte{}
	for _, f := range []string{"package.json", "package-lock.json"} {
		b, err := os.ReadFile(filepath.Join(src, f))
		if err != nil {
			return "", err
		}
		files[f] = b
		h.Write(b)
	}
	cache := filepath.Join(root, "bin", "clients")
	dir := filepath.Join(cache, "node-"+hex.EncodeToString(h.Sum(nil))[:12])
	modules := filepath.Join(dir, "node_modules")
	if _, err := os.Stat(filepath.Join(modules, "mysql2", "package.json")); err == nil {
		return modules, nil
	}
	if err := os.MkdirAll(cache, 0o755); err != nil {
		return "", err
	}
	tmp, err := os.MkdirTemp(cache, "tmp-node-")
	if err != nil {
		return "", err
	}
	defer os.RemoveAll(tmp)
	for f, b := range files {
		if err := os.WriteFile(filepath.Join(tmp, f), b, 0o644); err != nil {
			return "", err
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "npm", "ci", "--no-audit", "--no-fund", "--no-update-notifier", "--ignore-scripts")
	cmd.Dir = tmp
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("npm ci: %v\n%s", err, out)
	}
	// Another test process may have installed the same packages first.
	if err := os.Rename(tmp, dir); err != nil {
		if _, serr := os.Stat(filepath.Join(modules, "mysql2", "package.json")); serr != nil {
			return "", err
		}
	}
	return modules, nil
}

// jdbcJar is where Debian's libmariadb-java puts MariaDB Connector/J;
// OBGATE_MARIADB_JDBC_JAR names another jar.
const jdbcJar = "/usr/share/java/mariadb-java-client.jar"

// jdbcProgram returns the java binary and the arguments that run
// ResetCheck.java with the driver on the class path.
func jdbcProgram(t *testing.T) (java string, args []string) {
	t.Helper()
	java = needTool(t, "java", "default-jre-headless")
	jar := jdbcJar
	if j := os.Getenv("OBGATE_MARIADB_JDBC_JAR"); j != "" {
		jar = j
	}
	if _, err := os.Stat(jar); err != nil {
		t.Fatalf("MariaDB Connector/J: %v: `make deps` installs it (Debian package libmariadb-java)", err)
	}
	return java, []string{"-cp", jar, filepath.Join(repoRoot(t), "tools", "clients", "java", "ResetCheck.java")}
}

// clientsCA is the certificate the client programs' cluster serves TLS
// with, which verifies it too (startClientsCluster sets it).
var clientsCA string

// startClientsCluster starts obsim with the second account and database
// the client programs use; its nodes accept TLS (with clientsCA).
func startClientsCluster(t *testing.T) *obsim.Cluster {
	t.Helper()
	c, ca := startOBSimTLS(t)
	clientsCA = ca
	addOBUser2(t, c)
	ctx, cancel := context.WithTimeout(context.Background(), hangLimit)
	defer cancel()
	for _, q := range []string{"DROP DATABASE IF EXISTS " + clientsDB, "CREATE DATABASE " + clientsDB} {
		if _, err := c.Admin().ExecContext(ctx, q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	return c
}

// clientTarget is where a client program connects: obgate or an obsim
// node, and the user names that reach tenant obTenant there.
type clientTarget struct {
	name   string
	addr   string
	user   string
	user2  string
	client string // obsim's LogEntry.Client of the sessions
	// serverTLS: obgate reaches the nodes over TLS (enable_server_ssl).
	serverTLS bool
}

// obgateTarget starts an obgate in OceanBase mode in front of c that
// spreads statements over every node (enable_cached_server=false), with
// extra config name/value pairs.
func obgateTarget(t *testing.T, c *obsim.Cluster, mode string, kv ...string) clientTarget {
	t.Helper()
	p := startOBProxy(t, c, mode, append([]string{"enable_cached_server", "false"}, kv...)...)
	return clientTarget{name: "obgate " + mode, addr: p.Addr, user: obFullUser, user2: obUser2, client: "proxy"}
}

// clientTargets are obgate in each client I/O mode and c's first node.
func clientTargets(t *testing.T, c *obsim.Cluster) []clientTarget {
	t.Helper()
	var out []clientTarget
	for _, mode := range ioModes {
		out = append(out, obgateTarget(t, c, mode))
	}
	for _, mode := range ioModes {
		tg := obgateTarget(t, c, mode, "enable_server_ssl", "true", "server_ssl_verify", "verify_identity",
			"server_ssl_ca_file", clientsCA)
		tg.name += " server TLS"
		tg.serverTLS = true
		out = append(out, tg)
	}
	n := c.Nodes()[0]
	return append(out, clientTarget{name: "obsim " + n.Name(), addr: n.Addr(), user: obUser + "@" + obTenant, user2: obUser2, client: "direct"})
}

// clientEntries returns the log entries of the target's sessions whose SQL
// contains marker.
func clientEntries(c *obsim.Cluster, tg clientTarget, marker string) []obsim.LogEntry {
	var out []obsim.LogEntry
	for _, e := range c.Log() {
		if e.Client == tg.client && strings.Contains(e.SQL, marker) {
			out = append(out, e)
		}
	}
	return out
}

// commandsOf counts the target's log entries with the command.
func commandsOf(c *obsim.Cluster, tg clientTarget, command string) int {
	n := 0
	for _, e := range c.Log() {
		if e.Client == tg.client && e.Command == command {
			n++
		}
	}
	return n
}

// TestClientsMySQL2ChangeUser runs Node's mysql2 through obgate in
// OceanBase mode, with enable_cached_server=false so that its statements
// spread over every node, and directly against an obsim node: changeUser
// to the same user, to another user with another database and charset and
// back, and reset (COM_RESET_CONNECTION), each after a user variable,
// sql_mode, the isolation level and autocommit were changed and a
// transaction opened, leave every server session without the user
// variable, with the defaults, the right CURRENT_USER(), DATABASE() and
// collation; prepared statements, a table and a transaction work
// afterwards. obsim's log shows each statement ran as the user it should.
func TestClientsMySQL2ChangeUser(t *testing.T) {
	testkit.CheckLeaks(t)
	node, script, env := mysql2Program(t)
	c := startClientsCluster(t)
	for i, tg := range clientTargets(t, c) {
		t.Run(tg.name, func(t *testing.T) {
			resetOBSim(t, c)
			tlsBefore := tlsLogins(c)
			mk := newMarker("mysql2")
			host, port, _ := strings.Cut(tg.addr, ":")
			res := runClient(t, env, node, script, "--host", host, "--port", port,
				"--user", tg.user, "--password", obPass, "--database", obDB,
				"--user2", tg.user2, "--password2", obPass2, "--database2", clientsDB,
				"--table", "kv", "--id", strconv.Itoa(100+i), "--marker", mk, "--repeat", "12")
			if !res.OK {
				t.Fatalf("mysql2 through %s failed:%s", tg.name, res.failures())
			}
			if tg.serverTLS && tlsLogins(c) == tlsBefore {
				t.Errorf("no server session of %s logged in over TLS", tg.name)
			}
			if n := commandsOf(c, tg, "change_user"); n < 3 {
				t.Errorf("%d COM_CHANGE_USER reached the servers, want at least 3 (one per changeUser)", n)
			}
			if n := commandsOf(c, tg, "reset_connection"); n < 1 {
				t.Errorf("no COM_RESET_CONNECTION reached the servers")
			}
			es := clientEntries(c, tg, mk)
			t.Logf("%d statements ran on %v; %d COM_CHANGE_USER, %d COM_RESET_CONNECTION", len(es), nodesOf(es),
				commandsOf(c, tg, "change_user"), commandsOf(c, tg, "reset_connection"))
			if tg.client == "proxy" {
				if nodes := nodesOf(es); len(nodes) < 2 {
					t.Errorf("mysql2's statements ran on %v, want several nodes", nodes)
				}
			}
			// changeuser.js marks what it runs as user2 <marker>-u2-.
			for _, e := range es {
				want := obUser
				if strings.Contains(e.SQL, mk+"-u2-") {
					want = obUser2
				}
				if e.User != want || e.Tenant != obTenant {
					t.Errorf("entry #%d on %s ran as %s@%s, want %s@%s: %s", e.Seq, e.Node, e.User, e.Tenant, want, obTenant, abbrev(e.SQL))
				}
			}
		})
	}
}

// TestClientsJDBCReset runs MariaDB Connector/J's connection reset
// through obgate in OceanBase mode (statements spread over every node) and
// directly against an obsim node: the driver's COM_RESET_CONNECTION
// leaves no user variable of before on any server session, and prepared
// statements, autocommit and a rolled-back transaction work afterwards.
//
// The driver's public MariaDbConnection.reset() (2.7.6) sends
// COM_RESET_CONNECTION only to a server whose version names MariaDB
// 10.2.22, 10.3.13 or later; with mysql_version set to such a version it
// does so through obgate. With obgate's default version, which is the one
// its servers greet with (5.7.25-OceanBase_CE-v…), as with ODP's 5.6.25,
// it sends none, restores what it tracked itself and keeps @v, as it does
// against the servers themselves: that is the driver's choice, asserted
// here so that a change shows.
func TestClientsJDBCReset(t *testing.T) {
	testkit.CheckLeaks(t)
	java, launch := jdbcProgram(t)
	c := startClientsCluster(t)
	run := func(t *testing.T, tg clientTarget, reset string, id int) (*clientResult, string) {
		t.Helper()
		resetOBSim(t, c)
		tlsBefore := tlsLogins(c)
		mk := newMarker("jdbc")
		host, port, _ := strings.Cut(tg.addr, ":")
		args := append(launch, "--host", host, "--port", port, "--user", tg.user, "--password", obPass,
			"--database", obDB, "--table", "kv", "--id", strconv.Itoa(id), "--marker", mk, "--reset", reset, "--repeat", "12")
		res := runClient(t, nil, java, args...)
		if res.OK && tg.serverTLS && tlsLogins(c) == tlsBefore {
			t.Errorf("no server session of %s logged in over TLS", tg.name)
		}
		return res, mk
	}
	for i, tg := range clientTargets(t, c) {
		t.Run(tg.name+" protocol reset", func(t *testing.T) {
			res, mk := run(t, tg, "protocol", 200+i)
			if !res.OK {
				t.Fatalf("Connector/J through %s failed:%s", tg.name, res.failures())
			}
			if n := commandsOf(c, tg, "reset_connection"); n != 1 {
				t.Errorf("%d COM_RESET_CONNECTION reached the servers, want 1", n)
			}
			if tg.client == "proxy" {
				if nodes := nodesOf(clientEntries(c, tg, mk)); len(nodes) < 2 {
					t.Errorf("the driver's statements ran on %v, want several nodes", nodes)
				}
			}
		})
	}

	const mariaDBVersion = "5.5.5-10.6.12-MariaDB"
	t.Run("obgate mysql_version="+mariaDBVersion+" api reset", func(t *testing.T) {
		tg := obgateTarget(t, c, "netpoll", "mysql_version", mariaDBVersion)
		res, mk := run(t, tg, "api", 210)
		if !res.OK {
			t.Fatalf("Connector/J through %s failed:%s", tg.name, res.failures())
		}
		if n := commandsOf(c, tg, "reset_connection"); n != 1 {
			t.Errorf("%d COM_RESET_CONNECTION reached the servers, want 1", n)
		}
		if nodes := nodesOf(clientEntries(c, tg, mk)); len(nodes) < 2 {
			t.Errorf("the driver's statements ran on %v, want several nodes", nodes)
		}
	})

	for _, v := range []struct{ name, version string }{
		{"obgate default version (the servers')", ""},
		{"obgate mysql_version=5.6.25 (ODP's default)", "5.6.25"},
	} {
		t.Run(v.name+" api reset", func(t *testing.T) {
			apiResetOutsideMariaDB(t, c, run, v.version)
		})
	}
}

// apiResetOutsideMariaDB: against a server version that does not name
// MariaDB (the OceanBase servers' own, which obgate greets with by
// default, or ODP's 5.6.25) Connector/J's reset() sends no
// COM_RESET_CONNECTION.
func apiResetOutsideMariaDB(t *testing.T, c *obsim.Cluster, run func(*testing.T, clientTarget, string, int) (*clientResult, string), version string) {
	tg := obgateTarget(t, c, "netpoll")
	if version != "" {
		tg = obgateTarget(t, c, "netpoll", "mysql_version", version)
	}
	res, _ := run(t, tg, "api", 211)
	if version == "" && !strings.HasPrefix(res.ServerVersion, "5.7.25-OceanBase_CE-v") {
		t.Errorf("obgate greeted with %q, want the servers' own version", res.ServerVersion)
	}
	if n := commandsOf(c, tg, "reset_connection"); n != 0 {
		t.Errorf("%d COM_RESET_CONNECTION reached the servers; the driver sends none to version %q", n, res.ServerVersion)
	}
	// The driver restores autocommit, then refuses to restore the
	// isolation level it never learned (only its pool tells it): the
	// reset fails, the connection stays, @v and sql_mode stay.
	wantFailed := map[string]bool{"reset (api)": true, "reset: user, database, @v gone": true, "reset: session variables": true}
	for _, ck := range res.Checks {
		name, _, _ := strings.Cut(ck.Name, " (statement")
		if ck.OK == wantFailed[name] {
			t.Errorf("check %q: ok=%v, want %v: %s got %s, want %s", ck.Name, ck.OK, !ck.OK, ck.Error, ck.Got, ck.Want)
		}
	}
	if ck, _ := res.check("reset: user, database, @v gone"); !bytes.Contains(ck.Got, []byte(`"before-reset"`)) {
		t.Errorf("after MariaDbConnection.reset() against %q: %+v, want @v kept", res.ServerVersion, ck)
	}
}
