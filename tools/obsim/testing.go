package obsim

import (
	"context"
	"testing"
	"time"
)

// StartForTest starts a cluster for t and closes it in t.Cleanup. A nil
// topology means DemoTopology on free ports. The test fails (it does not
// skip) when the cluster cannot start, for example without MariaDB
// installed.
func StartForTest(t testing.TB, topo *Topology) *Cluster {
	t.Helper()
	if topo == nil {
		topo = DemoTopology()
		topo.BasePort = 0
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	c, err := Start(ctx, Config{Topology: topo})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := c.Close(); err != nil {
			t.Error(err)
		}
	})
	return c
}
