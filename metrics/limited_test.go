package metrics

import (
	"strings"
	"testing"
	"time"
)

func text(r *Registry) string {
	var sb strings.Builder
	r.WritePrometheus(&sb)
	return sb.String()
}

func TestGroupNames(t *testing.T) {
	r := New("namespace", "ODP")
	g := r.Group("cluster", "c1", "tenant", `t"1`)
	var a, b Slot
	g.Create(&a, false, SQLRequestTotal, "sqlType", "SELECT").Add(2)
	g.Create(&b, false, TransactionTotal).Inc()
	body := text(r)
	for _, want := range []string{
		`odp_sql_request_total{cluster="c1",tenant="t\"1",sqlType="SELECT",namespace="ODP"} 2`,
		`odp_transaction_total{cluster="c1",tenant="t\"1",namespace="ODP"} 1`,
	} {
		if !strings.Contains(body, want) {
			t.Errorf("missing %q in:\n%s", want, body)
		}
	}
	if c := g.Create(&a, false, SQLRequestTotal, "sqlType", "SELECT"); c != a.Counter() {
		t.Error("Create of a filled slot must return its counter")
	}
}

// TestItemLimit: past the limit no label set is created and each refused
// update counts as dropped; the sweep's room lets new ones in again.
func TestItemLimit(t *testing.T) {
	r := New()
	r.SetLimits(2, time.Minute)
	g := r.Group("tenant", "t")
	var s [4]Slot
	kinds := []string{"SELECT", "INSERT", "UPDATE", "DELETE"}
	for i := range s {
		if c := g.Create(&s[i], false, SQLRequestTotal, "sqlType", kinds[i]); c != nil {
			c.Inc()
		}
	}
	if s[0].Counter() == nil || s[1].Counter() == nil || s[2].Counter() != nil || s[3].Counter() != nil {
		t.Fatal("want the first two label sets created and the others refused")
	}
	body := text(r)
	if strings.Contains(body, `sqlType="UPDATE"`) || !strings.Contains(body, `sqlType="INSERT"`) {
		t.Fatalf("exported series past the limit:\n%s", body)
	}
	if !strings.Contains(body, MonitorItemDropped+" 2") {
		t.Fatalf("want 2 dropped updates:\n%s", body)
	}
	if r.LimitedSeries() != 2 {
		t.Fatalf("LimitedSeries = %d", r.LimitedSeries())
	}
	// Age out the first two, then the third fits.
	t0 := time.Now()
	r.Sweep(t0)
	if n := r.Sweep(t0.Add(time.Minute)); n != 2 {
		t.Fatalf("Sweep dropped %d, want 2", n)
	}
	if g.Create(&s[2], false, SQLRequestTotal, "sqlType", kinds[2]) == nil {
		t.Fatal("no room after the sweep")
	}
	if r.LimitedSeries() != 1 {
		t.Fatalf("LimitedSeries = %d after the sweep", r.LimitedSeries())
	}
}

// TestItemIdle: a series that moved is kept; one that stood still for the
// idle period is unregistered and its slot emptied, and comes back from
// zero on its next update.
func TestItemIdle(t *testing.T) {
	r := New()
	r.SetLimits(100, 10*time.Minute)
	g := r.Group("tenant", "t")
	var busy, idle Slot
	g.Create(&busy, false, SQLRequestTotal, "sqlType", "SELECT").Inc()
	g.Create(&idle, false, SQLRequestTotal, "sqlType", "INSERT").Add(5)
	t0 := time.Now()
	r.Sweep(t0)
	busy.Counter().Inc()
	if n := r.Sweep(t0.Add(9 * time.Minute)); n != 0 {
		t.Fatalf("dropped %d before the idle period", n)
	}
	if n := r.Sweep(t0.Add(10 * time.Minute)); n != 1 {
		t.Fatalf("dropped %d at the idle period, want 1", n)
	}
	if idle.Counter() != nil || busy.Counter() == nil {
		t.Fatal("the wrong slot was emptied")
	}
	body := text(r)
	if strings.Contains(body, `sqlType="INSERT"`) || !strings.Contains(body, `sqlType="SELECT"`) {
		t.Fatalf("after the sweep:\n%s", body)
	}
	g.Create(&idle, false, SQLRequestTotal, "sqlType", "INSERT").Inc()
	if !strings.Contains(text(r), `odp_sql_request_total{tenant="t",sqlType="INSERT"} 1`) {
		t.Fatalf("recreated series:\n%s", text(r))
	}
}

// TestExtraFamilies: the extra families are exported only while on, and
// their limited label sets are made only then.
func TestExtraFamilies(t *testing.T) {
	r := New()
	r.ExtraCounter(RequestByte, "transType", TransRequest).Add(10)
	g := r.Group("tenant", "t")
	var entry Slot
	if g.Create(&entry, true, EntryTotal, "entryType", "table_entry") != nil {
		t.Fatal("an extra label set was made while the extra families are off")
	}
	if body := text(r); strings.Contains(body, RequestByte) || strings.Contains(body, EntryTotal) {
		t.Fatalf("extra families exported while off:\n%s", body)
	}
	r.SetExtra(true)
	g.Create(&entry, true, EntryTotal, "entryType", "table_entry").Inc()
	body := text(r)
	for _, want := range []string{`odp_request_byte{transType="request"} 10`, `odp_entry_total{tenant="t",entryType="table_entry"} 1`} {
		if !strings.Contains(body, want) {
			t.Errorf("missing %q in:\n%s", want, body)
		}
	}
	r.SetExtra(false)
	if entry.Counter() != nil || r.LimitedSeries() != 0 {
		t.Fatal("turning the extra families off must drop their label sets")
	}
}

// TestSlotNoAlloc: counting into a filled slot, and an update refused at
// the limit, allocate nothing.
func TestSlotNoAlloc(t *testing.T) {
	r := New()
	r.SetLimits(1, time.Minute)
	g := r.Group("tenant", "t")
	var s, full Slot
	g.Create(&s, false, SQLRequestTotal, "sqlType", "SELECT")
	kind := "INSERT"
	if n := testing.AllocsPerRun(100, func() {
		if c := s.Counter(); c != nil {
			c.Inc()
		}
		if c := full.Counter(); c != nil {
			c.Inc()
		} else if c := g.Create(&full, false, SQLRequestTotal, "sqlType", kind); c != nil {
			c.Inc()
		}
	}); n != 0 {
		t.Fatalf("%v allocations per update", n)
	}
}
