package reactor_test

import (
	"context"
	"database/sql"
	"fmt"
	"math/rand/v2"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-sql-driver/mysql"

	"obgate/internal/testkit"
	"obgate/mysqlproto"
	"obgate/tools/obsim"
)

// The partition-routing tests run obgate in front of a cluster whose
// tenant has partitioned tables of every kind obsim models, in database
// partDB; obsim's statement logs tell where each statement ran and whether
// it ran as a local or a remote plan.

const partDB = "obpart"

// partTopology is obTopology with tables of every partitioning kind, and,
// with readOnly, a fourth zone of type ReadOnly.
func partTopology(readOnly bool) *obsim.Topology {
	topo := obTopology()
	topo.Zones[0].IDC, topo.Zones[1].IDC, topo.Zones[2].IDC = "idc1", "idc2", "idc3"
	if readOnly {
		topo.Zones = append(topo.Zones, obsim.Zone{Name: "zone4", Region: "r1", IDC: "idc4", Type: "ReadOnly"})
	}
	table := func(name, create string, part, sub *obsim.PartSpec) obsim.Table {
		return obsim.Table{Tenant: obTenant, Database: partDB, Name: name, Create: create, Part: part, Sub: sub}
	}
	rangeDef := func(name, bound string) obsim.PartDef {
		return obsim.PartDef{Name: name, LessThan: []string{bound}}
	}
	listDef := func(name string, values ...string) obsim.PartDef {
		d := obsim.PartDef{Name: name}
		for _, v := range values {
			d.Values = append(d.Values, obsim.Tuple{v})
		}
		return d
	}
	topo.Tables = []obsim.Table{
		table("h_orders", "CREATE TABLE h_orders (id BIGINT PRIMARY KEY, v VARCHAR(32))",
			&obsim.PartSpec{Type: "HASH", Columns: []string{"id"}, Num: 4}, nil),
		table("k_accounts", "CREATE TABLE k_accounts (name VARCHAR(32) PRIMARY KEY, v VARCHAR(32))",
			&obsim.PartSpec{Type: "KEY", Columns: []string{"name"}, Num: 3}, nil),
		table("r_events", "CREATE TABLE r_events (id INT PRIMARY KEY, v VARCHAR(32))",
			&obsim.PartSpec{Type: "RANGE", Columns: []string{"id"}, Partitions: []obsim.PartDef{
				rangeDef("p100", "100"), rangeDef("p200", "200"), rangeDef("pmax", "MAXVALUE")}}, nil),
		table("l_codes", "CREATE TABLE l_codes (code INT PRIMARY KEY, v VARCHAR(32))",
			&obsim.PartSpec{Type: "LIST", Columns: []string{"code"}, Partitions: []obsim.PartDef{
				listDef("p0", "1", "2", "3"), listDef("p1", "4", "5"), listDef("pd", "DEFAULT")}}, nil),
		table("lc_shops", "CREATE TABLE lc_shops (region VARCHAR(8) PRIMARY KEY, v VARCHAR(32))",
			&obsim.PartSpec{Type: "LIST COLUMNS", Columns: []string{"region"}, Partitions: []obsim.PartDef{
				listDef("p_east", "'hz'", "'sh'"), listDef("p_north", "'bj'"), listDef("p_other", "DEFAULT")}}, nil),
		table("rk_metrics", "CREATE TABLE rk_metrics (day INT NOT NULL, host VARCHAR(32) NOT NULL, v VARCHAR(32), PRIMARY KEY (day, host))",
			&obsim.PartSpec{Type: "RANGE COLUMNS", Columns: []string{"day"}, Partitions: []obsim.PartDef{
				rangeDef("p0", "20240101"), rangeDef("p1", "MAXVALUE")}},
			&obsim.PartSpec{Type: "KEY", Columns: []string{"host"}, Num: 2}),
		{Tenant: obTenant, Database: partDB, Name: "plain", Create: "CREATE TABLE plain (id INT PRIMARY KEY, v VARCHAR(32))",
			Leaders: []string{"zone2-1"}},
	}
	return topo
}

