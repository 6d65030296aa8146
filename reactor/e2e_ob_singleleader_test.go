package reactor_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/go-sql-driver/mysql"
	"obgate/tools/obsim"
)

// TestOBSingleLeaderNode: tenant test's only table has its leader on
// zone2-1, so every user log stream of the tenant is led there. With
// enable_single_leader_node_routing (ODP's default) obgate finds that from
// CDB_OB_LS_LOCATIONS and sends the tenant's strong statements, a
// tableless SELECT included, to zone2-1; turned off, tableless statements
// spread over the tenant's servers again (enable_cached_server is off).
func TestOBSingleLeaderNode(t *testing.T) {
	const db = "obe2e_sl"
	c := startOBSimWith(t, func(topo *obsim.Topology) {
		topo.Tables = []obsim.Table{{Tenant: obTenant, Database: db, Name: "only",
			Create: "CREATE TABLE only (id INT PRIMARY KEY, v VARCHAR(32))", Leaders: []string{"zone2-1"}}}
	})
	p := startOBProxy(t, c, "net", "enable_cached_server", "false")
	_, conn := obConn(t, p, func(cfg *mysql.Config) { cfg.DBName = db })
	ctx := context.Background()
	run := func(mk string, n int) []string {
		t.Helper()
		for i := range n {
			var v int
			if err := conn.QueryRowContext(ctx, fmt.Sprintf("SELECT %d /* %s-%d */", i, mk, i)).Scan(&v); err != nil {
				t.Fatal(err)
			}
		}
		return nodesOf(proxyEntries(c, mk))
	}
	if got, ok := p.Server.Clusters().All()[0].SingleLeader(obTenant); !ok || got != c.Node("zone2-1").Addr() {
		t.Fatalf("single leader of %s: %q (%v), want zone2-1 at %s", obTenant, got, ok, c.Node("zone2-1").Addr())
	}
	if nodes := run(newMarker("single"), 15); len(nodes) != 1 || nodes[0] != "zone2-1" {
		t.Errorf("with a single leader node, 15 SELECTs ran on %v, want zone2-1 only", nodes)
	}
	if _, err := p.Store.Set("enable_single_leader_node_routing", "false"); err != nil {
		t.Fatal(err)
	}
	if nodes := run(newMarker("spread"), 30); len(nodes) < 2 {
		t.Errorf("enable_single_leader_node_routing off: 30 tableless SELECTs ran on %v only, want them spread", nodes)
	}
}
