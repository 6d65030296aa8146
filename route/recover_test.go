package route

import (
	"io"
	"log/slog"
	"testing"

	"obgate/config"
)

// TestContain checks that a panic in a round of background work is
// recovered, reported to the hook with where it happened, and that the
// round after it runs.
func TestContain(t *testing.T) {
	cs := &Clusters{}
	var got []string
	cs.SetPanicHook(func(where string) { got = append(got, where) })
	c := newCluster("c", -1, nil, config.NewStore(config.Default()), slog.New(slog.NewTextHandler(io.Discard, nil)))
	c.panics = &cs.panics

	c.contain("cluster_refresh", func() { panic("a bug") })
	ran := false
	c.contain("cluster_refresh", func() { ran = true })
	if len(got) != 1 || got[0] != "cluster_refresh" || !ran {
		t.Errorf("hook saw %v, next round ran %v; want one cluster_refresh and the round run", got, ran)
	}
	cs.SetPanicHook(nil)
	c.contain("cluster_refresh", func() { panic("another") })
	if len(got) != 1 {
		t.Errorf("a removed hook was called: %v", got)
	}
}
