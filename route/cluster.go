package route

import (
	"context"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"obgate/config"
	"obgate/internal/topology"
	"obgate/mysqlproto"
)

// ErrClusterNotReady reports a cluster whose first metadata load has not
// succeeded yet.
var ErrClusterNotReady = errors.New("route: cluster metadata not loaded")

// Cluster is one OceanBase cluster obgate serves: its root-server list,
// the internal SQL connection logged in as proxyro@sys, and the latest
// routing-table snapshot, refreshed in the background every
// server_state_refresh_interval (randomised between half and full, as ODP
// does). The request path reads Table() and TenantServers() with atomic
// loads; it never waits for a refresh, except the very first load.
type Cluster struct {
	name   string
	id     int64
	rsList []string
	cfg    *config.Store
	log    *slog.Logger

	table   atomic.Pointer[Table]
	tenants atomic.Pointer[tenantLists] // tenant server lists

	loadMu   sync.Mutex // serialises refreshes and the meta connection
	meta     *mysqlproto.Client
	metaAddr string
	version  string // ob_version() of the cluster
	// serverVersion is the servers' handshake version (ServerVersion).
	serverVersion atomic.Pointer[string]

	// locMu serialises the location fetches over loc, a connection of
	// their own so that a slow fetch never delays the server-state refresh.
	locMu     sync.Mutex
	loc       *mysqlproto.Client
	locations *locationCache

	fetchMu  sync.Mutex
	fetching map[string]*fetchCall // tenant → in-flight server-list fetch
	used     sync.Map              // tenant → struct{}: tenants whose lists are refreshed
	// singleLeaders maps a tenant whose user log streams all have their
	// leader on one server to that server (ODP's single leader info),
	// replaced by every refresh; DropSingleLeader removes a tenant until
	// the next one.
	singleLeaders atomic.Pointer[map[string]string]
	// routines caches the route SQL of the procedures CALL statements
	// name (enable_pl_route).
	routines routines
	// refetching is set while refetchTenant's goroutine runs: at most one
	// list expired by tenant_location_valid_time is fetched at a time.
	refetching atomic.Bool

	stop    chan struct{}
	stopped sync.WaitGroup
	gen     atomic.Uint64
	panics  *panicHook // the Clusters' hook; nil for a cluster outside one
	tls     *tlsHook   // the Clusters' TLS towards servers; nil for a cluster outside one
	// observer is the Clusters' table observer; nil outside one.
	observer *observerHook
}

// tenantLists is an immutable map of tenant → server addresses.
type tenantLists struct {
	m map[string]*TenantServers
}

// TenantServers is a tenant's server list (its __all_dummy locations).
type TenantServers struct {
	Tenant  string
	Addrs   []string
	Fetched time.Time
}

type fetchCall struct {
	done chan struct{}
	res  *TenantServers
	err  error
}

// newCluster builds a cluster resource; Start loads it.
func newCluster(name string, id int64, rsList []string, cfg *config.Store, log *slog.Logger) *Cluster {
	c := &Cluster{
		name: name, id: id, rsList: rsList, cfg: cfg,
		log:      log.With("cluster", name),
		fetching: make(map[string]*fetchCall),
		stop:     make(chan struct{}),
	}
	c.tenants.Store(&tenantLists{m: map[string]*TenantServers{}})
	c.locations = newLocationCache(c)
	return c
}

// Name is the cluster name.
func (c *Cluster) Name() string {
	if c == nil {
		return ""
	}
	return c.name
}

// ID is the cluster id given at login (-1 when unknown).
func (c *Cluster) ID() int64 { return c.id }

// Table returns the latest snapshot, or nil before the first load.
func (c *Cluster) Table() *Table { return c.table.Load() }

// start runs the refresh loop until close.
func (c *Cluster) start() {
	c.stopped.Add(2)
	go c.refreshLoop()
	go func() {
		defer c.stopped.Done()
		c.locations.run(c.stop)
	}()
}

func (c *Cluster) close() {
	close(c.stop)
	c.stopped.Wait()
	c.closeLocation()
	c.loadMu.Lock()
	if c.meta != nil {
		_ = c.meta.Close()
		c.meta = nil
	}
	c.loadMu.Unlock()
}

func (c *Cluster) refreshLoop() {
	defer c.stopped.Done()
	for {
		interval := c.cfg.Load().ServerStateRefreshInterval
		wait := interval/2 + time.Duration(rand.Int64N(int64(interval/2)+1))
		if c.Table() == nil {
			wait = min(wait, time.Second) // keep trying until the first load works
		}
		select {
		case <-c.stop:
			return
		case <-time.After(wait):
		}
		c.contain("cluster_refresh", c.refreshRound)
	}
}

