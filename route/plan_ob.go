package route

import (
	"context"
	"fmt"
	"math/rand/v2"
	"strings"
	"time"

	"obgate/internal/topology"
	"obgate/mysqlproto"
)

// StmtRoute is what an OceanBase-mode session tells the router about the
// statement, so that it goes where its data is. The zero value routes by
// the tenant server list, as for a statement without a table.
type StmtRoute struct {
	// Stmt is the statement text (a COM_QUERY payload, or the text a
	// COM_STMT_EXECUTE runs); Facts its lexer facts. Both are borrowed for
	// the call.
	Stmt  []byte
	Facts *Facts
	// Params are the placeholder values of an execute (nil for text).
	Params Params
	// Database is the session's current database, for unqualified names.
	Database string
	// KeyBuf is the session's scratch for the location-cache key; with it
	// a cached lookup does not allocate.
	KeyBuf *[]byte
	// Weak says the statement is a weak read (hint, ob_read_consistency,
	// or a weak-read user), decided by the session.
	Weak bool
	// PartitionRoute is enable_partition_table_route.
	PartitionRoute bool
	// IDC is @proxy_idc_name, else proxy_idc_name ("" turns LDC off).
	IDC string
	// WeakPolicy is @proxy_route_policy, else proxy_route_policy, when it
	// names a weak-read policy (HasWeakPolicy).
	WeakPolicy    RoutePolicy
	HasWeakPolicy bool
	// OBRoutePolicy is the session's ob_route_policy (0–3) when
	// HasOBRoutePolicy; weak reads use it when the cluster has read-only
	// zones (READONLY_ZONE_FIRST when not set).
	OBRoutePolicy    int
	HasOBRoutePolicy bool
	// PrimaryZoneName is proxy_primary_zone_name ("z1,z2;z3"): only servers
	// of those zones are used, groups in priority order.
	PrimaryZoneName string
	// EnablePrimaryZone is enable_primary_zone: strong statements try the
	// tenant's primary zone after the leader.
	EnablePrimaryZone bool
	// PLRoute is enable_pl_route: a CALL is routed by its procedure's
	// route SQL (routine.go) when the cluster publishes one.
	PLRoute bool
	// SingleLeader is enable_single_leader_node_routing: a strong
	// statement of a tenant whose user log streams all have their leader
	// on one server goes to that server first, without a location lookup
	// (unless PrimaryZoneName is set, as in ODP).
	SingleLeader bool
	// TimeZone is the session's time_zone, in which TIMESTAMP partition
	// keys are read (obpart.ParseTimeZone); nil when it is not known.
	TimeZone *time.Location
	// LocationWait bounds the wait for a table's first location fetch
	// (0: one second); after it the statement goes by the tenant list.
	LocationWait time.Duration
	// Explain, when set, receives why each candidate is where it is.
	Explain *Explain
}

// Explain is the router's account of one decision (EXPLAIN ROUTE).
type Explain struct {
	Table      string // db.table the statement was routed by; "" for none
	EntryState string
	TableID    int64
	PartNum    int
	Partition  PartResult
	Tablet     int64 // -1 when no single tablet
	Policy     RoutePolicy
	Weak       bool
	IDC        string
	LDC        bool
	Optimized  bool
	Candidates []ExplainCandidate
	Notes      []string
}

// ExplainCandidate is one server of a plan, in the plan's order.
type ExplainCandidate struct {
	Addr, Zone, Region, IDC string
	ZoneType                string
	LDC                     LDCClass
	Role                    string // leader, follower, readonly replica, partition holder, tenant server, target
	Available, Tried        bool
	Reason                  string
}

// maxStackCands is how many candidates a plan orders without allocating.
const maxStackCands = 48

type planCand struct {
	addr  string
	srv   *topology.Server
	f     candFacts
	first bool // the leader of a strong statement, or the session's cached server
	pass  int  // 0 available, 1 unavailable, 2 already tried
	rank  int
	key   uint64
	role  string
}