// startPartOBSim starts a partition-routing cluster on the package's
// MariaDB, in a fresh database partDB.
func startPartOBSim(t *testing.T, readOnly bool) *obsim.Cluster {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), hangLimit)
	defer cancel()
	if _, err := directDB(t).ExecContext(ctx, "DROP DATABASE IF EXISTS "+partDB); err != nil {
		t.Fatal(err)
	}
	if _, err := directDB(t).ExecContext(ctx, "CREATE DATABASE "+partDB); err != nil {
		t.Fatal(err)
	}
	c, err := obsim.Start(ctx, obsim.Config{Topology: partTopology(readOnly), MariaDBDSN: mdb.DSN("root", "", "")})
	if err != nil {
		t.Fatalf("start obsim: %v", err)
	}
	t.Cleanup(func() {
		if err := c.Close(); err != nil {
			t.Errorf("obsim close: %v", err)
		}
	})
	return c
}

// pointStatement returns a random point statement on one of the
// partitioned tables, as text or as a prepared statement with args, with
// marker in a comment.
func pointStatement(rng *rand.Rand, marker string) (query string, args []any) {
	id := rng.IntN(400)
	name := fmt.Sprintf("n%d", rng.IntN(50))
	region := []string{"hz", "sh", "bj", "gz", "xa"}[rng.IntN(5)]
	code := 1 + rng.IntN(8)
	day := []int{20230105, 20231231, 20240101, 20250601}[rng.IntN(4)]
	host := fmt.Sprintf("h%d", rng.IntN(10))
	prepared := rng.IntN(2) == 0
	c := "/* " + marker + " */ "
	type form struct {
		text string
		ps   string
		args []any
	}
	forms := []form{
		{fmt.Sprintf("SELECT %sv FROM h_orders WHERE id = %d", c, id), "SELECT " + c + "v FROM h_orders WHERE id = ?", []any{id}},
		{fmt.Sprintf("UPDATE %sh_orders SET v = 'u' WHERE id = %d", c, id), "UPDATE " + c + "h_orders SET v = 'u' WHERE id = ?", []any{id}},
		{fmt.Sprintf("REPLACE %sINTO h_orders (id, v) VALUES (%d, 'r')", c, id), "REPLACE " + c + "INTO h_orders (id, v) VALUES (?, 'r')", []any{id}},
		{fmt.Sprintf("SELECT %sv FROM k_accounts WHERE name = '%s'", c, name), "SELECT " + c + "v FROM k_accounts WHERE name = ?", []any{name}},
		{fmt.Sprintf("SELECT %sv FROM r_events WHERE id = %d", c, id), "SELECT " + c + "v FROM r_events WHERE id = ?", []any{id}},
		{fmt.Sprintf("SELECT %sv FROM l_codes WHERE code = %d", c, code), "SELECT " + c + "v FROM l_codes WHERE code = ?", []any{code}},
		{fmt.Sprintf("SELECT %sv FROM lc_shops WHERE region = '%s'", c, region), "SELECT " + c + "v FROM lc_shops WHERE region = ?", []any{region}},
		{fmt.Sprintf("SELECT %sv FROM rk_metrics WHERE day = %d AND host = '%s'", c, day, host),
			"SELECT " + c + "v FROM rk_metrics WHERE day = ? AND host = ?", []any{day, host}},
		{fmt.Sprintf("SELECT %sv FROM plain WHERE id = %d", c, id), "SELECT " + c + "v FROM plain WHERE id = ?", []any{id}},
	}
	f := forms[rng.IntN(len(forms))]
	if prepared {
		return f.ps, f.args
	}
	return f.text, nil
}

// explainRoute runs EXPLAIN ROUTE on conn and returns its rows as text.
func explainRoute(t *testing.T, conn *sql.Conn, query string) string {
	t.Helper()
	var sb strings.Builder
	for _, row := range rowStrings(t, conn, "EXPLAIN ROUTE "+query) {
		fmt.Fprintf(&sb, "\n    %s: %s", row[0], row[1])
	}
	return sb.String()
}

