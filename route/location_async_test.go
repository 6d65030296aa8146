package route

import (
	"testing"
	"time"
)

// fetchOnce plays the cache's fetcher for one queued refresh: it publishes
// an entry of the same table whose single tablet has replicas.
func fetchOnce(tc *testCluster, replicas ...Replica) <-chan struct{} {
	done := make(chan struct{})
	go func() {
		defer close(done)
		s := <-tc.locations.queue
		old := s.cur.Load()
		fresh := &TableEntry{Tenant: old.Tenant, Database: old.Database, Table: old.Table, Exists: true,
			TableID: old.TableID, PartNum: 1, First: &TabletLocation{TabletID: 200001, Replicas: replicas}}
		fresh.holders = holdersOf([]*TabletLocation{fresh.First})
		tc.locations.finish(s, old, fresh, nil)
	}()
	return done
}

var leaderA3 = []Replica{{Addr: "a3:1", Leader: true}, {Addr: "a1:1"}, {Addr: "a2:1"}}

// TestDirtyEntryWaitsForRefreshWhenNotAsync: with
// enable_async_pull_location_cache off, the statement that finds its
// table's entry dirty (the leader moved) waits for the refresh and goes to
// the new leader; on (ODP's default) it goes by the old entry while the
// refresh runs, and the next statement gets the new one.
func TestDirtyEntryWaitsForRefreshWhenNotAsync(t *testing.T) {
	r := NewRouter(nil)
	sr, _ := stmt("SELECT * FROM orders WHERE id = 1")
	sr.LocationWait = 10 * time.Second

	tc := newTestCluster(t, false)
	if _, err := tc.cfg.Set("enable_async_pull_location_cache", "false"); err != nil {
		t.Fatal(err)
	}
	tc.putEntry("orders", leaderA2...).MarkDirty(true)
	done := fetchOnce(tc, leaderA3...)
	if rt := plan(t, r, tc, sr); rt.Addrs[0] != "a3:1" {
		t.Fatalf("async pull off: first candidate %v, want the refreshed leader a3:1", rt.Addrs)
	}
	<-done

	tc = newTestCluster(t, false)
	tc.putEntry("orders", leaderA2...).MarkDirty(true)
	if rt := plan(t, r, tc, sr); rt.Addrs[0] != "a2:1" || rt.Entry.State() != EntryUpdating {
		t.Fatalf("async pull on: first candidate %v, entry %s; want the old leader a2:1 while the refresh runs", rt.Addrs, rt.Entry.State())
	}
	<-fetchOnce(tc, leaderA3...)
	if rt := plan(t, r, tc, sr); rt.Addrs[0] != "a3:1" {
		t.Fatalf("async pull on, after the refresh: first candidate %v, want a3:1", rt.Addrs)
	}
}

// TestDirtyEntryFailedRefreshReleasesWaiter: a refresh that fails, or
// that the full queue refuses, does not leave the waiting statement
// waiting; it goes by the old entry.
func TestDirtyEntryFailedRefreshReleasesWaiter(t *testing.T) {
	tc := newTestCluster(t, false)
	if _, err := tc.cfg.Set("enable_async_pull_location_cache", "false"); err != nil {
		t.Fatal(err)
	}
	tc.putEntry("orders", leaderA2...).MarkDirty(true)
	go func() {
		s := <-tc.locations.queue
		tc.locations.finish(s, s.cur.Load(), nil, errQueueFull)
	}()
	sr, _ := stmt("SELECT * FROM orders WHERE id = 1")
	sr.LocationWait = time.Minute
	start := time.Now()
	if rt := plan(t, NewRouter(nil), tc, sr); rt.Addrs[0] != "a2:1" || time.Since(start) > 30*time.Second {
		t.Fatalf("failed refresh: first candidate %v after %v, want the old leader at once", rt.Addrs, time.Since(start))
	}
}
