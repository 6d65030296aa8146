package reactor_test

import (
	"context"
	"crypto/tls"
	"database/sql"
	"fmt"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"obgate/internal/testkit"
	"obgate/internal/testproxy"
	"obgate/tools/obsim"

	"github.com/go-sql-driver/mysql"
)

// The OceanBase-mode end-to-end tests run obgate in front of an obsim
// cluster whose nodes keep their data in the package's MariaDB (maria). obsim
// adds its own objects there: the database `oceanbase` (its views), the
// database obDB, the users proxyro and obUser. None of them is used by the
// mysql-mode tests (database obtest, users other and fuzz). Each top-level
// test starts its own cluster; tests do not run in parallel, so the views
// of one cluster are never rewritten under another.

const (
	obClusterName = "obe2e"
	obClusterID   = 11
	obTenant      = "test"
	obUser        = "app"
	obPass        = "app-Secret9"
	obDB          = "obe2e"
)

// obFullUser is the login name user@tenant#cluster.
var obFullUser = obUser + "@" + obTenant + "#" + obClusterName

// obTopology is a three-zone cluster, one node per zone, with tenant test
// on every zone and the account obUser.
func obTopology() *obsim.Topology {
	return &obsim.Topology{
		Cluster:   obClusterName,
		ClusterID: obClusterID,
		Zones: []obsim.Zone{
			{Name: "zone1", Region: "r1"},
			{Name: "zone2", Region: "r1"},
			{Name: "zone3", Region: "r2"},
		},
		Tenants: []obsim.Tenant{{Name: "sys"}, {Name: obTenant, PrimaryZone: "RANDOM"}},
		Users:   []obsim.User{{Name: obUser, Password: obPass}},
	}
}

// startOBSim starts a cluster on the package's MariaDB, with a fresh
// database obDB holding table kv(id, v); it is closed in t.Cleanup.
func startOBSim(t *testing.T) *obsim.Cluster {
	t.Helper()
	return startOBSimConfig(t, obsim.Config{})
}

