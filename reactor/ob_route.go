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
}

// resetRoute forgets the previous statement's routing input.
func (r *obRouting) resetRoute() {
	r.stmt, r.facts, r.params = nil, nil, nil
	r.entry, r.tablet, r.toLeader, r.weak = nil, nil, false, false
}

// routeBy sets the statement the next server pick routes by.
func (r *obRouting) routeBy(stmt []byte, f *route.Facts, params route.Params) {
	r.stmt, r.facts, r.params = stmt, f, params
}

// stmtRoute fills the router's statement input from the session's state
// and configuration.
func (s *Session) stmtRoute(cfg *config.Config) route.StmtRoute {
	ob := s.ob
	rv := &ob.vars.routing
	sr := route.StmtRoute{
		Stmt: ob.route.stmt, Facts: ob.route.facts, Params: ob.route.params,
		Database: ob.vars.db, KeyBuf: &ob.route.keyBuf,
		PartitionRoute:    cfg.EnablePartitionTableRoute,
		IDC:               cfg.ProxyIDCName,
		PrimaryZoneName:   cfg.ProxyPrimaryZoneName,
		EnablePrimaryZone: cfg.EnablePrimaryZone,
		LocationWait:      min(cfg.ShortAsyncTaskTimeout, time.Second),
		TimeZone:          ob.timeZone,
		Explain:           ob.route.explain,
	}
	if rv.idc != "" {
		sr.IDC = rv.idc
	}
	policy := cfg.ProxyRoutePolicy
	if rv.routePolicy != "" {
		policy = rv.routePolicy
	}
	if policy != "" {
		sr.WeakPolicy, sr.HasWeakPolicy = route.WeakPolicy(policy)
	}
	if rv.obRouteSet {
		sr.OBRoutePolicy, sr.HasOBRoutePolicy = rv.obRoutePolicy, true
	}
	sr.Weak = s.weakRead(cfg, ob.route.facts)
	return sr
}

// weakRead decides whether a statement reads weakly (odp-behaviour.md
// §5.5): only a SELECT that takes no locks can; its hint counts first,
// then the session's ob_read_consistency, then weak_read_user_list. A
// statement too long to lex whole reads weakly only when its hint says so
// (the hint is at its start; a lock clause could be beyond what was read).
func (s *Session) weakRead(cfg *config.Config, f *route.Facts) bool {
	if f == nil || f.Kind != route.StmtSelect || f.Pins != 0 {
		return false
	}
	switch f.ReadConsistency {
	case route.ConsistencyWeak, route.ConsistencyFrozen:
		return f.ReadOnly || f.Incomplete
	case route.ConsistencyStrong:
		return false
	}
	if !f.ReadOnly {
		return false
	}
	if s.ob.vars.routing.weak {
		return true
	}
	return cfg.WeakReadUserList != "" && userListed(cfg.WeakReadUserList, s.identity)
}

// userListed reports whether the session's user is in a comma-separated
// list of user or user@tenant names.
func userListed(list string, id route.Identity) bool {
	for list != "" {
		item, rest, _ := strings.Cut(list, ",")
		list = rest
		item = strings.TrimSpace(item)
		u, tenant, hasTenant := strings.Cut(item, "@")
		if u == id.User && (!hasTenant || strings.EqualFold(tenant, id.Tenant)) {
			return true
		}
	}
	return false
}

// notePlan keeps what a plan routed by, once the statement's server
// session is chosen.
func (s *Session) notePlan(rt *route.Route, addr string) {
	r := &s.ob.route
	r.entry, r.tablet, r.weak = rt.Entry, rt.Tablet, rt.Weak
	leader, ok := rt.Tablet.Leader()
	r.toLeader = ok && leader == addr
	if r.facts != nil && r.facts.NumTables > 0 && !rt.Bound && s.cfg.EnablePartitionTableRoute {
		s.countEntry(rt.Entry != nil, rt.Tablet != nil)
	}
}

// onPartitionHit handles ob_proxy_partition_hit in an answer: the server
// says whether it held what the statement touched. A strong statement sent
// to the leader that missed, or sent elsewhere that hit, means the entry
// is wrong (ODP's pl_update_if_necessary); a weak read that missed means
// the replica list is.
func (s *Session) onPartitionHit(value []byte) {
	r := &s.ob.route
	if r.entry == nil {
		return
	}
	hit := string(value) == "1" || strings.EqualFold(string(value), "true")
	s.srv.metrics.partitionHit(hit)
	switch {
	case r.weak && !hit:
		r.entry.MarkDirty(false)
	case !r.weak && r.tablet != nil && r.toLeader != hit:
		r.entry.MarkDirty(false)
	case !r.weak && r.tablet == nil && hit:
		// Routed without a partition and still local: nothing is wrong.
	}
}

// routeFeedbackERR handles the errors that say a location is wrong:
// 4038 NOT_MASTER marks the entry dirty (refreshed after
// delay_update_entry_interval), 4124 CONNECT_ERROR marks it dirty and due
// now, 5150 TENANT_NOT_IN_SERVER and 4666 CLUSTER_NO_MATCH every entry of
// the tenant, 5727 REROUTE the entry, due now.
func (s *Session) routeFeedbackERR(code uint16) {
	ob := s.ob
	if ob == nil {
		return
	}
	switch code {
	case mysqlproto.OBNotMaster:
		if ob.route.entry != nil {
			ob.route.entry.MarkDirty(false)
		}
	case mysqlproto.OBConnectError, mysqlproto.OBErrReroute:
		if ob.route.entry != nil {
			ob.route.entry.MarkDirty(true)
		}
	case mysqlproto.OBTenantNotInServer, mysqlproto.OBClusterNoMatch:
		ob.cluster.MarkTenantDirty(ob.tenant)
	}
}

// rebindRoute points the routing input at the kept copy of the request
// before it is sent again: the client's buffer the first pick borrowed may
// be gone by then.
func (s *Session) rebindRoute() {
	ob := s.ob
	if ob == nil || len(s.kept) <= mysqlproto.HeaderLen {
		return
	}
	payload := s.kept[mysqlproto.HeaderLen+1:]
	switch mysqlproto.Command(s.kept[mysqlproto.HeaderLen]) {
	case mysqlproto.ComQuery:
		ob.route.retryFacts = route.Lex(payload)
		ob.route.routeBy(payload, &ob.route.retryFacts, nil)
	case mysqlproto.ComStmtExecute:
		if ps := s.retryPS; ps != nil {
			ob.route.exec.Reset(payload, int(ps.params), ps.types)
			ob.route.routeBy(ps.sql, &ps.facts, &ob.route.exec)
		}
	default:
		ob.route.routeBy(nil, nil, nil)
	}
}