// refreshRound refreshes the routing table and the tenant server lists in
// use, on the refresh loop's goroutine.
func (c *Cluster) refreshRound() {
	ctx, cancel := context.WithTimeout(context.Background(), 2*c.cfg.Load().ShortAsyncTaskTimeout)
	defer cancel()
	if err := c.refresh(ctx); err != nil {
		c.log.Warn("cluster refresh failed", "err", err)
	}
	c.refreshTenants(ctx)
}

// Ready loads the cluster's metadata if no snapshot exists yet, waiting for
// at most ctx. Concurrent callers share one load.
func (c *Cluster) Ready(ctx context.Context) (*Table, error) {
	if t := c.Table(); t != nil {
		return t, nil
	}
	if err := c.refresh(ctx); err != nil {
		return nil, fmt.Errorf("%w: %s: %v", ErrClusterNotReady, c.name, err)
	}
	return c.Table(), nil
}

// refresh runs one round: version check on a new connection, zones,
// servers and tenants; it publishes a new snapshot on success.
func (c *Cluster) refresh(ctx context.Context) error {
	c.loadMu.Lock()
	defer c.loadMu.Unlock()
	if t := c.Table(); t != nil && time.Since(t.Refreshed) < 100*time.Millisecond {
		return nil // a concurrent caller just loaded it
	}
	cl, err := c.metaConn(ctx)
	if err != nil {
		return err
	}
	c.bound(cl)
	t, err := c.load(cl)
	if err != nil {
		_ = cl.Close()
		c.meta = nil
		return err
	}
	if old := c.Table(); old != nil {
		t.Version = old.Version
	} else {
		t.Version = c.version
	}
	t.Generation = c.gen.Add(1)
	leaders := c.loadSingleLeaders(cl, t)
	c.table.Store(t)
	c.singleLeaders.Store(&leaders)
	c.published(t)
	return nil
}

// metaConn returns the internal connection, opening one when needed: the
// root servers first, then any server of the last snapshot.
func (c *Cluster) metaConn(ctx context.Context) (*mysqlproto.Client, error) {
	if c.meta != nil {
		return c.meta, nil
	}
	cl, addr, err := c.dialMeta(ctx)
	if err != nil {
		return nil, err
	}
	c.meta, c.metaAddr = cl, addr
	return cl, nil
}

// dialMeta logs in as proxyro@sys to the first root server (then any
// server of the last snapshot) that answers, checking the version and, on
// the first load, the cluster name.
func (c *Cluster) dialMeta(ctx context.Context) (*mysqlproto.Client, string, error) {
	addrs := append([]string(nil), c.rsList...)
	if t := c.Table(); t != nil {
		for _, s := range t.Servers {
			addrs = append(addrs, s.Addr)
		}
	}
	cfg := c.cfg.Load()
	passwords, err := proxyroPasswords(cfg)
	if err != nil {
		return nil, "", err
	}
	var lastErr error
	for _, addr := range uniq(addrs) {
		cl, err := c.dialProxyRO(ctx, cfg, addr, passwords)
		if err != nil {
			lastErr = fmt.Errorf("%s: %w", addr, err)
			continue
		}
		c.bound(cl)
		if err := c.checkVersion(cl); err != nil {
			_ = cl.Close()
			lastErr = fmt.Errorf("%s: %w", addr, err)
			continue
		}
		if c.Table() == nil {
			if err := c.checkClusterName(cl); err != nil {
				_ = cl.Close()
				return nil, "", err
			}
		}
		return cl, addr, nil
	}
	if lastErr == nil {
		lastErr = errors.New("no root server configured (rootservice_list)")
	}
	return nil, "", lastErr
}

// proxyroPasswords are the proxyro@sys password hashes (SHA1, stage 1) to
// log in with, in order: observer_sys_password, then observer_sys_password1
// when it is set and differs (tried when the first is refused, so that the
// password can be rotated without a restart).
func proxyroPasswords(cfg *config.Config) ([][]byte, error) {
	var out [][]byte
	for _, p := range []struct{ name, hex string }{
		{"observer_sys_password", cfg.ObserverSysPassword},
		{"observer_sys_password1", cfg.ObserverSysPassword1},
	} {
		if p.hex == "" && len(out) > 0 {
			continue // no second password
		}
		b, err := hex.DecodeString(p.hex)
		if err != nil {
			return nil, fmt.Errorf("%s is not SHA1 hex: %w", p.name, err)
		}
		if len(out) > 0 && string(out[0]) == string(b) {
			continue
		}
		out = append(out, b)
	}
	return out, nil
}