// obPlanner builds one OceanBase-mode plan; it lives on the caller's
// stack. Candidates go into cands; a plan with more than maxStackCands
// moves them to big.
type obPlanner struct {
	r       *Router
	cluster *Cluster
	tried   []string
	t       *Table
	ldc     *ldcView
	n       int
	cands   [maxStackCands]planCand
	big     []planCand
}

// list returns the candidates so far.
func (p *obPlanner) list() []planCand {
	if p.big != nil {
		return p.big
	}
	return p.cands[:p.n]
}

// truncate keeps the first n candidates.
func (p *obPlanner) truncate(n int) {
	if p.big != nil {
		p.big = p.big[:n]
	} else {
		p.n = n
	}
}

func (p *obPlanner) add(addr string, f candFacts, role string) {
	for _, c := range p.list() {
		if c.addr == addr {
			return
		}
	}
	srv, _ := p.t.Server(addr)
	if srv != nil && srv.Zone != nil && srv.Zone.Type == "ReadOnly" {
		f.readOnly = true
	}
	f.ldc = p.ldc.class(srv)
	c := planCand{addr: addr, srv: srv, f: f, pass: p.r.passOf(p.cluster, p.tried, addr), role: role}
	switch {
	case p.big != nil:
		p.big = append(p.big, c)
	case p.n < len(p.cands):
		p.cands[p.n] = c
		p.n++
	default:
		p.big = append(make([]planCand, 0, 2*p.n), p.cands[:p.n]...)
		p.big = append(p.big, c)
	}
}

