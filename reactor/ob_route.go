package reactor

import (
	"strings"
	"time"

	"obgate/config"
	"obgate/mysqlproto"
	"obgate/route"
)

// obRouting is what an OceanBase-mode session keeps to route a statement
// by its data and to learn from the answer. Owned by the goroutine running
// the session's command.
type obRouting struct {
	// stmt, facts and params describe the statement being routed; set by
	// the command before it picks a server session, cleared at the start
	// of every command. stmt and facts borrow the command's buffers.
	stmt   []byte
	facts  *route.Facts
	params route.Params
	exec   route.ExecParams // params of a COM_STMT_EXECUTE
	// retryFacts are the facts of the kept request, for a resend.
	retryFacts route.Facts
	keyBuf     []byte // location-cache key scratch
	// explain, when set, receives the router's account of the next plan.
	explain *route.Explain

	// What the last plan routed by, and where the statement went, for the
	// partition-hit feedback of its answer.
	entry    *route.TableEntry
	tablet   *route.TabletLocation
	weak     bool
	toLeader bool // the statement was sent to the tablet's leader
	// singleLeader: the plan went by the tenant's single leader
	// (enable_single_leader_node_routing).
	singleLeader bool
}

// resetRoute forgets the previous statement's routing input.
func (r *obRouting) resetRoute() {
	r.stmt, r.facts, r.params = nil, nil, nil
	r.entry, r.tablet, r.toLeader, r.weak, r.singleLeader = nil, nil, false, false, false
}

// routeBy sets the statement the next server pick routes by.
func (r *obRouting) routeBy(stmt []byte, f *route.Facts, params route.Params) {
	r.stmt, r.facts, r.params = stmt, f, params
}

// stmtRoute fills the router's statement input from the session's state
// and configuration.
func (o *obSession) stmtRoute(cfg *config.Config) route.StmtRoute {
	rv := o.vars.Routing()
	sr := route.StmtRoute{
		Stmt: o.route.stmt, Facts: o.route.facts, Params: o.route.params,
		Database: o.vars.DB(), KeyBuf: &o.route.keyBuf,
		PartitionRoute:    cfg.EnablePartitionTableRoute,
		IDC:               cfg.ProxyIDCName,
		PrimaryZoneName:   cfg.ProxyPrimaryZoneName,
		EnablePrimaryZone: cfg.EnablePrimaryZone,
		SingleLeader:      cfg.EnableSingleLeaderNodeRouting,
		PLRoute:           cfg.EnablePLRoute,
		LocationWait:      min(cfg.ShortAsyncTaskTimeout, time.Second),
		TimeZone:          o.timeZone,
		Explain:           o.route.explain,
	}
	if rv.IDC != "" {
		sr.IDC = rv.IDC
	}
	policy := cfg.ProxyRoutePolicy
	if rv.RoutePolicy != "" {
		policy = rv.RoutePolicy
	}
	if policy != "" {
		sr.WeakPolicy, sr.HasWeakPolicy = route.WeakPolicy(policy)
	}
	if rv.OBRouteSet {
		sr.OBRoutePolicy, sr.HasOBRoutePolicy = rv.OBRoutePolicy, true
	}
	sr.Weak = o.weakRead(cfg, o.route.facts)
	return sr
}

// weakRead decides whether a statement reads weakly (route.WeakRead).
func (o *obSession) weakRead(cfg *config.Config, f *route.Facts) bool {
	s := o.s
	return route.WeakRead(f, o.vars.Routing().Weak,
		cfg.WeakReadUserList != "" && route.UserListed(cfg.WeakReadUserList, s.identity))
}

// notePlan keeps what a plan routed by, once the statement's server
// session is chosen.
func (o *obSession) notePlan(rt *route.Route, addr string) {
	s := o.s
	r := &o.route
	r.entry, r.tablet, r.weak = rt.Entry, rt.Tablet, rt.Weak
	r.singleLeader = rt.SingleLeader && len(rt.Addrs) > 0 && rt.Addrs[0] == addr
	leader, ok := rt.Tablet.Leader()
	r.toLeader = ok && leader == addr
	if r.facts != nil && r.facts.NumTables > 0 && !rt.Bound && s.cfg.EnablePartitionTableRoute {
		s.series.of(s.srv.metrics, s.published.db).countEntry(rt.Entry != nil, rt.Tablet != nil)
	}
}

// onPartitionHit handles ob_proxy_partition_hit in an answer: the server
// says whether it held what the statement touched. A strong statement sent
// to the leader that missed, or sent elsewhere that hit, means the entry
// is wrong (ODP's pl_update_if_necessary); a weak read that missed means
// the replica list is. A statement sent to the tenant's single leader that
// missed means the tenant's leaders are no longer all there: it is
// forgotten until the next server state refresh, as ODP does.
func (o *obSession) onPartitionHit(value []byte) {
	s := o.s
	r := &o.route
	hit := string(value) == "1" || strings.EqualFold(string(value), "true")
	s.st.partitionMissed = !hit
	if r.singleLeader && !hit {
		o.cluster.DropSingleLeader(o.tenant)
	}
	if r.entry == nil {
		return
	}
	s.srv.metrics.partitionHit(hit)
	switch {
	case r.weak && !hit:
		if r.entry.MarkDirty(false) {
			s.diagRouteMiss(r.entry, "weak read missed its replica", 0)
		}
	case !r.weak && r.tablet != nil && r.toLeader != hit:
		if r.entry.MarkDirty(false) {
			how := "sent to the leader, which did not hold the partition"
			if !r.toLeader {
				how = "sent away from the leader, and the server held the partition"
			}
			s.diagRouteMiss(r.entry, how, 0)
		}
	case !r.weak && r.tablet == nil && hit:
		// Routed without a partition and still local: nothing is wrong.
	}
}

// routeFeedbackERR marks dirty what an ERR says is wrong of the location
// the statement was routed by (route.LocationFixFor): an entry refreshed
// after delay_update_entry_interval or now, or every entry of the tenant.
func (o *obSession) routeFeedbackERR(code uint16) {
	switch route.LocationFixFor(code) {
	case route.FixEntryLater:
		if o.route.entry != nil && o.route.entry.MarkDirty(false) {
			o.s.diagRouteMiss(o.route.entry, "the server's error says the location is stale", code)
		}
	case route.FixEntryNow:
		if o.route.entry != nil && o.route.entry.MarkDirty(true) {
			o.s.diagRouteMiss(o.route.entry, "the server's error says the location is wrong", code)
		}
	case route.FixTenantNow:
		o.cluster.MarkTenantDirty(o.tenant)
	}
}

// rebindRoute points the routing input at the kept copy of the request
// before it is sent again: the client's buffer the first pick borrowed may
// be gone by then.
func (o *obSession) rebindRoute() {
	s := o.s
	if len(s.st.kept) <= mysqlproto.HeaderLen {
		return
	}
	payload := s.st.kept[mysqlproto.HeaderLen+1:]
	switch mysqlproto.Command(s.st.kept[mysqlproto.HeaderLen]) {
	case mysqlproto.ComQuery:
		o.route.retryFacts = route.Lex(payload)
		o.route.routeBy(payload, &o.route.retryFacts, nil)
	case mysqlproto.ComStmtExecute:
		if ps := s.st.retryPS; ps != nil {
			o.route.exec.Reset(payload, int(ps.Params), ps.Types)
			o.route.routeBy(ps.SQL, &ps.Facts, &o.route.exec)
		}
	default:
		o.route.routeBy(nil, nil, nil)
	}
}