// dialProxyRO logs in as proxyro@sys to addr with the first of passwords
// the server accepts: a refused password (ERR 1045) is followed by the
// next one, on a new connection; any other failure ends the attempt.
func (c *Cluster) dialProxyRO(ctx context.Context, cfg *config.Config, addr string, passwords [][]byte) (*mysqlproto.Client, error) {
	var err error
	for i, stage1 := range passwords {
		dctx, cancel := context.WithTimeout(ctx, cfg.ShortAsyncTaskTimeout)
		opts := mysqlproto.ClientOptions{
			User:           topology.UserProxyRO + "@" + topology.TenantSys,
			PasswordStage1: stage1,
			Database:       "oceanbase",
			Attrs:          []mysqlproto.ConnAttr{{Key: "__proxy_version", Value: "obgate"}},
		}
		if opts.TLS, opts.TLSOptional, err = c.serverTLS(cfg, addr); err != nil {
			cancel()
			return nil, err
		}
		var cl *mysqlproto.Client
		cl, err = mysqlproto.Dial(dctx, addr, opts)
		cancel()
		if err == nil {
			if i > 0 {
				c.log.Info("proxyro@sys logged in with observer_sys_password1", "server", addr)
			}
			return cl, nil
		}
		if se, ok := mysqlproto.AsSQLError(err); !ok || se.Code != mysqlproto.ERAccessDenied {
			return nil, err
		}
	}
	return nil, err
}

func (c *Cluster) checkVersion(cl *mysqlproto.Client) error {
	res, err := cl.Query(sqlCheckVersion)
	if err != nil {
		return err
	}
	if len(res.Rows) == 0 {
		return errors.New("ob_version() returned no row")
	}
	v := string(res.Rows[0][0])
	major, _, _ := strings.Cut(v, ".")
	if n, err := strconv.Atoi(major); err != nil || n < 4 {
		return fmt.Errorf("cluster version %q: obgate supports OceanBase 4.x", v)
	}
	c.version = v
	if cl.Handshake != nil && cl.Handshake.ServerVersion != "" {
		c.serverVersion.Store(&cl.Handshake.ServerVersion)
	}
	return nil
}

// ServerVersion is the version string the cluster's servers greet with
// ("5.7.25-OceanBase_CE-v4.2.1.0"), from the last internal login; "" until
// one succeeded. Any goroutine may call it.
func (c *Cluster) ServerVersion() string {
	if v := c.serverVersion.Load(); v != nil {
		return *v
	}
	return ""
}

// bound gives the internal connection's next queries
// long_async_task_timeout to finish, so that a hung server cannot stall a
// refresh (and the logins waiting on it) for ever.
func (c *Cluster) bound(cl *mysqlproto.Client) {
	_ = cl.Conn().SetDeadline(time.Now().Add(c.cfg.Load().LongAsyncTaskTimeout))
}

// checkClusterName runs ODP's initial server query and checks that the
// servers belong to the cluster obgate was told about.
func (c *Cluster) checkClusterName(cl *mysqlproto.Client) error {
	res, err := cl.Query(sqlInitServers)
	if err != nil {
		return fmt.Errorf("initial server list: %w", err)
	}
	if len(res.Rows) == 0 {
		return errors.New("initial server list is empty")
	}
	if got := res.String(0, "cluster"); got != "" && c.name != "" && got != c.name {
		return fmt.Errorf("root servers belong to cluster %q, not %q", got, c.name)
	}
	return nil
}