// planOB orders the candidates of an OceanBase-mode statement: the
// replicas of its partition (the leader first for a strong statement)
// when its table and partition are known, the servers holding any of the
// table's partitions when only the table is, the tenant's servers
// otherwise, each group ordered by the route policy, available servers
// before unavailable ones and servers the statement failed on last.
func (r *Router) planOB(ctx context.Context, req *Request, dst []string) (Route, error) {
	c := req.Cluster
	t := c.Table()
	if req.NoWait && !r.planReady(req, t) {
		return Route{}, ErrWouldWait
	}
	if t == nil {
		var err error
		if t, err = c.Ready(ctx); err != nil {
			return Route{}, err
		}
	}
	tenantAddrs, err := r.serverList(ctx, req)
	if err != nil {
		return Route{}, err
	}
	rt := Route{Generation: r.generation(), Weak: req.Weak}
	var planner obPlanner
	p := &planner
	// The planner keeps what it needs of req, not req: a pointer to the
	// caller's Request in it would move the Request to the heap.
	p.r, p.cluster, p.tried, p.t, p.ldc = r, c, req.Tried, t, t.ldc(req.IDC)
	ex := req.Explain
	if ex != nil {
		*ex = Explain{Tablet: -1, Weak: req.Weak, IDC: req.IDC, LDC: p.ldc.enabled}
	}

	target := req.Facts != nil && len(req.Facts.TargetDBServer) > 0
	if req.PLRoute && !target && req.Facts != nil && req.Facts.Kind == StmtCall {
		req = r.callRoute(ctx, req, ex)
	}
	singleLeader := ""
	if req.SingleLeader && !req.Weak && !target && req.PrimaryZoneName == "" {
		singleLeader, _ = c.SingleLeader(req.Tenant)
	}
	switch {
	case target:
		for _, a := range strings.FieldsFunc(string(req.Facts.TargetDBServer), func(r rune) bool { return r == ',' || r == ';' || r == ' ' }) {
			p.add(a, candFacts{holds: true}, "target")
		}
	case singleLeader != "":
		// Every leader of the tenant is there: no location lookup.
		p.add(singleLeader, candFacts{holds: true, leader: true}, "single leader")
		rt.SingleLeader = true
		if ex != nil {
			ex.Notes = append(ex.Notes, "the tenant's leaders are all on "+singleLeader+" (enable_single_leader_node_routing)")
		}
	case req.PartitionRoute && req.Facts != nil && req.Facts.NumTables > 0 && req.KeyBuf != nil:
		r.locate(ctx, req, p, &rt, ex)
	}
	tableless := rt.Entry == nil
	if !target {
		for _, a := range tenantAddrs {
			role := "tenant server"
			if tableless {
				role = "server"
			}
			p.add(a, candFacts{holds: tableless}, role)
		}
	}

	policy := choosePolicy(req, t, rt.Entry, target, tableless)
	rt.Policy = policy
	if policy == ForceReadonlyZone && !req.Weak && !sessionOnly(req.Facts) {
		return Route{}, mysqlproto.OBErrNotSupported.New("under proxy_route_policy FORCE_READONLY_ZONE, a statement other than a weak read is")
	}
	leader, hasLeader := rt.Tablet.Leader()
	leaderFirst := hasLeader && !req.Weak && policy != ProxyPrimaryZoneNameOnly && policy != DupReplicaFirst &&
		policy != TargetDBServerOnly && policy != OnlyReadonlyZone && policy != ForceReadonlyZone
	optimized := p.optimized(req.Weak, hasLeader, leader)
	pz := ""
	switch policy {
	case ProxyPrimaryZoneNameOnly:
		pz = req.PrimaryZoneName
	case PrimaryZoneFirst:
		if ten, ok := t.Tenant(req.Tenant); ok {
			pz = ten.PrimaryZone
		}
	}
	all := p.list()
	kept := 0
	for _, cd := range all {
		rank, ok := policy.rank(cd.f, optimized)
		zone := ""
		if cd.srv != nil && cd.srv.Zone != nil {
			zone = cd.srv.Zone.Name
		}
		switch policy {
		case ProxyPrimaryZoneNameOnly:
			g := zoneGroup(pz, zone)
			if g < 0 {
				ok = false
			}
			rank = g*16 + rank
		case PrimaryZoneFirst:
			if g := zoneGroup(pz, zone); g >= 0 {
				rank = g
			} else {
				rank += 16
			}
		}
		if !ok {
			if ex != nil {
				ex.Notes = append(ex.Notes, fmt.Sprintf("%s left out: %s does not allow a %s", cd.addr, policy, describeFacts(cd.f)))
			}
			continue
		}
		cd.rank = rank
		cd.first = leaderFirst && cd.addr == leader || cd.addr == singleLeader
		all[kept] = cd
		kept++
	}
	p.truncate(kept)
	if kept == 0 {
		if policy == OnlyReadonlyZone || policy == ForceReadonlyZone {
			return Route{}, mysqlproto.OBErrNotSupported.New("a weak read with no replica in a read-only zone is")
		}
		return Route{}, fmt.Errorf("no server to route to")
	}
	if tableless && singleLeader == "" {
		p.preferLast(req, rt.Generation)
	}
	list := p.list()
	for i := range list {
		cd := &list[i]
		first := uint64(1)
		if cd.first {
			first = 0
		}
		cd.key = uint64(cd.pass)<<48 | first<<47 | uint64(min(cd.rank, 255))<<32 | uint64(rand.Uint32())
	}
	sortCands(list)
	for i := range list {
		dst = append(dst, list[i].addr)
	}
	rt.Addrs = dst
	if ex != nil {
		p.explain(ex, policy, optimized, leaderFirst)
	}
	return rt, nil
}

