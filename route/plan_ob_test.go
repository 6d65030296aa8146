package route

import (
	"context"
	"io"
	"log/slog"
	"slices"
	"strconv"
	"testing"
	"time"

	"obgate/config"
	"obgate/internal/topology"
	"obgate/mysqlproto"
)

// testCluster is a cluster whose table, tenant list and table entries are
// put in place by the test, without any server.
type testCluster struct {
	*Cluster
}

// newTestCluster builds zones z1 (idc hz1, region hz), z2 (hz2, hz),
// z3 (sh1, sh) and, when ro, z4 (a ReadOnly zone, idc hz1, region hz),
// one server each: a1, a2, a3 (and a4) on port 1; tenant t on every one.
func newTestCluster(t *testing.T, ro bool) *testCluster {
	t.Helper()
	c := newCluster("c", -1, nil, config.NewStore(config.Default()), slog.New(slog.NewTextHandler(io.Discard, nil)))
	tab := &Table{Cluster: "c", Zones: map[string]*topology.Zone{}, Tenants: map[string]*Tenant{}, Refreshed: time.Now()}
	zones := []*topology.Zone{
		{Name: "z1", IDC: "hz1", Region: "hz", Type: "ReadWrite"},
		{Name: "z2", IDC: "hz2", Region: "hz", Type: "ReadWrite"},
		{Name: "z3", IDC: "sh1", Region: "sh", Type: "ReadWrite"},
	}
	if ro {
		zones = append(zones, &topology.Zone{Name: "z4", IDC: "hz1", Region: "hz", Type: "ReadOnly"})
	}
	var addrs []string
	for i, z := range zones {
		tab.Zones[z.Name] = z
		addr := "a" + string(rune('1'+i)) + ":1"
		tab.Servers = append(tab.Servers, &topology.Server{Addr: addr, Zone: z})
		addrs = append(addrs, addr)
	}
	tab.Tenants["t"] = &Tenant{Name: "t", ID: 1002, PrimaryZone: "z2;z1,z3"}
	tab.index()
	c.table.Store(tab)
	c.publishTenant(&TenantServers{Tenant: "t", Addrs: addrs, Fetched: time.Now()})
	return &testCluster{c}
}

// putEntry publishes an AVAIL entry of t.db.tbl whose single tablet has
// these replicas (the first the leader, unless noLeader).
func (tc *testCluster) putEntry(tbl string, replicas ...Replica) *TableEntry {
	key := locationKey(nil, "t", "db", []byte(tbl))
	s := tc.locations.add(string(key), "t", "db", tbl)
	<-waitQueued(tc.locations)
	e := &TableEntry{Tenant: "t", Database: "db", Table: tbl, Exists: true, TableID: 500001, PartNum: 1,
		First: &TabletLocation{TabletID: 200001, Replicas: replicas}}
	e.holders = holdersOf([]*TabletLocation{e.First})
	s.cur.Load().lastAccess.Store(time.Now().UnixNano()) // as lookup does
	tc.locations.finish(s, s.cur.Load(), e, nil)
	return s.cur.Load()
}

// waitQueued drains the slot add queued (no fetcher runs in these tests).
func waitQueued(lc *locationCache) chan struct{} {
	ch := make(chan struct{})
	go func() {
		<-lc.queue
		close(ch)
	}()
	return ch
}

func stmt(sql string) (StmtRoute, *Facts) {
	f := Lex([]byte(sql))
	var buf []byte
	return StmtRoute{Stmt: []byte(sql), Facts: &f, Database: "db", KeyBuf: &buf, PartitionRoute: true}, &f
}

func plan(t *testing.T, r *Router, tc *testCluster, sr StmtRoute) Route {
	t.Helper()
	rt, err := r.Plan(context.Background(), &Request{Cluster: tc.Cluster, Tenant: "t", StmtRoute: sr}, nil)
	if err != nil {
		t.Fatal(err)
	}
	return rt
}

var leaderA2 = []Replica{{Addr: "a2:1", Leader: true}, {Addr: "a1:1"}, {Addr: "a3:1"}}