// load reads zones, servers and tenants with ODP's 4.x queries.
func (c *Cluster) load(cl *mysqlproto.Client) (*Table, error) {
	t := &Table{Cluster: c.name, ClusterID: c.id, Zones: map[string]*topology.Zone{}, Tenants: map[string]*Tenant{}, Refreshed: time.Now()}
	zones, err := cl.Query(sqlZones)
	if err != nil {
		return nil, fmt.Errorf("zones: %w", err)
	}
	if len(zones.Rows) == 0 {
		return nil, errors.New("zones: empty result")
	}
	for i := range zones.Rows {
		z := &topology.Zone{
			Name:   zones.String(i, "zone"),
			Region: orDefault(zones.String(i, "region"), "default_region"),
			IDC:    orDefault(zones.String(i, "spare4"), "default_idc"),
			Type:   zoneType(zones.String(i, "spare5")),
		}
		switch zones.String(i, "status") {
		case "ACTIVE":
			z.State = topology.ZoneActive
		case "INACTIVE":
			z.State = topology.ZoneUpgrade
		default:
			return nil, fmt.Errorf("zone %s: unknown status %q", z.Name, zones.String(i, "status"))
		}
		t.Zones[z.Name] = z
	}
	servers, err := cl.Query(sqlServers)
	if err != nil {
		return nil, fmt.Errorf("servers: %w", err)
	}
	for i := range servers.Rows {
		zone, ok := t.Zones[servers.String(i, "zone")]
		if !ok {
			continue // ODP treats a server of an unknown zone as deleted
		}
		port, err1 := strconv.Atoi(servers.String(i, "svr_port"))
		rpc, _ := strconv.Atoi(servers.String(i, "rpc_port"))
		st, ok := serverStateOf(servers.String(i, "status"),
			servers.String(i, "start_service_time") == "1", servers.String(i, "stop_time") == "1")
		if err1 != nil || !ok {
			c.log.Warn("skipping server with bad row", "ip", servers.String(i, "svr_ip"), "port", servers.String(i, "svr_port"), "status", servers.String(i, "status"))
			continue
		}
		t.Servers = append(t.Servers, &topology.Server{
			Addr: joinHostPort(servers.String(i, "svr_ip"), port), RPCPort: rpc,
			Zone: zone, Status: servers.String(i, "status"), State: st,
		})
	}
	t.index()
	tenants, err := cl.Query(sqlTenants)
	if err != nil {
		return nil, fmt.Errorf("tenants: %w", err)
	}
	for i := range tenants.Rows {
		id, _ := strconv.ParseInt(tenants.String(i, "tenant_id"), 10, 64)
		ten := &Tenant{
			Name: tenants.String(i, "tenant_name"), ID: id,
			Locality: tenants.String(i, "locality"), PrimaryZone: tenants.String(i, "primary_zone"),
			Status: tenants.String(i, "status"),
		}
		t.Tenants[ten.Name] = ten
	}
	if _, ok := t.Tenants[topology.TenantSys]; !ok {
		t.Tenants[topology.TenantSys] = &Tenant{Name: topology.TenantSys, ID: 1, Status: "NORMAL"}
	}
	if vars, err := cl.Query(sqlSysVariables); err == nil {
		t.SysVars = make(map[string]string, len(vars.Rows))
		for i := range vars.Rows {
			t.SysVars[vars.String(i, "name")] = vars.String(i, "value")
		}
	} else {
		c.log.Debug("system variables not read", "err", err)
	}
	return t, nil
}

// TenantServers returns the tenant's server addresses, fetching them on
// first use (concurrent callers share the fetch); later calls return the
// cached list, which the refresh loop keeps current. A list older than
// tenant_location_valid_time is fetched again in the background, once at
// a time, while callers keep getting it (0: only the refresh loop
// refreshes lists). Any goroutine.
func (c *Cluster) TenantServers(ctx context.Context, tenant string) (*TenantServers, error) {
	if l, ok := c.tenants.Load().m[tenant]; ok {
		if valid := c.cfg.Load().TenantLocationValidTime; valid > 0 && c.locations.now().Sub(l.Fetched) >= valid {
			c.refetchTenant(tenant)
		}
		return l, nil
	}
	c.used.Store(tenant, struct{}{})
	return c.fetchTenant(ctx, tenant)
}

// tenantCached reports whether TenantServers would answer for tenant
// from its cache, without a fetch.
func (c *Cluster) tenantCached(tenant string) bool {
	_, ok := c.tenants.Load().m[tenant]
	return ok
}

// refetchTenant starts a background fetch of a tenant's server list unless
// one is running; a failed fetch leaves the cached list in place.
func (c *Cluster) refetchTenant(tenant string) {
	c.fetchMu.Lock()
	_, running := c.fetching[tenant]
	c.fetchMu.Unlock()
	if running || !c.refetching.CompareAndSwap(false, true) {
		return
	}
	select {
	case <-c.stop:
		c.refetching.Store(false)
		return // closed: no new fetch
	default:
	}
	go func() {
		defer c.refetching.Store(false)
		c.contain("tenant_refetch", func() {
			ctx, cancel := context.WithTimeout(context.Background(), 2*c.cfg.Load().ShortAsyncTaskTimeout)
			defer cancel()
			if _, err := c.fetchTenant(ctx, tenant); err != nil {
				c.log.Debug("expired tenant server list not fetched", "tenant", tenant, "err", err)
			}
		})
	}()
}