// planReady reports whether planOB can plan req from cached state alone,
// t being the cluster's snapshot: the tenant's server list is cached, a
// CALL needs no route SQL fetched, and the table a partition route looks
// up has a location entry that needs no wait.
func (r *Router) planReady(req *Request, t *Table) bool {
	if t == nil {
		return false
	}
	if _, known := t.Tenant(req.Tenant); known && !req.Cluster.tenantCached(req.Tenant) {
		return false
	}
	f := req.Facts
	if f == nil {
		return true
	}
	if len(f.TargetDBServer) > 0 {
		return true
	}
	if req.PLRoute && f.Kind == StmtCall {
		return false
	}
	if req.SingleLeader && !req.Weak && req.PrimaryZoneName == "" {
		if a, _ := req.Cluster.SingleLeader(req.Tenant); a != "" {
			return true
		}
	}
	if !req.PartitionRoute || f.NumTables == 0 || req.KeyBuf == nil {
		return true
	}
	tr := f.Tables[0]
	db := tr.DB
	if len(db) == 0 {
		if req.Database == "" {
			return true
		}
		*req.KeyBuf = locationKey(*req.KeyBuf, req.Tenant, req.Database, tr.Name)
	} else {
		*req.KeyBuf = locationKey(*req.KeyBuf, req.Tenant, db, tr.Name)
	}
	return req.Cluster.locations.cached(*req.KeyBuf)
}

// callRoute returns req routed by the route SQL of the procedure a CALL
// names (a copy of req with Stmt and Facts replaced), or req itself when
// the procedure has none or is not known in time.
func (r *Router) callRoute(ctx context.Context, req *Request, ex *Explain) *Request {
	db, pkg, name, ok := CallTarget(req.Stmt)
	if !ok {
		return req
	}
	if db == "" {
		db = req.Database
	}
	wait := req.LocationWait
	if wait <= 0 {
		wait = time.Second
	}
	wctx, cancel := context.WithTimeout(ctx, wait)
	e := req.Cluster.routine(wctx, req.Tenant, db, pkg, name)
	cancel()
	if e == nil || e.routeSQL == nil {
		if ex != nil {
			ex.Notes = append(ex.Notes, "CALL "+db+"."+name+": no route SQL known for the procedure")
		}
		return req
	}
	if ex != nil {
		ex.Notes = append(ex.Notes, "CALL "+db+"."+name+" routed by its route SQL: "+string(e.routeSQL))
	}
	routed := *req
	// An unqualified table of the route SQL is in the procedure's database.
	routed.Stmt, routed.Facts, routed.Params, routed.Database = e.routeSQL, &e.facts, nil, db
	return &routed
}

// locate finds the statement's table entry and partition, and adds the
// replicas it may go to.
func (r *Router) locate(ctx context.Context, req *Request, p *obPlanner, rt *Route, ex *Explain) {
	tr := req.Facts.Tables[0]
	dbLen := len(tr.DB)
	if dbLen == 0 {
		if req.Database == "" {
			if ex != nil {
				ex.Notes = append(ex.Notes, "no database selected: the table's location is unknown")
			}
			return
		}
		dbLen = len(req.Database)
		*req.KeyBuf = locationKey(*req.KeyBuf, req.Tenant, req.Database, tr.Name)
	} else {
		*req.KeyBuf = locationKey(*req.KeyBuf, req.Tenant, tr.DB, tr.Name)
	}
	lc := req.Cluster.locations
	e, updated := lc.lookup(*req.KeyBuf, req.Tenant, dbLen, tr.Name)
	if e.State() == EntryBuilding || updated != nil {
		wait := req.LocationWait
		if wait <= 0 {
			wait = time.Second
		}
		wctx, cancel := context.WithTimeout(ctx, wait)
		if updated != nil {
			// enable_async_pull_location_cache is off: the statement
			// that started the refresh goes by its result.
			e = lc.waitUpdate(wctx, e, updated)
		} else {
			e = lc.wait(wctx, e)
		}
		cancel()
	}
	if ex != nil {
		ex.Table = e.Database + "." + e.Table
		ex.EntryState = e.State().String()
		ex.TableID, ex.PartNum = e.TableID, e.PartNum
	}
	if !e.Exists {
		if ex != nil {
			switch {
			case e.State() == EntryBuilding:
				ex.Notes = append(ex.Notes, "the table's location is still being fetched: tenant server list")
			case e.FetchErr != "":
				ex.Notes = append(ex.Notes, "location fetch failed ("+e.FetchErr+"): tenant server list")
			default:
				ex.Notes = append(ex.Notes, "the cluster does not list this table: tenant server list")
			}
		}
		return
	}
	rt.Entry = e
	var loc *TabletLocation
	if e.Part == nil {
		loc = e.First
		if ex != nil {
			ex.Partition.How = "not partitioned"
		}
	} else {
		res := PartResult{TZ: req.TimeZone}
		if ex != nil {
			res.Explain = true
		}
		e.Part.Calculate(req.Stmt, req.Facts, tr, req.Params, &res)
		if res.Known {
			loc, _ = e.Tablet(res.TabletID)
		}
		if ex != nil {
			ex.Partition = res
		}
	}
	if loc != nil && len(loc.Replicas) > 0 {
		rt.Tablet = loc
		if ex != nil {
			ex.Tablet = loc.TabletID
		}
		for _, rep := range loc.Replicas {
			role := "follower"
			if rep.Leader {
				role = "leader"
			} else if rep.ReadOnly {
				role = "readonly replica"
			}
			p.add(rep.Addr, candFacts{holds: true, leader: rep.Leader, readOnly: rep.ReadOnly, dup: e.DupReplica}, role)
		}
		return
	}
	// The partition is not known: one of the servers holding the table's
	// partitions (ODP 3.2 and later), not just any server of the tenant.
	for _, a := range e.holders {
		p.add(a, candFacts{holds: true, dup: e.DupReplica}, "partition holder")
	}
}

