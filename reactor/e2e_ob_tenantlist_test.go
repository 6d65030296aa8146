package reactor_test

import (
	"context"
	"strconv"
	"testing"
	"time"

	"obgate/internal/testproxy"
)

// tenantAddrs returns the cached server list of tenant obTenant.
func tenantAddrs(p *testproxy.Proxy) []string {
	for _, l := range p.Server.Clusters().All()[0].TenantLists() {
		if l.Tenant == obTenant {
			return l.Addrs
		}
	}
	return nil
}

// TestOBTenantListExpires: a tenant's server list older than
// tenant_location_valid_time is fetched again, even though the periodic
// refresh (server_state_refresh_interval, here an hour) is far away: a
// server taken out of the tenant's list in the cluster leaves obgate's
// list within seconds.
func TestOBTenantListExpires(t *testing.T) {
	c := startOBSim(t)
	p := startOBProxy(t, c, "net", "server_state_refresh_interval", "1h", "tenant_location_valid_time", "1s")
	_, conn := obConn(t, p)
	ctx := context.Background()
	ping := func() {
		t.Helper()
		var one int
		if err := conn.QueryRowContext(ctx, "SELECT 1").Scan(&one); err != nil {
			t.Fatal(err)
		}
	}
	ping()
	if got := tenantAddrs(p); len(got) != 3 {
		t.Fatalf("tenant %s lists %v, want its 3 servers", obTenant, got)
	}
	// The refresh loop's first round comes a second after the start (the
	// login loaded the cluster before it); the next one is half an hour
	// or more away. Wait for the first round to have re-read the list.
	cl := p.Server.Clusters().All()[0]
	loaded := cl.Table().Refreshed
	waitFor(t, 15*time.Second, "the refresh loop's first round", func() bool {
		tab := cl.Table()
		if !tab.Refreshed.After(loaded) {
			return false
		}
		for _, l := range cl.TenantLists() {
			if l.Tenant == obTenant {
				return l.Fetched.After(tab.Refreshed)
			}
		}
		return false
	})
	gone := c.Nodes()[2]
	res, err := c.Admin().ExecContext(ctx, "DELETE FROM oceanbase.__all_virtual_proxy_schema WHERE tenant_name = ? AND table_name = '__all_dummy' AND sql_port = ?",
		obTenant, gone.Port())
	if err != nil {
		t.Fatal(err)
	}
	if n, _ := res.RowsAffected(); n == 0 {
		t.Fatalf("no __all_dummy row of %s on port %d to delete", obTenant, gone.Port())
	}
	waitFor(t, 15*time.Second, "the expired tenant list fetched again without "+gone.Name(), func() bool {
		ping()
		got := tenantAddrs(p)
		for _, a := range got {
			if a == "127.0.0.1:"+strconv.Itoa(gone.Port()) {
				return false
			}
		}
		return len(got) == 2
	})
}
