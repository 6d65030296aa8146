package reactor_test

import (
	"context"
	"testing"
	"time"

	"obgate/internal/testproxy"
	"obgate/tools/obsim"
)

// startOBSimWith starts a cluster as startOBSim does, with its topology
// changed by mod first; it has no database of its own.
func startOBSimWith(t *testing.T, mod func(*obsim.Topology)) *obsim.Cluster {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), hangLimit)
	defer cancel()
	topo := obTopology()
	mod(topo)
	c, err := obsim.Start(ctx, obsim.Config{Topology: topo, MariaDBDSN: maria(t).DSN("root", "", "")})
	if err != nil {
		t.Fatalf("start obsim: %v", err)
	}
	t.Cleanup(func() {
		if err := c.Close(); err != nil {
			t.Errorf("obsim close: %v", err)
		}
	})
	return c
}

// TestOBProxyroSecondPassword: when proxyro@sys refuses
// observer_sys_password, obgate logs in with observer_sys_password1 (a
// password being rotated), loads the cluster and serves clients; with the
// old password alone it cannot.
func TestOBProxyroSecondPassword(t *testing.T) {
	const rotated = "proxyro-New7"
	c := startOBSimWith(t, func(topo *obsim.Topology) { topo.ProxyroPassword = rotated })
	query := func(p *testproxy.Proxy) error {
		cfg := obDriverConfig(p, obFullUser, "")
		cfg.Timeout = 3 * time.Second
		db := openDB(t, cfg)
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		defer cancel()
		var one int
		return db.QueryRowContext(ctx, "SELECT 1").Scan(&one)
	}

	old := startOBProxy(t, c, "net", "observer_sys_password", sha1Hex("proxyro-Old7"),
		"short_async_task_timeout", "2s")
	if err := query(old); err == nil {
		t.Fatal("with only the old proxyro password obgate served a client: the test proves nothing")
	}

	p := startOBProxy(t, c, "net", "observer_sys_password", sha1Hex("proxyro-Old7"),
		"observer_sys_password1", sha1Hex(rotated), "short_async_task_timeout", "2s")
	if err := query(p); err != nil {
		t.Fatalf("observer_sys_password refused, observer_sys_password1 right: %v", err)
	}
	if tab := p.Server.Clusters().All()[0].Table(); tab == nil {
		t.Fatal("cluster metadata not loaded with observer_sys_password1")
	}
}