func TestPlanStrongGoesToLeader(t *testing.T) {
	tc := newTestCluster(t, false)
	tc.putEntry("orders", leaderA2...)
	r := NewRouter(nil)
	sr, _ := stmt("SELECT * FROM orders WHERE id = 1")
	for range 20 {
		rt := plan(t, r, tc, sr)
		if rt.Addrs[0] != "a2:1" || !rt.FirstIsLeader() || rt.Entry == nil || rt.Tablet == nil {
			t.Fatalf("got %+v, want the leader a2:1 first", rt)
		}
		if len(rt.Addrs) != 3 {
			t.Fatalf("got %v, want every replica", rt.Addrs)
		}
	}
}

func TestPlanLeaderBlockedGoesLast(t *testing.T) {
	tc := newTestCluster(t, false)
	tc.putEntry("orders", leaderA2...)
	r := NewRouter(blockSet{"a2:1": true})
	sr, _ := stmt("UPDATE orders SET v = 1 WHERE id = 1")
	rt := plan(t, r, tc, sr)
	if rt.Addrs[len(rt.Addrs)-1] != "a2:1" || rt.FirstIsLeader() {
		t.Fatalf("got %v, want the blocked leader last", rt.Addrs)
	}
}

func TestPlanWeakReadPrefersSameIDCFollower(t *testing.T) {
	tc := newTestCluster(t, false)
	tc.putEntry("orders", leaderA2...)
	r := NewRouter(nil)
	sr, _ := stmt("SELECT /*+ READ_CONSISTENCY(WEAK) */ * FROM orders WHERE id = 1")
	sr.Weak, sr.IDC = true, "hz1"
	for range 20 {
		rt := plan(t, r, tc, sr)
		// MERGE_IDC_ORDER: same IDC (a1), same region (a2), other region (a3).
		if !slices.Equal(rt.Addrs, []string{"a1:1", "a2:1", "a3:1"}) {
			t.Fatalf("got %v", rt.Addrs)
		}
	}
	sr.IDC = "Z3" // no IDC is called so: the zone name prefix matches z3
	rt := plan(t, r, tc, sr)
	if rt.Addrs[0] != "a3:1" {
		t.Fatalf("IDC by zone-name prefix: got %v, want a3 first", rt.Addrs)
	}
	sr.IDC = "nowhere" // no match at all: LDC off, the three in random order
	seen := map[string]bool{}
	for range 50 {
		seen[plan(t, r, tc, sr).Addrs[0]] = true
	}
	if len(seen) != 3 {
		t.Fatalf("LDC off: first servers seen %v, want all three", seen)
	}
}

func TestPlanFollowerFirstAndOnly(t *testing.T) {
	tc := newTestCluster(t, false)
	tc.putEntry("orders", leaderA2...)
	r := NewRouter(nil)
	sr, _ := stmt("SELECT * FROM orders WHERE id = 1")
	sr.Weak, sr.IDC = true, "hz2"
	sr.WeakPolicy, sr.HasWeakPolicy = FollowerFirst, true
	rt := plan(t, r, tc, sr)
	// FOLLOWER_FIRST: APF (none: a2 is the leader) BPF (a1) APL (a2) ... CPF (a3).
	if !slices.Equal(rt.Addrs, []string{"a1:1", "a2:1", "a3:1"}) {
		t.Fatalf("FOLLOWER_FIRST: got %v", rt.Addrs)
	}
	sr.WeakPolicy = FollowerOnly
	rt = plan(t, r, tc, sr)
	if slices.Contains(rt.Addrs, "a2:1") {
		t.Fatalf("FOLLOWER_ONLY: got %v, the leader is in it", rt.Addrs)
	}
}

func TestPlanForceReadonlyZone(t *testing.T) {
	tc := newTestCluster(t, true)
	tc.putEntry("orders", append(slices.Clone(leaderA2), Replica{Addr: "a4:1", ReadOnly: true})...)
	r := NewRouter(nil)
	sr, _ := stmt("SELECT * FROM orders WHERE id = 1")
	sr.Weak = true
	sr.WeakPolicy, sr.HasWeakPolicy = ForceReadonlyZone, true
	rt := plan(t, r, tc, sr)
	if !slices.Equal(rt.Addrs, []string{"a4:1"}) {
		t.Fatalf("weak read: got %v, want the read-only zone only", rt.Addrs)
	}
	sr.Weak = false
	_, err := r.Plan(context.Background(), &Request{Cluster: tc.Cluster, Tenant: "t", StmtRoute: sr}, nil)
	if se, ok := mysqlproto.AsSQLError(err); !ok || !mysqlproto.OBErrNotSupported.Is(se.Code, se.State) {
		t.Fatalf("strong statement: got %v, want ERR 1235 (0A000)", err)
	}
}

