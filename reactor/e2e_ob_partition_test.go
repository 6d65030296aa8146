package reactor_test

import (
	"context"
	"database/sql"
	"fmt"
	"math/rand/v2"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"obgate/internal/testkit"
	"obgate/mysqlproto"
	"obgate/tools/obsim"

	"github.com/go-sql-driver/mysql"
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
		// KEY(b, a): the view lists a first (its place in the table); the
		// hash takes b first.
		table("kba_accounts", "CREATE TABLE kba_accounts (a INT NOT NULL, b VARCHAR(32) NOT NULL, v VARCHAR(32), PRIMARY KEY (a, b))",
			&obsim.PartSpec{Type: "KEY", Columns: []string{"b", "a"}, Num: 3}, nil),
		// binary keeps trailing spaces: 'x ' and 'x' are different keys.
		table("kbin_blobs", "CREATE TABLE kbin_blobs (k VARBINARY(32) PRIMARY KEY, v VARCHAR(32))",
			&obsim.PartSpec{Type: "KEY", Columns: []string{"k"}, Num: 5}, nil),
		// utf8mb4_general_ci weights from OceanBase's table: Hangul, kana
		// with dakuten, Georgian, Glagolitic weigh themselves.
		table("ko_names", "CREATE TABLE ko_names (name VARCHAR(32) CHARACTER SET utf8mb4 COLLATE utf8mb4_general_ci PRIMARY KEY, v VARCHAR(32))",
			&obsim.PartSpec{Type: "KEY", Columns: []string{"name"}, Num: 7}, nil),
		// RANGE(YEAR(d)), an expression obgate computes.
		table("ey_logs", "CREATE TABLE ey_logs (id INT NOT NULL, d DATE NOT NULL, v VARCHAR(32), PRIMARY KEY (id, d))",
			&obsim.PartSpec{Type: "RANGE", Columns: []string{"d"}, Expr: "YEAR(`d`)", Partitions: []obsim.PartDef{
				rangeDef("p2023", "2024"), rangeDef("p2024", "2025"), rangeDef("pmax", "MAXVALUE")}}, nil),
		// RANGE(UNIX_TIMESTAMP(ts)): TIMESTAMP keys in the session's time
		// zone (the tenant's +8:00 until a SET).
		table("ut_ticks", "CREATE TABLE ut_ticks (ts TIMESTAMP NOT NULL PRIMARY KEY, v VARCHAR(32))",
			&obsim.PartSpec{Type: "RANGE", Columns: []string{"ts"}, Expr: "UNIX_TIMESTAMP(ts)", Partitions: []obsim.PartDef{
				rangeDef("p0", "1704067200"), rangeDef("p1", "MAXVALUE")}}, nil),
		// KEY over DATE and DECIMAL; RANGE COLUMNS over DECIMAL.
		table("kd_days", "CREATE TABLE kd_days (d DATE NOT NULL, amount DECIMAL(10,2) NOT NULL, v VARCHAR(32), PRIMARY KEY (d, amount))",
			&obsim.PartSpec{Type: "KEY", Columns: []string{"d", "amount"}, Num: 5}, nil),
		table("rc_prices", "CREATE TABLE rc_prices (price DECIMAL(12,2) PRIMARY KEY, v VARCHAR(32))",
			&obsim.PartSpec{Type: "RANGE COLUMNS", Columns: []string{"price"}, Partitions: []obsim.PartDef{
				rangeDef("cheap", "'10.00'"), rangeDef("mid", "'100.50'"), rangeDef("dear", "MAXVALUE")}}, nil),
		// HASH partitions whose part ids are not in partition order (a DDL
		// rebuilt some): the i-th row is partition i.
		table("hp_orders", "CREATE TABLE hp_orders (id BIGINT PRIMARY KEY, v VARCHAR(32))",
			&obsim.PartSpec{Type: "HASH", Columns: []string{"id"}, Num: 4, PartIDs: []int64{500004, 500001, 500003, 500002}}, nil),
		// HASH(id DIV 10), an expression obgate does not compute.
		table("hd_items", "CREATE TABLE hd_items (id INT PRIMARY KEY, v VARCHAR(32))",
			&obsim.PartSpec{Type: "HASH", Columns: []string{"id"}, Expr: "id DIV 10", Num: 3}, nil),
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
	c, err := obsim.Start(ctx, obsim.Config{Topology: partTopology(readOnly), MariaDBDSN: maria(t).DSN("root", "", "")})
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
	a := rng.IntN(100)
	b := fmt.Sprintf("u%d", rng.IntN(30))
	blob := []string{"x", "x ", "x  ", "ab", "ab "}[rng.IntN(5)]
	hangul := []string{"한국어", "서울", "부산", "가", "각", "がぎぐ", "パン", "バス", "ქართული", "Ⰰⰰ", "豈", "Ω", "Ω", "😀"}[rng.IntN(14)]
	date := []string{"2023-01-01", "2023-12-31", "2024-01-01", "2024-02-29", "2024-12-31", "2031-06-15"}[rng.IntN(6)]
	stamp := []string{"2023-06-01 12:00:00", "2024-01-01 07:59:59", "2024-01-01 08:00:00", "2025-03-01 00:00:00"}[rng.IntN(4)]
	amount := []string{"0.00", "9.99", "10.00", "12.34", "100.49", "100.50", "-3.25", "99999999.99"}[rng.IntN(8)]
	forms = append(forms,
		form{fmt.Sprintf("SELECT %sv FROM kba_accounts WHERE a = %d AND b = '%s'", c, a, b), "SELECT " + c + "v FROM kba_accounts WHERE a = ? AND b = ?", []any{a, b}},
		form{fmt.Sprintf("SELECT %sv FROM kbin_blobs WHERE k = '%s'", c, blob), "SELECT " + c + "v FROM kbin_blobs WHERE k = ?", []any{blob}},
		form{fmt.Sprintf("SELECT %sv FROM ko_names WHERE name = '%s'", c, hangul), "SELECT " + c + "v FROM ko_names WHERE name = ?", []any{hangul}},
		form{fmt.Sprintf("SELECT %sv FROM ey_logs WHERE d = '%s'", c, date), "SELECT " + c + "v FROM ey_logs WHERE d = ?", []any{date}},
		form{fmt.Sprintf("SELECT %sv FROM ut_ticks WHERE ts = '%s'", c, stamp), "SELECT " + c + "v FROM ut_ticks WHERE ts = ?", []any{stamp}},
		form{fmt.Sprintf("SELECT %sv FROM kd_days WHERE d = '%s' AND amount = %s", c, date, amount), "SELECT " + c + "v FROM kd_days WHERE d = ? AND amount = ?", []any{date, amount}},
		form{fmt.Sprintf("SELECT %sv FROM rc_prices WHERE price = %s", c, amount), "SELECT " + c + "v FROM rc_prices WHERE price = ?", []any{amount}},
		form{fmt.Sprintf("SELECT %sv FROM hp_orders WHERE id = %d", c, id), "SELECT " + c + "v FROM hp_orders WHERE id = ?", []any{id}},
	)
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
// KEY and unpartitioned tables, and over the shapes a real cluster has:
// KEY(b, a) against the table's column order, a binary key with trailing
// spaces, Korean and Japanese general_ci keys, RANGE(YEAR(d)),
// RANGE(UNIX_TIMESTAMP(ts)), DATE and DECIMAL keys, HASH partitions whose
// ids are out of order: at least 99.9% must run on their partition's
// leader, and EXPLAIN ROUTE accounts for the others.
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
	var p1 obsim.PartitionInfo
	for _, ti := range c.Tables() {
		if ti.Name == "h_orders" {
			p1 = ti.Partitions[1]
		}
	}
	from, to := p1.Leader, "zone1-1"
	if from == to {
		to = "zone2-1"
	}
	// routedTo is the leader obgate's entry for h_orders gives p1, and when
	// the entry was fetched; "" while obgate has no entry.
	routedTo := func() (string, time.Time) {
		for _, e := range p.Server.Clusters().All()[0].TableEntries() {
			if e.Database == partDB && e.Table == "h_orders" {
				if l, ok := e.Tablet(p1.TabletID); ok {
					addr, _ := l.Leader()
					return addr, e.Updated
				}
			}
		}
		return "", time.Time{}
	}
	mk := newMarker("move")
	db := openDB(t, obDriverConfig(p, obFullUser, partDB))
	const clients = 4
	db.SetMaxIdleConns(clients)
	stop := make(chan struct{})
	var wg sync.WaitGroup
	errs := make(chan error, clients)
	var ran [clients]atomic.Uint64 // statements each client has completed
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
				ran[w].Add(1)
			}
		}()
	}
	halt := sync.OnceFunc(func() {
		close(stop)
		wg.Wait()
	})
	t.Cleanup(halt)
	clientFailed := func() {
		select {
		case err := <-errs:
			t.Fatalf("client error while the leader moved: %v", err)
		default:
		}
	}
	ranSoFar := func() (n [clients]uint64) {
		for i := range ran {
			n[i] = ran[i].Load()
		}
		return n
	}
	// ranSince reports whether every client completed a statement after
	// the counts before.
	ranSince := func(before [clients]uint64) bool {
		for i, n := range ranSoFar() {
			if n <= before[i] {
				return false
			}
		}
		return true
	}
	// Every client runs statements, and obgate's entry (p1 on from) was
	// fetched more than delay ago: the first miss after the move
	// refreshes it.
	testkit.EventuallyDescribe(t, hangLimit, func() bool {
		clientFailed()
		addr, fetched := routedTo()
		return ranSince([clients]uint64{}) && addr == c.Node(from).Addr() && time.Since(fetched) > delay
	}, func() string {
		addr, fetched := routedTo()
		return fmt.Sprintf("obgate routes p1 to %q (fetched %v ago), want %s fetched over %v ago; statements per client %v",
			addr, time.Since(fetched), c.Node(from).Addr(), delay, ranSoFar())
	})
	if err := c.MoveLeader(partDB+".h_orders", "p1", to); err != nil {
		t.Fatal(err)
	}
	movedAt := time.Now()
	atMove := c.Stats().Total.Proxy
	// obgate learns the new leader within delay and one fetch (a second
	// on this machine) after the move. The wait gives up well before the
	// clients' context ends, so that an obgate that never learns it is
	// told as such.
	testkit.EventuallyDescribe(t, hangLimit/4, func() bool {
		clientFailed()
		addr, _ := routedTo()
		return addr == c.Node(to).Addr()
	}, func() string {
		addr, _ := routedTo()
		return fmt.Sprintf("obgate still routes p1 to %q, want %s", addr, c.Node(to).Addr())
	})
	if took, limit := time.Since(movedAt), delay+time.Second; took > limit {
		t.Errorf("obgate learnt the new leader %v after the move, want within %v", took, limit)
	}
	// A statement each client had running then may have gone by the old
	// entry; once each has finished one more, every statement still to
	// come goes by the new one. obsim's counters, not its bounded logs,
	// count the statements.
	learnt := ranSoFar()
	testkit.Eventually(t, hangLimit, func() bool { clientFailed(); return ranSince(learnt) },
		"every client to finish the statement it ran when obgate learnt the move")
	atSettled := c.Stats().Total.Proxy
	const window = 10000
	testkit.EventuallyDescribe(t, hangLimit, func() bool {
		clientFailed()
		return c.Stats().Total.Proxy.Statements-atSettled.Statements >= window
	}, func() string {
		return fmt.Sprintf("%d statements after the move settled, want %d",
			c.Stats().Total.Proxy.Statements-atSettled.Statements, window)
	})
	atEnd := c.Stats().Total.Proxy
	halt()
	close(errs)
	for err := range errs {
		t.Fatalf("client error while the leader moved: %v", err)
	}
	after := int(atEnd.Statements - atSettled.Statements)
	remoteAfter := int(atEnd.Remote - atSettled.Remote)
	t.Logf("leader of p1 moved %s → %s: %d statements (%d remote) while obgate learnt it, %d after with %d remote",
		from, to, atSettled.Statements-atMove.Statements, atSettled.Remote-atMove.Remote, after, remoteAfter)
	if remoteAfter*1000 > after {
		t.Errorf("%d of %d statements after the move ran remote, want at most 0.1%%", remoteAfter, after)
	}
	// A statement that ran remote came back with ob_proxy_partition_hit
	// false, and obgate counted it as a miss.
	if atSettled.Remote > atMove.Remote {
		if missed, _ := metric(p, "odp_sql_request_total", "partitionHit", "false"); missed < 1 {
			t.Errorf("%d statements ran remote while obgate learnt the move, yet odp_sql_request_total counts no partitionHit=\"false\"",
				atSettled.Remote-atMove.Remote)
		}
	}
}