// startOBSimConfig is startOBSim with more of obsim's configuration (the
// topology and the MariaDB are always the package's).
func startOBSimConfig(t *testing.T, cfg obsim.Config) *obsim.Cluster {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), hangLimit)
	defer cancel()
	cfg.Topology, cfg.MariaDBDSN = obTopology(), maria(t).DSN("root", "", "")
	c, err := obsim.Start(ctx, cfg)
	if err != nil {
		t.Fatalf("start obsim: %v", err)
	}
	t.Cleanup(func() {
		if err := c.Close(); err != nil {
			t.Errorf("obsim close: %v", err)
		}
	})
	for _, q := range []string{
		"DROP DATABASE IF EXISTS " + obDB,
		"CREATE DATABASE " + obDB,
		"CREATE TABLE " + obDB + ".kv (id INT PRIMARY KEY, v VARCHAR(64))",
	} {
		if _, err := c.Admin().ExecContext(ctx, q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	return c
}

// startOBSimTLS is startOBSim with nodes that accept TLS, with a
// self-signed certificate for 127.0.0.1; it returns the certificate's
// file, which is also the CA that verifies it.
func startOBSimTLS(t *testing.T) (*obsim.Cluster, string) {
	t.Helper()
	certFile, keyFile, err := testkit.WriteSelfSignedCert(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	cert, err := tls.LoadX509KeyPair(certFile, keyFile)
	if err != nil {
		t.Fatal(err)
	}
	return startOBSimConfig(t, obsim.Config{TLS: &tls.Config{Certificates: []tls.Certificate{cert}}}), certFile
}

// tlsLogins counts the logins c's nodes took over TLS.
func tlsLogins(c *obsim.Cluster) int64 {
	n := int64(0)
	for _, node := range c.Nodes() {
		n += node.TLSSessions()
	}
	return n
}

// resetOBSim undoes faults, empties the statement logs and the kv table
// between subtests that share a cluster.
func resetOBSim(t *testing.T, c *obsim.Cluster) {
	t.Helper()
	if err := c.Reset(); err != nil {
		t.Fatalf("obsim reset: %v", err)
	}
	c.ClearLogs()
	// Tests that run once per client I/O mode use the same keys each time.
	if _, err := c.Admin().Exec("DELETE FROM " + obDB + ".kv"); err != nil {
		t.Fatalf("empty kv: %v", err)
	}
}

// startOBProxy starts an obgate in OceanBase mode in front of c.
func startOBProxy(t *testing.T, c *obsim.Cluster, mode string, kv ...string) *testproxy.Proxy {
	t.Helper()
	cfg, err := testproxy.OBConfig(c.RSList(), c.Name(), mode, kv...)
	if err != nil {
		t.Fatal(err)
	}
	return testproxy.Start(t, cfg)
}

// obDriverConfig is a go-sql-driver configuration for obUser through obgate
// with the given login name and database.
func obDriverConfig(p *testproxy.Proxy, user, db string) *mysql.Config {
	c := mysql.NewConfig()
	c.User, c.Passwd, c.DBName = user, obPass, db
	c.Net, c.Addr = "tcp", p.Addr
	c.InterpolateParams = false
	c.Timeout = 10 * time.Second
	c.ReadTimeout = hangLimit
	c.WriteTimeout = hangLimit
	c.Logger = &mysql.NopLogger{}
	return c
}

// obConn opens one connection of a new pool (user app@test#obe2e, database
// obDB unless db is given); both are closed in t.Cleanup.
func obConn(t *testing.T, p *testproxy.Proxy, mod ...func(*mysql.Config)) (*sql.DB, *sql.Conn) {
	t.Helper()
	cfg := obDriverConfig(p, obFullUser, obDB)
	for _, f := range mod {
		f(cfg)
	}
	db := openDB(t, cfg)
	ctx, cancel := context.WithTimeout(context.Background(), hangLimit)
	defer cancel()
	conn, err := db.Conn(ctx)
	if err != nil {
		t.Fatalf("connect as %s: %v", cfg.User, err)
	}
	t.Cleanup(func() { conn.Close() })
	return db, conn
}

// markerSeq makes markers unique within the test binary.
var markerSeq atomic.Int64

// newMarker returns a string that identifies one client's statements in
// obsim's logs: tests put it into a comment of every statement they send.
func newMarker(prefix string) string {
	return fmt.Sprintf("%s_%d_%d", prefix, time.Now().UnixNano()%1e9, markerSeq.Add(1))
}

// proxyEntries returns the cluster's log entries of obgate's sessions
// (Client "proxy") whose SQL contains marker, in order.
func proxyEntries(c *obsim.Cluster, marker string) []obsim.LogEntry {
	var out []obsim.LogEntry
	for _, e := range c.Log() {
		if e.Client == "proxy" && strings.Contains(e.SQL, marker) {
			out = append(out, e)
		}
	}
	return out
}

// entryFor returns the single proxy log entry whose SQL contains marker,
// prepares left out (go-sql-driver prepares statements that have
// arguments; the execute is what runs them).
func entryFor(t *testing.T, c *obsim.Cluster, marker string) obsim.LogEntry {
	t.Helper()
	var es []obsim.LogEntry
	for _, e := range proxyEntries(c, marker) {
		if e.Command != "prepare" {
			es = append(es, e)
		}
	}
	if len(es) != 1 {
		t.Fatalf("%d log entries contain %q, want 1: %s", len(es), marker, describeEntries(es))
	}
	return es[0]
}

// nodesOf lists the distinct nodes of entries, sorted.
func nodesOf(es []obsim.LogEntry) []string {
	var out []string
	for _, e := range es {
		if !slices.Contains(out, e.Node) {
			out = append(out, e.Node)
		}
	}
	slices.Sort(out)
	return out
}

func describeEntries(es []obsim.LogEntry) string {
	var sb strings.Builder
	for _, e := range es {
		fmt.Fprintf(&sb, "\n  #%d %s sess=%d %s %s %s %q", e.Seq, e.Node, e.Session, e.Client, e.Protocol, e.Command, abbrev(e.SQL))
		if e.Result == "error" {
			fmt.Fprintf(&sb, " ERR %d", e.Code)
		}
	}
	return sb.String()
}

// nodeByAddr returns the node listening on addr.
func nodeByAddr(t *testing.T, c *obsim.Cluster, addr string) *obsim.Node {
	t.Helper()
	for _, n := range c.Nodes() {
		if n.Addr() == addr {
			return n
		}
	}
	t.Fatalf("no node listens on %q", addr)
	return nil
}

// rowStrings runs a query on q and returns its rows as strings ("NULL" for
// NULL).
func rowStrings(t *testing.T, q interface {
	QueryContext(context.Context, string, ...any) (*sql.Rows, error)
}, query string, args ...any) [][]string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), hangLimit)
	defer cancel()
	rows, err := q.QueryContext(ctx, query, args...)
	if err != nil {
		t.Fatalf("%s: %v", abbrev(query), err)
	}
	defer rows.Close()
	out, err := scanStrings(rows)
	if err != nil {
		t.Fatalf("%s: %v", abbrev(query), err)
	}
	return out
}

func scanStrings(rows *sql.Rows) ([][]string, error) {
	cols, err := rows.Columns()
	if err != nil {
		return nil, err
	}
	var out [][]string
	for rows.Next() {
		vals := make([]sql.NullString, len(cols))
		ptrs := make([]any, len(cols))
		for i := range vals {
			ptrs[i] = &vals[i]
		}
		if err := rows.Scan(ptrs...); err != nil {
			return nil, err
		}
		row := make([]string, len(cols))
		for i, v := range vals {
			row[i] = "NULL"
			if v.Valid {
				row[i] = v.String
			}
		}
		out = append(out, row)
	}
	return out, rows.Err()
}

// execCtx runs a statement on q with a hang guard and fails the test on
// error.
func execCtx(t *testing.T, q interface {
	ExecContext(context.Context, string, ...any) (sql.Result, error)
}, query string, args ...any) sql.Result {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), hangLimit)
	defer cancel()
	res, err := q.ExecContext(ctx, query, args...)
	if err != nil {
		t.Fatalf("%s: %v", abbrev(query), err)
	}
	return res
}