// TestOBPartitionRoutingLocal sends 10,000 random point statements (text
// and prepared) over HASH, KEY, RANGE, LIST, LIST COLUMNS, RANGE COLUMNS +
// KEY and unpartitioned tables: at least 99.9% must run on their
// partition's leader, and EXPLAIN ROUTE accounts for the others.
func TestOBPartitionRoutingLocal(t *testing.T) {
	testkit.CheckLeaks(t)
	c := startPartOBSim(t, false)
	p := startOBProxy(t, c, ioModes[0])
	const clients, perClient = 4, 2500
	mk := newMarker("part")
	db := openDB(t, obDriverConfig(p, obFullUser, partDB))
	db.SetMaxIdleConns(clients)
	var wg sync.WaitGroup
	errs := make(chan error, clients)
	for w := range clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
			defer cancel()
			conn, err := db.Conn(ctx)
			if err != nil {
				errs <- err
				return
			}
			defer conn.Close()
			rng := rand.New(rand.NewPCG(uint64(w), 42))
			for range perClient {
				q, args := pointStatement(rng, mk)
				var err error
				if args == nil {
					_, err = conn.ExecContext(ctx, q)
				} else {
					_, err = conn.ExecContext(ctx, q, args...)
				}
				if err != nil {
					errs <- fmt.Errorf("%s %v: %w", q, args, err)
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	var total, remote int
	var misses []obsim.LogEntry
	for _, e := range proxyEntries(c, mk) {
		if e.Command == "prepare" {
			continue
		}
		total++
		if !e.Local {
			remote++
			misses = append(misses, e)
		}
	}
	if total != clients*perClient {
		t.Fatalf("obsim logged %d statements, want %d", total, clients*perClient)
	}
	t.Logf("%d statements, %d remote (%.3f%%)", total, remote, 100*float64(remote)/float64(total))
	_, conn := obConn(t, p, func(cfg *mysql.Config) { cfg.DBName = partDB })
	for i, e := range misses {
		if i < 20 {
			t.Logf("remote on %s: %s (partitions %v)%s", e.Node, e.SQL, e.Partitions, explainRoute(t, conn, e.SQL))
		}
	}
	if remote*1000 > total {
		t.Errorf("%d of %d statements ran as remote plans, want at most 0.1%%", remote, total)
	}
}

// TestOBPartitionLeaderMove moves a partition's leader under load: after
// delay_update_entry_interval and one fetch, statements on it run on the
// new leader again (at most 0.1% remote after that), and no client sees an
// error.
func TestOBPartitionLeaderMove(t *testing.T) {
	testkit.CheckLeaks(t)
	c := startPartOBSim(t, false)
	const delay = time.Second
	p := startOBProxy(t, c, ioModes[0], "delay_update_entry_interval", delay.String())
	mk := newMarker("move")
	db := openDB(t, obDriverConfig(p, obFullUser, partDB))
	const clients = 4
	db.SetMaxIdleConns(clients)
	stop := make(chan struct{})
	var wg sync.WaitGroup
	errs := make(chan error, clients)
	for w := range clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			conn, err := db.Conn(ctx)
			if err != nil {
				errs <- err
				return
			}
			defer conn.Close()
			rng := rand.New(rand.NewPCG(uint64(w), 7))
			for {
				select {
				case <-stop:
					return
				default:
				}
				q := fmt.Sprintf("SELECT /* %s */ v FROM h_orders WHERE id = %d", mk, rng.IntN(400))
				if _, err := conn.ExecContext(ctx, q); err != nil {
					errs <- fmt.Errorf("%s: %w", q, err)
					return
				}
			}
		}()
	}
	time.Sleep(time.Second)
	var from string
	for _, ti := range c.Tables() {
		if ti.Name == "h_orders" {
			from = ti.Partitions[1].Leader
		}
	}
	to := "zone1-1"
	if from == to {
		to = "zone2-1"
	}
	if err := c.MoveLeader(partDB+".h_orders", "p1", to); err != nil {
		t.Fatal(err)
	}
	movedAt := time.Now()
	atMove := c.Stats().Total.Proxy
	// The entry was fetched more than delay ago: the first miss refreshes
	// it. Allow one fetch (a second on this machine) on top. obsim's
	// counters, not its bounded logs, count the statements.
	settled := movedAt.Add(delay + time.Second)
	time.Sleep(time.Until(settled))
	atSettled := c.Stats().Total.Proxy
	time.Sleep(3 * time.Second)
	atEnd := c.Stats().Total.Proxy
	close(stop)
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatalf("client error while the leader moved: %v", err)
	}
	after := int(atEnd.Statements - atSettled.Statements)
	remoteAfter := int(atEnd.Remote - atSettled.Remote)
	t.Logf("leader of p1 moved %s → %s: %d statements (%d remote) while obgate learnt it, %d after with %d remote",
		from, to, atSettled.Statements-atMove.Statements, atSettled.Remote-atMove.Remote, after, remoteAfter)
	if after < 100 {
		t.Fatalf("only %d statements after the move settled", after)
	}
	if remoteAfter*1000 > after {
		t.Errorf("%d of %d statements after the move ran remote, want at most 0.1%%", remoteAfter, after)
	}
}

