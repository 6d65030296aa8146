package route

import (
	"context"
	"errors"
	"testing"
)

// TestPlanNoWaitAnswersFromCacheOnly: a NoWait plan of a table whose
// location is not cached, or whose refresh its statement must wait for,
// or of a tenant whose server list is not fetched, says ErrWouldWait at
// once and changes nothing (no fetch queued); a cached location, a
// statement without a table and a due refresh under async pull plan as
// usual.
func TestPlanNoWaitAnswersFromCacheOnly(t *testing.T) {
	r := NewRouter(nil)
	noWait := func(tc *testCluster, tenant, sql string) (Route, error) {
		sr, _ := stmt(sql)
		return r.Plan(context.Background(), &Request{Cluster: tc.Cluster, Tenant: tenant, NoWait: true, StmtRoute: sr}, nil)
	}

	tc := newTestCluster(t, false)
	if _, err := noWait(tc, "t", "SELECT * FROM orders WHERE id = 1"); !errors.Is(err, ErrWouldWait) {
		t.Fatalf("uncached table: %v, want ErrWouldWait", err)
	}
	if n := len(*tc.locations.slots.Load()); n != 0 {
		t.Fatalf("a NoWait plan added %d location entries", n)
	}
	if rt, err := noWait(tc, "t", "SELECT 1"); err != nil || len(rt.Addrs) != 3 {
		t.Fatalf("a statement without a table: %v %v, want the tenant's three servers", rt.Addrs, err)
	}

	e := tc.putEntry("orders", leaderA2...)
	if rt, err := noWait(tc, "t", "SELECT * FROM orders WHERE id = 1"); err != nil || rt.Addrs[0] != "a2:1" {
		t.Fatalf("cached table: %v %v, want the leader a2:1 first", rt.Addrs, err)
	}

	// A dirty entry: async pull (the default) goes by it while it is
	// refreshed; without, the statement would wait for the refresh.
	e.MarkDirty(true)
	if rt, err := noWait(tc, "t", "SELECT * FROM orders WHERE id = 1"); err != nil || rt.Addrs[0] != "a2:1" {
		t.Fatalf("dirty entry, async pull: %v %v, want the old leader a2:1", rt.Addrs, err)
	}
	off := newTestCluster(t, false)
	if _, err := off.cfg.Set("enable_async_pull_location_cache", "false"); err != nil {
		t.Fatal(err)
	}
	off.putEntry("orders", leaderA2...).MarkDirty(true)
	if _, err := noWait(off, "t", "SELECT * FROM orders WHERE id = 1"); !errors.Is(err, ErrWouldWait) {
		t.Fatalf("dirty entry, no async pull: %v, want ErrWouldWait", err)
	}

	// A tenant the snapshot lists whose server list is not fetched yet.
	tab := *tc.Table()
	tab.Tenants = map[string]*Tenant{"t": tab.Tenants["t"], "u": {Name: "u", ID: 1004}}
	tab.index()
	tc.table.Store(&tab)
	if _, err := noWait(tc, "u", "SELECT 1"); !errors.Is(err, ErrWouldWait) {
		t.Fatalf("tenant server list not fetched: %v, want ErrWouldWait", err)
	}
}