// TestOBWeakReadIDCAndForceReadonly checks LDC routing of weak reads: with
// proxy_idc_name set they go to the same-IDC replica (a session's
// @proxy_idc_name overrides it), strong statements still go to leaders;
// with FORCE_READONLY_ZONE weak reads go to the read-only zone only and
// other table statements get ERR 1235 (0A000), OB_NOT_SUPPORTED.
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
		if _, err := fconn.ExecContext(ctx, q); !isOBError(err, mysqlproto.OBErrNotSupported) {
			t.Fatalf("%s under FORCE_READONLY_ZONE: %v, want ERR 1235 (0A000), OceanBase's OB_NOT_SUPPORTED", q, err)
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

// TestOBPartitionExpressionsAndTimeZone: a partitioning expression obgate
// does not compute (HASH(id DIV 10)) is routed by the servers holding the
// table and EXPLAIN ROUTE says why; TIMESTAMP keys follow the session's
// time zone through a SET time_zone, which both obgate (from the server's
// session tracking) and the cluster apply.
func TestOBPartitionExpressionsAndTimeZone(t *testing.T) {
	testkit.CheckLeaks(t)
	c := startPartOBSim(t, false)
	p := startOBProxy(t, c, ioModes[0])
	_, conn := obConn(t, p, func(cfg *mysql.Config) { cfg.DBName = partDB })
	ctx, cancel := context.WithTimeout(context.Background(), hangLimit)
	defer cancel()

	ex := explainRoute(t, conn, "SELECT v FROM hd_items WHERE id = 15")
	if !strings.Contains(ex, "partitioning expression not computed") {
		t.Errorf("EXPLAIN ROUTE of an uncomputed expression:%s", ex)
	}
	mk := newMarker("expr")
	if _, err := conn.ExecContext(ctx, "SELECT /* "+mk+" */ v FROM hd_items WHERE id = 15"); err != nil {
		t.Fatal(err)
	}
	ex = explainRoute(t, conn, "SELECT v FROM ey_logs WHERE d = '2024-06-01'")
	if !strings.Contains(ex, "key values") {
		t.Errorf("EXPLAIN ROUTE of RANGE(YEAR(d)):%s", ex)
	}

	// +8:00, the tenant's time zone: 07:59:59 is 23:59:59 UTC the day
	// before, in p0. After SET time_zone = '+00:00' the same text is in p1.
	run := func(ts, want string) {
		t.Helper()
		m := newMarker("tz")
		if _, err := conn.ExecContext(ctx, "SELECT /* "+m+" */ v FROM ut_ticks WHERE ts = ?", ts); err != nil {
			t.Fatal(err)
		}
		e := entryFor(t, c, m)
		if !e.Local || len(e.Partitions) != 1 || e.Partitions[0] != want {
			t.Errorf("ts %s: ran on %s in %v (local %v), want %s on its leader", ts, e.Node, e.Partitions, e.Local, want)
		}
	}
	run("2024-01-01 07:59:59", "p0")
	run("2024-01-01 08:00:00", "p1")
	if _, err := conn.ExecContext(ctx, "SET time_zone = '+00:00'"); err != nil {
		t.Fatal(err)
	}
	run("2024-01-01 07:59:59", "p1")
	run("2023-12-31 23:59:59", "p0")
	if _, err := conn.ExecContext(ctx, "SET time_zone = '-05:00'"); err != nil {
		t.Fatal(err)
	}
	run("2023-12-31 18:59:59", "p0")
	run("2023-12-31 19:00:00", "p1")
}
