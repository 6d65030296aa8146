package reactor_test

import (
	"context"
	"fmt"
	"testing"

	"obgate/tools/obsim"

	"github.com/go-sql-driver/mysql"
)

// TestOBPLRoute: procedure p_touch updates table t1, whose leader is
// zone2-1 (t2 leads on zone3-1, so the tenant has no single leader), and
// the cluster publishes its route SQL in __all_virtual_proxy_routine. With
// enable_pl_route (the default) every CALL p_touch goes to zone2-1; off,
// CALLs spread over the tenant's servers (enable_cached_server is off).
func TestOBPLRoute(t *testing.T) {
	const db = "obe2e_pl"
	c := startOBSimWith(t, func(topo *obsim.Topology) {
		topo.Tables = []obsim.Table{
			{Tenant: obTenant, Database: db, Name: "t1", Create: "CREATE TABLE t1 (id INT PRIMARY KEY, v INT)", Leaders: []string{"zone2-1"}},
			{Tenant: obTenant, Database: db, Name: "t2", Create: "CREATE TABLE t2 (id INT PRIMARY KEY, v INT)", Leaders: []string{"zone3-1"}},
		}
	})
	ctx := context.Background()
	const routeSQL = "UPDATE t1 SET v = v + 1 WHERE id = k"
	for _, q := range []string{
		"CREATE PROCEDURE " + db + ".p_touch(IN k INT) " + routeSQL,
		"INSERT INTO oceanbase.__all_virtual_proxy_routine (tenant_name, database_name, package_name, routine_name, routine_id, routine_type, schema_version, routine_sql) VALUES ('" +
			obTenant + "', '" + db + "', '', 'p_touch', 500100, 1, 1, '" + routeSQL + "')",
	} {
		if _, err := c.Admin().ExecContext(ctx, q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	p := startOBProxy(t, c, "net", "enable_cached_server", "false")
	_, conn := obConn(t, p, func(cfg *mysql.Config) { cfg.DBName = db })
	run := func(mk string, n int) []string {
		t.Helper()
		for i := range n {
			if _, err := conn.ExecContext(ctx, fmt.Sprintf("CALL p_touch(1) /* %s-%d */", mk, i)); err != nil {
				t.Fatal(err)
			}
		}
		var es []obsim.LogEntry
		for _, e := range proxyEntries(c, mk) {
			if e.Command != "prepare" {
				es = append(es, e)
			}
		}
		if len(es) != n {
			t.Fatalf("%d log entries for %d CALLs: %s", len(es), n, describeEntries(es))
		}
		return nodesOf(es)
	}
	if _, ok := p.Server.Clusters().All()[0].SingleLeader(obTenant); ok {
		t.Fatal("the tenant has a single leader: the test would not see PL routing")
	}
	if nodes := run(newMarker("pl"), 15); len(nodes) != 1 || nodes[0] != "zone2-1" {
		t.Errorf("with enable_pl_route, 15 CALLs ran on %v, want t1's leader zone2-1 only", nodes)
	}
	if _, err := p.Store.Set("enable_pl_route", "false"); err != nil {
		t.Fatal(err)
	}
	if nodes := run(newMarker("nopl"), 30); len(nodes) < 2 {
		t.Errorf("enable_pl_route off: 30 CALLs ran on %v only, want them spread", nodes)
	}
}
