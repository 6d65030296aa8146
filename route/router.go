package route

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"sync/atomic"
)

// Availability says whether a server may take new requests. The health
// package satisfies it; route asks it about every candidate it orders and
// never learns why a server is unavailable. Implementations are called on
// the statement path from many goroutines at once: they must answer from
// atomic loads, without locks or I/O.
type Availability interface {
	// Available reports whether the server at addr (ip:port) of the named
	// cluster ("" in mysql routing mode) may be sent new requests.
	Available(cluster, addr string) bool
}

// Request is what a session tells the router about the statement it is
// about to send and about itself. The router reads it and keeps nothing.
type Request struct {
	// Cluster and Tenant pick the server list in OceanBase mode; Cluster is
	// nil in mysql routing mode, where Servers is the configured list.
	Cluster *Cluster
	Tenant  string
	Servers []string

	// Last is the address of the server the session's previous statement
	// ran on ("" when there is none).
	Last string
	// InTrans, Pinned and ReadsLast say that the statement must run on
	// Last: a transaction is open there, the session left state there
	// (temporary tables, locks, SET TRANSACTION) or the statement reads
	// what the previous one left (LAST_INSERT_ID(), SHOW WARNINGS, ...).
	InTrans, Pinned, ReadsLast bool
	// PreferLast puts Last first when it is available
	// (enable_cached_server), unless the servers' availability changed
	// since the session's last plan (SeenGeneration differs from what
	// the Availability reports): then the session picks afresh, so that
	// sessions spread again over a server that came back.
	PreferLast     bool
	SeenGeneration uint64
	// Tried are servers the statement already failed on; they go after
	// every other candidate, available or not.
	Tried []string

	// NoWait asks for a plan from cached state only: where the plan would
	// wait (a cluster not bootstrapped yet, a tenant server list or a
	// table location not fetched yet or due for a refresh the statement
	// must wait for, a procedure's route SQL) Plan returns ErrWouldWait
	// at once, having changed nothing the caller sees, and the caller
	// asks again from where it may wait. It is for the statement path on
	// the poller.
	NoWait bool

	// Statement routing, OceanBase mode (see plan_ob.go); all optional.
	StmtRoute
}

// ErrWouldWait is Plan's answer to a NoWait request whose plan would wait.
var ErrWouldWait = errors.New("route: the plan would wait")

// mustStay reports whether the statement may only run on the last server.
func (r *Request) mustStay() bool {
	return r.Last != "" && (r.InTrans || r.Pinned || r.ReadsLast)
}

// Route is the router's answer: the servers to try, in order.
type Route struct {
	// Addrs are the candidate servers, best first. Servers that the
	// Availability reports unavailable come after every available one, so
	// that a statement is still tried when every server is listed.
	Addrs []string
	// Bound says that Addrs is only the last server, because the session
	// must stay there; the caller must not go elsewhere if it fails.
	Bound bool
	// Generation is the availability generation the plan saw; the caller
	// gives it back as SeenGeneration next time.
	Generation uint64

	// What the plan routed by, for the session's feedback handling: the
	// table entry (nil for the tenant server list), the tablet (nil when
	// its partition was not known), the policy, and whether the statement
	// is a weak read.
	Entry  *TableEntry
	Tablet *TabletLocation
	Policy RoutePolicy
	Weak   bool
	// SingleLeader says the statement went by the tenant's single leader
	// (StmtRoute.SingleLeader), the first of Addrs.
	SingleLeader bool
}

// FirstIsLeader reports whether the first candidate is the leader of the
// statement's tablet.
func (rt *Route) FirstIsLeader() bool {
	leader, ok := rt.Tablet.Leader()
	return ok && len(rt.Addrs) > 0 && rt.Addrs[0] == leader
}

// Generational is an Availability that counts its changes: Generation
// grows whenever a server becomes available or unavailable.
type Generational interface {
	Generation() uint64
}

// Router orders candidate servers for statements. Safe for concurrent use.
type Router struct {
	avail Availability
	rr    atomic.Uint64 // round-robin start for mysql routing mode
}

// NewRouter returns a router that asks avail about each candidate; a nil
// avail treats every server as available.
func NewRouter(avail Availability) *Router { return &Router{avail: avail} }

// Plan orders the candidates for req into dst (reset to length 0 and
// returned as rt.Addrs, so a caller that passes the same slice each time
// does not allocate). OceanBase mode starts at a random server of the
// tenant, as ODP spreads sessions; mysql mode goes round-robin over the
// configured servers.
func (r *Router) Plan(ctx context.Context, req *Request, dst []string) (Route, error) {
	dst = dst[:0]
	if req.mustStay() {
		return Route{Addrs: append(dst, req.Last), Bound: true, Generation: r.generation()}, nil
	}
	if req.Cluster != nil {
		return r.planOB(ctx, req, dst)
	}
	list, err := r.serverList(ctx, req)
	if err != nil {
		return Route{}, err
	}
	if len(list) == 0 {
		return Route{}, fmt.Errorf("no server to route to")
	}
	start := 0
	if req.Cluster != nil {
		start = rand.IntN(len(list))
	} else {
		start = int(r.rr.Add(1)-1) % len(list)
	}
	first := ""
	gen := r.generation()
	if req.PreferLast && req.SeenGeneration == gen && req.Last != "" && r.pass(req, req.Last) == 0 && slices.Contains(list, req.Last) {
		first = req.Last
		dst = append(dst, first)
	}
	// Available servers first, from the start; then the unavailable ones
	// in the same order, tried when everything else failed (force retry);
	// servers that already failed this statement last.
	for pass := range 3 {
		for i := range list {
			addr := list[(start+i)%len(list)]
			if addr == first || r.pass(req, addr) != pass {
				continue
			}
			dst = append(dst, addr)
		}
	}
	return Route{Addrs: dst, Generation: gen}, nil
}

func (r *Router) generation() uint64 {
	if g, ok := r.avail.(Generational); ok {
		return g.Generation()
	}
	return 0
}

// serverList is the list a statement may go to: the configured servers in
// mysql mode; in OceanBase mode the tenant's servers, or, for a tenant the
// cluster does not list, every server (it answers the login with the
// cluster's own error, which the client then gets).
func (r *Router) serverList(ctx context.Context, req *Request) ([]string, error) {
	if req.Cluster == nil {
		return req.Servers, nil
	}
	t := req.Cluster.Table()
	if t == nil {
		var err error
		if t, err = req.Cluster.Ready(ctx); err != nil {
			return nil, err
		}
	}
	if _, known := t.Tenant(req.Tenant); known {
		ts, err := req.Cluster.TenantServers(ctx, req.Tenant)
		if err != nil {
			return nil, err
		}
		return ts.Addrs, nil
	}
	if len(t.allAddrs) == 0 {
		return nil, fmt.Errorf("cluster %s lists no servers", req.Cluster.Name())
	}
	return t.allAddrs, nil
}

// pass is the group addr is ordered in: 0 available, 1 unavailable, 2
// already tried.
func (r *Router) pass(req *Request, addr string) int { return r.passOf(req.Cluster, req.Tried, addr) }

func (r *Router) passOf(c *Cluster, tried []string, addr string) int {
	switch {
	case slices.Contains(tried, addr):
		return 2
	case r.available(c, addr):
		return 0
	}
	return 1
}

func (r *Router) available(c *Cluster, addr string) bool {
	return r.avail == nil || r.avail.Available(c.Name(), addr)
}