func TestPlanReadonlyZoneStrongAvoidsIt(t *testing.T) {
	tc := newTestCluster(t, true)
	tc.putEntry("orders", append(slices.Clone(leaderA2), Replica{Addr: "a4:1", ReadOnly: true})...)
	r := NewRouter(nil)
	sr, _ := stmt("INSERT INTO orders VALUES (1)")
	rt := plan(t, r, tc, sr)
	if slices.Contains(rt.Addrs, "a4:1") || rt.Addrs[0] != "a2:1" {
		t.Fatalf("got %v, want the leader first and no read-only server", rt.Addrs)
	}
	sr, _ = stmt("SELECT * FROM orders")
	sr.Weak, sr.IDC = true, "hz1"
	rt = plan(t, r, tc, sr)
	if rt.Addrs[0] != "a4:1" {
		t.Fatalf("weak read with read-only zones (READONLY_ZONE_FIRST): got %v", rt.Addrs)
	}
}

func TestPlanPrimaryZoneName(t *testing.T) {
	tc := newTestCluster(t, false)
	tc.putEntry("orders", leaderA2...)
	r := NewRouter(nil)
	sr, _ := stmt("SELECT * FROM orders")
	sr.PrimaryZoneName = "z3;z1"
	rt := plan(t, r, tc, sr)
	if !slices.Equal(rt.Addrs, []string{"a3:1", "a1:1"}) {
		t.Fatalf("got %v, want z3 then z1 only", rt.Addrs)
	}
}

func TestPlanPrimaryZoneFirstAfterLeader(t *testing.T) {
	tc := newTestCluster(t, false)
	tc.putEntry("orders", Replica{Addr: "a3:1", Leader: true}, Replica{Addr: "a1:1"}, Replica{Addr: "a2:1"})
	r := NewRouter(nil)
	sr, _ := stmt("SELECT * FROM orders")
	sr.EnablePrimaryZone = true
	rt := plan(t, r, tc, sr)
	// Tenant primary zone "z2;z1,z3": the leader, then z2, then z1.
	if !slices.Equal(rt.Addrs, []string{"a3:1", "a2:1", "a1:1"}) {
		t.Fatalf("got %v", rt.Addrs)
	}
}

func TestPlanUnknownTableUsesTenantList(t *testing.T) {
	tc := newTestCluster(t, false)
	e := tc.putEntry("gone")
	_ = e
	r := NewRouter(nil)
	sr, _ := stmt("SELECT * FROM nowhere")
	sr.LocationWait = time.Millisecond
	rt := plan(t, r, tc, sr)
	if rt.Entry != nil || len(rt.Addrs) != 3 {
		t.Fatalf("got %+v, want the tenant's three servers", rt)
	}
}

func TestPlanTargetDBServer(t *testing.T) {
	tc := newTestCluster(t, false)
	r := NewRouter(nil)
	sr, f := stmt("SELECT 1")
	f.TargetDBServer = []byte("a3:1")
	rt := plan(t, r, tc, sr)
	if rt.Addrs[0] != "a3:1" || rt.Policy != TargetDBServerOnly {
		t.Fatalf("got %+v", rt)
	}
}

func TestPlanExplain(t *testing.T) {
	tc := newTestCluster(t, false)
	tc.putEntry("orders", leaderA2...)
	r := NewRouter(blockSet{"a1:1": true})
	sr, _ := stmt("SELECT * FROM orders WHERE id = 1")
	var ex Explain
	sr.Explain = &ex
	plan(t, r, tc, sr)
	if ex.Table != "db.orders" || len(ex.Candidates) != 3 || ex.Candidates[0].Role != "leader" {
		t.Fatalf("got %+v", ex)
	}
	if last := ex.Candidates[2]; last.Addr != "a1:1" || last.Available {
		t.Fatalf("blocked candidate: got %+v", last)
	}
}

