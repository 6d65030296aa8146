package route

import "testing"

// TestPlanSingleLeader: with SingleLeader (enable_single_leader_node_routing),
// a strong statement of a tenant whose leaders are all on one server goes
// there first, with or without a table and whatever the table's entry
// says; weak reads, proxy_primary_zone_name and the option off route as
// usual; DropSingleLeader ends it until the next refresh.
func TestPlanSingleLeader(t *testing.T) {
	tc := newTestCluster(t, false)
	tc.putEntry("orders", leaderA2...)
	tc.singleLeaders.Store(&map[string]string{"t": "a3:1"})
	r := NewRouter(nil)
	firsts := func(sql string, mod func(*StmtRoute)) map[string]int {
		out := map[string]int{}
		for range 40 {
			sr, _ := stmt(sql)
			mod(&sr)
			rt := plan(t, r, tc, sr)
			out[rt.Addrs[0]]++
			if len(rt.Addrs) != 3 {
				t.Fatalf("%s: %d candidates %v, want every tenant server", sql, len(rt.Addrs), rt.Addrs)
			}
		}
		return out
	}
	on := func(sr *StmtRoute) { sr.SingleLeader = true }
	for _, sql := range []string{"SELECT 1", "SELECT * FROM orders WHERE id = 1"} {
		if got := firsts(sql, on); got["a3:1"] != 40 {
			t.Errorf("%s with a single leader a3:1: first candidates %v, want a3:1 every time", sql, got)
		}
	}
	if got := firsts("SELECT 1", func(*StmtRoute) {}); got["a3:1"] == 40 {
		t.Errorf("option off: SELECT 1 went first to a3:1 every time (%v), want the tenant's servers spread", got)
	}
	if got := firsts("SELECT * FROM orders WHERE id = 1", func(sr *StmtRoute) { sr.SingleLeader, sr.Weak = true, true }); got["a3:1"] == 40 {
		t.Errorf("weak read: always a3:1 first (%v); weak reads do not go by the single leader", got)
	}
	if got := firsts("SELECT * FROM orders WHERE id = 1", func(sr *StmtRoute) {
		sr.SingleLeader, sr.PrimaryZoneName = true, "z1,z2,z3"
	}); got["a3:1"] == 40 {
		t.Errorf("with proxy_primary_zone_name: always a3:1 first (%v); that policy does not go by the single leader", got)
	}
	tc.DropSingleLeader("t")
	if _, ok := tc.SingleLeader("t"); ok {
		t.Fatal("DropSingleLeader left the tenant's single leader")
	}
	if got := firsts("SELECT * FROM orders WHERE id = 1", on); got["a2:1"] != 40 {
		t.Errorf("after DropSingleLeader: first candidates %v, want the table's leader a2:1", got)
	}
}
