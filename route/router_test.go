package route

import (
	"context"
	"slices"
	"testing"
)

// blockSet is an Availability that lists blocked addresses.
type blockSet map[string]bool

func (b blockSet) Available(_, addr string) bool { return !b[addr] }

func TestPlanMySQLRoundRobinAndBlockedLast(t *testing.T) {
	r := NewRouter(blockSet{"b:1": true})
	req := &Request{Servers: []string{"a:1", "b:1", "c:1"}}
	var got [][]string
	for range 3 {
		rt, err := r.Plan(context.Background(), req, nil)
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, slices.Clone(rt.Addrs))
	}
	want := [][]string{{"a:1", "c:1", "b:1"}, {"c:1", "a:1", "b:1"}, {"c:1", "a:1", "b:1"}}
	if !slices.EqualFunc(got, want, slices.Equal) {
		t.Fatalf("got %v, want %v", got, want)
	}
}

func TestPlanStaysOnLastServer(t *testing.T) {
	r := NewRouter(blockSet{"a:1": true})
	for _, req := range []*Request{
		{Servers: []string{"a:1", "b:1"}, Last: "a:1", InTrans: true},
		{Servers: []string{"a:1", "b:1"}, Last: "a:1", Pinned: true},
		{Servers: []string{"a:1", "b:1"}, Last: "a:1", ReadsLast: true},
	} {
		rt, err := r.Plan(context.Background(), req, nil)
		if err != nil {
			t.Fatal(err)
		}
		if !rt.Bound || !slices.Equal(rt.Addrs, []string{"a:1"}) {
			t.Fatalf("%+v: got %+v, want bound to a:1 even when it is blocked", req, rt)
		}
	}
}

func TestPlanPrefersLastWhenAvailable(t *testing.T) {
	r := NewRouter(nil)
	req := &Request{Servers: []string{"a:1", "b:1", "c:1"}, Last: "b:1", PreferLast: true}
	for range 4 {
		rt, _ := r.Plan(context.Background(), req, nil)
		if rt.Addrs[0] != "b:1" || len(rt.Addrs) != 3 || rt.Bound {
			t.Fatalf("got %+v, want b:1 first of all three", rt)
		}
	}
	r = NewRouter(blockSet{"b:1": true})
	rt, _ := r.Plan(context.Background(), req, nil)
	if rt.Addrs[0] == "b:1" || rt.Addrs[2] != "b:1" {
		t.Fatalf("blocked last server: got %v, want it last", rt.Addrs)
	}
}

func TestPlanReusesBuffer(t *testing.T) {
	r := NewRouter(blockSet{"b:1": true})
	req := &Request{Servers: []string{"a:1", "b:1", "c:1"}}
	buf := make([]string, 0, 8)
	allocs := testing.AllocsPerRun(100, func() {
		rt, _ := r.Plan(context.Background(), req, buf)
		buf = rt.Addrs
	})
	if allocs != 0 {
		t.Fatalf("Plan allocates %.1f times with a reused buffer", allocs)
	}
}

func TestPlanPutsTriedServersAfterBlockedOnes(t *testing.T) {
	r := NewRouter(blockSet{"b:1": true})
	req := &Request{Servers: []string{"a:1", "b:1", "c:1"}, Tried: []string{"a:1"}, Last: "a:1", PreferLast: true}
	rt, err := r.Plan(context.Background(), req, nil)
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"c:1", "b:1", "a:1"}; !slices.Equal(rt.Addrs, want) {
		t.Fatalf("got %v, want %v: available, then listed (force retry), then already tried", rt.Addrs, want)
	}
}

// genSet is a blockSet with a settable generation.
type genSet struct {
	blockSet
	gen uint64
}

func (g *genSet) Generation() uint64 { return g.gen }

func TestPlanPicksAfreshAfterAvailabilityChanged(t *testing.T) {
	g := &genSet{blockSet: blockSet{}, gen: 7}
	r := NewRouter(g)
	req := &Request{Servers: []string{"a:1", "b:1", "c:1"}, Last: "c:1", PreferLast: true, SeenGeneration: 7}
	rt, err := r.Plan(context.Background(), req, nil)
	if err != nil || rt.Addrs[0] != "c:1" || rt.Generation != 7 {
		t.Fatalf("unchanged availability: %v %v, want c:1 first", rt, err)
	}
	g.gen = 8
	firsts := map[string]bool{}
	for range 6 {
		rt, err := r.Plan(context.Background(), req, nil)
		if err != nil {
			t.Fatal(err)
		}
		firsts[rt.Addrs[0]] = true
	}
	if len(firsts) < 2 {
		t.Fatalf("after a change the session still always starts at %v", firsts)
	}
}