// optimized reports whether the _OPTIMIZED order applies: no available
// partition holder in the proxy's region, and a weak read, no leader or an
// unavailable leader.
func (p *obPlanner) optimized(weak, hasLeader bool, leader string) bool {
	if !p.ldc.enabled {
		return false
	}
	for _, cd := range p.list() {
		if cd.f.holds && cd.f.ldc != OtherRegion && cd.pass == 0 {
			return false
		}
	}
	return weak || !hasLeader || p.r.passOf(p.cluster, p.tried, leader) != 0
}

// preferLast puts the session's last server first for a statement without
// a table (enable_cached_server), when it is available, the servers'
// availability did not change since the session's last plan, and no
// candidate is in a better class.
func (p *obPlanner) preferLast(req *Request, gen uint64) {
	if !req.PreferLast || req.Last == "" || req.SeenGeneration != gen {
		return
	}
	best := -1
	list := p.list()
	for i := range list {
		if list[i].pass == 0 && (best < 0 || list[i].rank < best) {
			best = list[i].rank
		}
	}
	for i := range list {
		cd := &list[i]
		if cd.addr == req.Last && cd.pass == 0 && cd.rank == best {
			cd.first = true
		}
	}
}

// sortCands orders candidates by key (insertion sort: the lists are short
// and sort.Slice would allocate).
func sortCands(c []planCand) {
	for i := 1; i < len(c); i++ {
		for j := i; j > 0 && c[j].key < c[j-1].key; j-- {
			c[j], c[j-1] = c[j-1], c[j]
		}
	}
}

// choosePolicy picks the route policy of a statement (odp-behaviour.md §5.8).
func choosePolicy(req *Request, t *Table, e *TableEntry, target, tableless bool) RoutePolicy {
	switch {
	case target:
		return TargetDBServerOnly
	case req.HasWeakPolicy && req.WeakPolicy == ForceReadonlyZone:
		return ForceReadonlyZone
	case !req.Weak && e != nil && e.DupReplica && req.Facts != nil && req.Facts.Kind == StmtSelect && req.Facts.ReadOnly:
		return DupReplicaFirst
	case t.hasReadOnly:
		switch {
		case req.Weak && req.HasOBRoutePolicy:
			return obRoutePolicy(req.OBRoutePolicy)
		case req.Weak:
			return ReadonlyZoneFirst
		case tableless && req.Facts != nil && req.Facts.ReadOnly:
			return MergeIDCOrder
		}
		return OnlyReadwriteZone
	case req.Weak:
		switch {
		case req.HasWeakPolicy:
			return req.WeakPolicy
		case req.PrimaryZoneName != "":
			return ProxyPrimaryZoneNameOnly
		}
		return MergeIDCOrder
	case req.PrimaryZoneName != "":
		return ProxyPrimaryZoneNameOnly
	case req.EnablePrimaryZone && !tableless:
		return PrimaryZoneFirst
	}
	return MergeIDCOrder
}

