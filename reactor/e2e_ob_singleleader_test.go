package reactor_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"obgate/tools/obsim"

	"github.com/go-sql-driver/mysql"
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
	p := startOBProxy(t, c, "net", "enable_cached_server", "false", "server_state_refresh_interval", "1h")
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
	// The refresh loop's first round comes a second after the start; the
	// next is half an hour or more away.
	loaded := p.Server.Clusters().All()[0].Table().Refreshed
	waitFor(t, 15*time.Second, "the refresh loop's first round", func() bool {
		return p.Server.Clusters().All()[0].Table().Refreshed.After(loaded)
	})
	if nodes := run(newMarker("single"), 15); len(nodes) != 1 || nodes[0] != "zone2-1" {
		t.Errorf("with a single leader node, 15 SELECTs ran on %v, want zone2-1 only", nodes)
	}

	// The leader moves: the next statement on the table still goes to
	// zone2-1, which reports a partition miss, and obgate forgets the
	// single leader at once (the next server state refresh is an hour
	// away); the statement after goes by the table's location.
	cl := p.Server.Clusters().All()[0]
	if err := c.MoveLeader("only", "", "zone3-1"); err != nil {
		t.Fatal(err)
	}
	var n int
	if err := conn.QueryRowContext(ctx, "SELECT COUNT(*) FROM only").Scan(&n); err != nil {
		t.Fatal(err)
	}
	if got, ok := cl.SingleLeader(obTenant); ok {
		t.Fatalf("after a partition miss on the single leader, obgate still has %s as %s's single leader", got, obTenant)
	}
	mk := newMarker("moved")
	if err := conn.QueryRowContext(ctx, "SELECT COUNT(*) /* "+mk+" */ FROM only").Scan(&n); err != nil {
		t.Fatal(err)
	}
	if e := entryFor(t, c, mk); e.Node != "zone3-1" {
		t.Errorf("after the single leader was dropped the table's statement ran on %s, want its new leader zone3-1", e.Node)
	}

	if _, err := p.Store.Set("enable_single_leader_node_routing", "false"); err != nil {
		t.Fatal(err)
	}
	if nodes := run(newMarker("spread"), 30); len(nodes) < 2 {
		t.Errorf("enable_single_leader_node_routing off: 30 tableless SELECTs ran on %v only, want them spread", nodes)
	}
}