// TestOBWeakReadIDCAndForceReadonly checks LDC routing of weak reads: with
// proxy_idc_name set they go to the same-IDC replica (a session's
// @proxy_idc_name overrides it), strong statements still go to leaders;
// with FORCE_READONLY_ZONE weak reads go to the read-only zone only and
// other table statements get ERR 4007.
func TestOBWeakReadIDCAndForceReadonly(t *testing.T) {
	testkit.CheckLeaks(t)
	c := startPartOBSim(t, true)
	p := startOBProxy(t, c, ioModes[0], "proxy_idc_name", "idc2")
	_, conn := obConn(t, p, func(cfg *mysql.Config) { cfg.DBName = partDB })
	mk := newMarker("weak")
	weakOn := func(suffix, node string, what string) {
		t.Helper()
		for i := range 30 {
			execCtx(t, conn, fmt.Sprintf("SELECT /*+ READ_CONSISTENCY(WEAK) */ v FROM h_orders WHERE id = %d /* %s-%s */", i, mk, suffix))
		}
		es := proxyEntries(c, mk+"-"+suffix)
		if len(es) != 30 {
			t.Fatalf("%s: %d log entries", what, len(es))
		}
		for _, e := range es {
			if e.Node != node || !e.Weak || !e.Local {
				t.Fatalf("%s: weak read ran on %s (weak %v, local %v), want %s: %s", what, e.Node, e.Weak, e.Local, node, e.SQL)
			}
		}
	}
	// A read-only zone exists: READONLY_ZONE_FIRST, the read-only replica
	// of the proxy's region (zone4, region r1) before the read-write one
	// of its IDC.
	weakOn("r", "zone4-1", "proxy_idc_name=idc2, READONLY_ZONE_FIRST")
	execCtx(t, conn, "SET ob_route_policy = 'MERGE_IDC_ORDER'")
	weakOn("w", "zone2-1", "proxy_idc_name=idc2, MERGE_IDC_ORDER")
	execCtx(t, conn, "SET @proxy_idc_name = 'idc3'")
	weakOn("u", "zone3-1", "@proxy_idc_name=idc3, MERGE_IDC_ORDER")
	for i := range 30 {
		execCtx(t, conn, fmt.Sprintf("SELECT v FROM h_orders WHERE id = %d /* %s-s */", i, mk))
	}
	for _, e := range proxyEntries(c, mk+"-s") {
		if !e.Local {
			t.Fatalf("strong read ran as a remote plan on %s: %s", e.Node, e.SQL)
		}
	}

	pf := startOBProxy(t, c, ioModes[0], "proxy_route_policy", "FORCE_READONLY_ZONE")
	_, fconn := obConn(t, pf, func(cfg *mysql.Config) { cfg.DBName = partDB })
	for i := range 20 {
		execCtx(t, fconn, fmt.Sprintf("SELECT /*+ READ_CONSISTENCY(WEAK) */ v FROM h_orders WHERE id = %d /* %s-f */", i, mk))
	}
	for _, e := range proxyEntries(c, mk+"-f") {
		if e.Node != "zone4-1" {
			t.Fatalf("weak read under FORCE_READONLY_ZONE ran on %s: %s", e.Node, e.SQL)
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), hangLimit)
	defer cancel()
	for _, q := range []string{"SELECT v FROM h_orders WHERE id = 1", "UPDATE h_orders SET v = 'x' WHERE id = 1"} {
		if _, err := fconn.ExecContext(ctx, q); sqlErrorCode(err) != 4007 {
			t.Fatalf("%s under FORCE_READONLY_ZONE: %v, want ERR 4007", q, err)
		}
	}
	execCtx(t, fconn, "SET @a = 1") // session statements still run
}