func (c *Cluster) fetchTenant(ctx context.Context, tenant string) (*TenantServers, error) {
	c.fetchMu.Lock()
	if call, ok := c.fetching[tenant]; ok {
		c.fetchMu.Unlock()
		select {
		case <-call.done:
			return call.res, call.err
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
	// Until the fetch has a result, waiters would get errFetchAborted:
	// even a panic below must release them.
	call := &fetchCall{done: make(chan struct{}), err: errFetchAborted}
	c.fetching[tenant] = call
	c.fetchMu.Unlock()
	defer func() {
		c.fetchMu.Lock()
		delete(c.fetching, tenant)
		c.fetchMu.Unlock()
		close(call.done)
	}()

	res, err := c.queryTenant(ctx, tenant)
	if err == nil {
		c.publishTenant(res)
	}
	call.res, call.err = res, err
	return res, err
}

func (c *Cluster) queryTenant(ctx context.Context, tenant string) (*TenantServers, error) {
	q, err := sqlTenantServers(tenant)
	if err != nil {
		// Quoted: the name is a client's, and may hold anything.
		return nil, fmt.Errorf("tenant %q server list: %w", tenant, err)
	}
	if _, err := c.Ready(ctx); err != nil {
		return nil, err
	}
	c.loadMu.Lock()
	defer c.loadMu.Unlock()
	cl, err := c.metaConn(ctx)
	if err != nil {
		return nil, err
	}
	c.bound(cl)
	res, err := cl.Query(q)
	if err != nil {
		if _, ok := mysqlproto.AsSQLError(err); !ok {
			_ = cl.Close()
			c.meta = nil
		}
		return nil, fmt.Errorf("tenant %s server list: %w", tenant, err)
	}
	ts := &TenantServers{Tenant: tenant, Fetched: time.Now(), Addrs: tenantServersOf(res)}
	if len(ts.Addrs) == 0 {
		return nil, fmt.Errorf("tenant %s has no servers (unknown tenant?)", tenant)
	}
	return ts, nil
}

// tenantServersOf decodes the tenant server list query's rows: each
// server's ip:sql_port once, in the rows' order; rows without a usable
// address (serverAddr) are skipped.
func tenantServersOf(res *mysqlproto.Result) []string {
	var out []string
	seen := map[string]bool{}
	for i := range res.Rows {
		port, err := strconv.Atoi(res.String(i, "sql_port"))
		if err != nil {
			continue
		}
		addr, ok := serverAddr(res.String(i, "svr_ip"), port)
		if ok && !seen[addr] {
			seen[addr] = true
			out = append(out, addr)
		}
	}
	return out
}

// publishTenant swaps in a tenant map with ts added (copy on write).
func (c *Cluster) publishTenant(ts *TenantServers) {
	for {
		old := c.tenants.Load()
		m := make(map[string]*TenantServers, len(old.m)+1)
		for k, v := range old.m {
			m[k] = v
		}
		m[ts.Tenant] = ts
		if c.tenants.CompareAndSwap(old, &tenantLists{m: m}) {
			return
		}
	}
}

// refreshTenants re-reads the server lists of tenants in use.
func (c *Cluster) refreshTenants(ctx context.Context) {
	c.used.Range(func(k, _ any) bool {
		tenant := k.(string)
		if _, err := c.fetchTenant(ctx, tenant); err != nil {
			c.log.Debug("tenant server list refresh failed", "tenant", tenant, "err", err)
		}
		return ctx.Err() == nil
	})
}

// TenantLists returns every cached tenant server list (SHOW PROXYROUTE).
func (c *Cluster) TenantLists() []*TenantServers {
	m := c.tenants.Load().m
	out := make([]*TenantServers, 0, len(m))
	for _, v := range m {
		out = append(out, v)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Tenant < out[j].Tenant })
	return out
}

func orDefault(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

// zoneType matches a zone type case-insensitively by prefix, as ODP does.
func zoneType(s string) string {
	l := strings.ToLower(s)
	switch {
	case strings.HasPrefix(l, "readonly"):
		return "ReadOnly"
	case strings.HasPrefix(l, "encryption"):
		return "Encryption"
	}
	return "ReadWrite"
}

func uniq(s []string) []string {
	seen := make(map[string]bool, len(s))
	out := s[:0]
	for _, v := range s {
		if v != "" && !seen[v] {
			seen[v] = true
			out = append(out, v)
		}
	}
	return out
}