func TestPlanOBCachedNoAllocs(t *testing.T) {
	tc := newTestCluster(t, false)
	tc.putEntry("orders", leaderA2...)
	r := NewRouter(nil)
	sr, _ := stmt("SELECT * FROM orders WHERE id = 1")
	req := &Request{Cluster: tc.Cluster, Tenant: "t", StmtRoute: sr}
	buf := make([]string, 0, 8)
	*sr.KeyBuf = make([]byte, 0, 64)
	allocs := testing.AllocsPerRun(200, func() {
		rt, _ := r.Plan(context.Background(), req, buf)
		buf = rt.Addrs
	})
	if allocs != 0 {
		t.Fatalf("a cached plan allocates %.1f times", allocs)
	}
}

func TestZoneGroup(t *testing.T) {
	for _, c := range []struct {
		list, zone string
		want       int
	}{
		{"z1,z2;z3", "z1", 0}, {"z1,z2;z3", "z2", 0}, {"z1,z2;z3", "z3", 1}, {"z1,z2;z3", "z4", -1},
		{"RANDOM", "z1", -1}, {"", "z1", -1}, {"z1; z2", "z2", 1},
	} {
		if got := zoneGroup(c.list, c.zone); got != c.want {
			t.Errorf("zoneGroup(%q, %q) = %d, want %d", c.list, c.zone, got, c.want)
		}
	}
}

func TestEntryDirtyAndRefreshDue(t *testing.T) {
	tc := newTestCluster(t, false)
	e := tc.putEntry("orders", leaderA2...)
	now := time.Now()
	if e.needsUpdate(now, 5*time.Second, 0) {
		t.Fatal("a fresh AVAIL entry needs no update")
	}
	if !e.MarkDirty(false) || e.State() != EntryDirty {
		t.Fatal("MarkDirty did not move AVAIL to DIRTY")
	}
	if e.MarkDirty(false) {
		t.Fatal("a second MarkDirty reported a change")
	}
	if e.needsUpdate(now, 5*time.Second, 0) {
		t.Fatal("dirty but fetched just now: due only after delay_update_entry_interval")
	}
	if !e.needsUpdate(now.Add(6*time.Second), 5*time.Second, 0) {
		t.Fatal("dirty and older than the delay: due")
	}
	e.MarkDirty(true)
	if !e.needsUpdate(now, 5*time.Second, 0) {
		t.Fatal("forced: due at once")
	}
}

func asSQLError(err error) (uint16, bool) {
	se, ok := mysqlproto.AsSQLError(err)
	if !ok {
		return 0, false
	}
	return se.Code, true
}

func TestLocationCacheEvictsLeastRecentlyUsed(t *testing.T) {
	tc := newTestCluster(t, false)
	if _, err := tc.cfg.Set("routing_cache_mem_limited", "2KB"); err != nil {
		t.Fatal(err)
	}
	var names []string
	for i := range 12 {
		name := "t" + string(rune('a'+i))
		tc.putEntry(name, leaderA2...) // each used later than the one before
		names = append(names, name)
	}
	st := tc.LocationStats()
	if st.Bytes > 2048 || st.Evicted == 0 {
		t.Fatalf("cache holds %d bytes after %d evictions, limit 2KB", st.Bytes, st.Evicted)
	}
	left := map[string]bool{}
	for _, e := range tc.TableEntries() {
		left[e.Table] = true
	}
	if !left[names[len(names)-1]] || left[names[0]] {
		t.Fatalf("entries left %v: want the most recent kept and the oldest evicted", left)
	}
}

func TestPlanManyCandidates(t *testing.T) {
	tc := newTestCluster(t, false)
	var addrs []string
	for i := range 2*maxStackCands + 3 {
		addrs = append(addrs, "10.0.0."+strconv.Itoa(i)+":1")
	}
	tc.publishTenant(&TenantServers{Tenant: "t", Addrs: addrs, Fetched: time.Now()})
	rt := plan(t, NewRouter(nil), tc, StmtRoute{})
	if got := slices.Clone(rt.Addrs); len(got) != len(addrs) {
		t.Fatalf("%d candidates, want %d", len(got), len(addrs))
	} else {
		slices.Sort(got)
		want := slices.Clone(addrs)
		slices.Sort(want)
		if !slices.Equal(got, want) {
			t.Fatalf("candidates %v", got)
		}
	}
}