// TestOBShowProxyRouteAndExplain checks the admin views of the location
// cache: SHOW PROXYROUTE lists the cached tables with their leaders, SHOW
// PROXYROUTE PARTITION their tablets, and EXPLAIN ROUTE names the tablet,
// the leader first and the server used.
func TestOBShowProxyRouteAndExplain(t *testing.T) {
	testkit.CheckLeaks(t)
	c := startPartOBSim(t, false)
	p := startOBProxy(t, c, ioModes[0])
	_, conn := obConn(t, p, func(cfg *mysql.Config) { cfg.DBName = partDB })
	execCtx(t, conn, "SELECT v FROM h_orders WHERE id = 5")
	execCtx(t, conn, "SELECT v FROM plain WHERE id = 5")
	admin := dialClient(t, p, "root@proxysys", "")
	defer admin.Close()
	rows := adminRows(t, admin, "SHOW PROXYROUTE LIKE '% % obpart %'")
	tables := map[string][]string{}
	for _, r := range rows {
		tables[r[3]] = r
	}
	if r, ok := tables["h_orders"]; !ok || r[4] != "AVAIL" || r[5] != "4" {
		t.Fatalf("SHOW PROXYROUTE: %q", rows)
	}
	if r := tables["plain"]; !strings.Contains(r[17], nodeAddr(c, "zone2-1")+" LEADER") {
		t.Fatalf("SHOW PROXYROUTE plain: %q, want leader %s", r, nodeAddr(c, "zone2-1"))
	}
	parts := adminRows(t, admin, "SHOW PROXYROUTE PARTITION LIKE '% % obpart h_orders'")
	if len(parts) != 4 {
		t.Fatalf("SHOW PROXYROUTE PARTITION: %q, want 4 tablets", parts)
	}
	var leader string
	for _, ti := range c.Tables() {
		if ti.Name == "h_orders" {
			leader = nodeAddr(c, ti.Partitions[5%4].Leader)
		}
	}
	out := explainRoute(t, conn, "SELECT v FROM h_orders WHERE id = 5")
	if !strings.Contains(out, "candidate 1: "+leader) || !strings.Contains(out, "used: "+leader) ||
		!strings.Contains(out, "partition leader of a strong statement") {
		t.Fatalf("EXPLAIN ROUTE, leader %s:%s", leader, out)
	}
}

func nodeAddr(c *obsim.Cluster, name string) string { return c.Node(name).Addr() }

// adminRows runs an internal command and returns its rows as strings.
func adminRows(t *testing.T, cl *mysqlproto.Client, q string) [][]string {
	t.Helper()
	res, err := cl.Query(q)
	if err != nil {
		t.Fatalf("%s: %v", q, err)
	}
	var out [][]string
	for _, r := range res.Rows {
		row := make([]string, len(r))
		for i, v := range r {
			row[i] = string(v)
		}
		out = append(out, row)
	}
	return out
}