// sessionOnly reports a statement that touches no table data: session
// settings (SET, USE), SHOW, and SELECTs without a table. FORCE_READONLY_ZONE
// lets them run on the read-only zones, so that drivers can set a session
// up; everything else must be a weak read.
func sessionOnly(f *Facts) bool {
	if f == nil {
		return true
	}
	switch f.Kind {
	case StmtSet, StmtUse, StmtShow:
		return true
	case StmtSelect:
		return f.NumTables == 0 && f.ReadOnly
	}
	return false
}

// zoneGroup returns the priority group of zone in a primary-zone list
// ("z1,z2;z3": groups separated by ';', zones by ','), or -1. RANDOM and
// an empty list have no groups. It does not allocate.
func zoneGroup(list, zone string) int {
	if zone == "" || list == "" || strings.EqualFold(list, "RANDOM") {
		return -1
	}
	group := 0
	for len(list) > 0 {
		i := strings.IndexAny(list, ",;")
		item, sep := list, byte(0)
		if i >= 0 {
			item, sep, list = list[:i], list[i], list[i+1:]
		} else {
			list = ""
		}
		if strings.TrimSpace(item) == zone {
			return group
		}
		if sep == ';' {
			group++
		}
	}
	return -1
}

func describeFacts(f candFacts) string {
	var b strings.Builder
	b.WriteString(f.ldc.String())
	if f.readOnly {
		b.WriteString(" read-only")
	} else {
		b.WriteString(" read-write")
	}
	switch {
	case f.leader:
		b.WriteString(" leader")
	case f.holds:
		b.WriteString(" replica")
	default:
		b.WriteString(" tenant server")
	}
	return b.String()
}

// explain records the ordered candidates and why each is where it is.
func (p *obPlanner) explain(ex *Explain, policy RoutePolicy, optimized, leaderFirst bool) {
	ex.Policy, ex.Optimized = policy, optimized
	for _, cd := range p.list() {
		c := ExplainCandidate{Addr: cd.addr, LDC: cd.f.ldc, Role: cd.role, Available: cd.pass == 0, Tried: cd.pass == 2}
		if cd.srv != nil && cd.srv.Zone != nil {
			z := cd.srv.Zone
			c.Zone, c.Region, c.IDC, c.ZoneType = z.Name, z.Region, z.IDC, z.Type
		}
		var why []string
		switch {
		case cd.pass == 2:
			why = append(why, "already failed this statement: last")
		case cd.pass == 1:
			why = append(why, "blocklisted: after every available server")
		}
		switch {
		case cd.first && cd.f.leader && leaderFirst:
			why = append(why, "partition leader of a strong statement: first")
		case cd.first:
			why = append(why, "the session's last server (enable_cached_server)")
		case policy == PrimaryZoneFirst && cd.rank < 16:
			why = append(why, fmt.Sprintf("in the tenant's primary zone (priority group %d)", cd.rank+1))
		case policy == PrimaryZoneFirst:
			why = append(why, fmt.Sprintf("outside the tenant's primary zone; then %s", describeFacts(cd.f)))
		case policy == ProxyPrimaryZoneNameOnly:
			why = append(why, fmt.Sprintf("proxy_primary_zone_name group %d", cd.rank/16+1))
		default:
			why = append(why, fmt.Sprintf("%s class %d of its order (%s)", policy, cd.rank+1, describeFacts(cd.f)))
		}
		c.Reason = strings.Join(why, "; ")
		ex.Candidates = append(ex.Candidates, c)
	}
}
