package route

import (
	"strconv"
	"strings"

	"obgate/mysqlproto"
)

// loadSingleLeaders reads, for the NORMAL tenants of t, which have every
// user log stream's leader on one server (ODP's single leader query, run
// with each server state refresh). A failed query means no tenant has a
// single leader. Called by refresh with loadMu held.
func (c *Cluster) loadSingleLeaders(cl *mysqlproto.Client, t *Table) map[string]string {
	out := map[string]string{}
	var ids []int64
	for _, ten := range t.Tenants {
		if strings.EqualFold(ten.Status, "NORMAL") && ten.ID > 0 {
			ids = append(ids, ten.ID)
		}
	}
	if len(ids) == 0 {
		return out
	}
	res, err := cl.Query(sqlSingleLeader(ids))
	if err != nil {
		c.log.Debug("single leader query failed", "err", err)
		return out
	}
	return singleLeadersOf(res)
}

// singleLeadersOf decodes the single-leader query's rows: tenant name →
// the address of the one server leading all its user log streams.
// Tenants with several leaders, and rows whose address does not read as
// ip:port (serverAddr), are left out.
func singleLeadersOf(res *mysqlproto.Result) map[string]string {
	out := map[string]string{}
	for i := range res.Rows {
		if res.String(i, "is_single_leader") != "1" {
			continue
		}
		// ip:port as CONCAT wrote it; an IPv6 ip has colons of its own.
		addr := res.String(i, "leader_addr")
		colon := strings.LastIndexByte(addr, ':')
		if colon <= 0 {
			continue
		}
		n, err := strconv.Atoi(addr[colon+1:])
		if err != nil {
			continue
		}
		if a, ok := serverAddr(addr[:colon], n); ok {
			out[res.String(i, "tenant_name")] = a
		}
	}
	return out
}

// SingleLeader returns the server that leads every user log stream of
// tenant, when one does (enable_single_leader_node_routing). Any
// goroutine; one atomic load and a map lookup.
func (c *Cluster) SingleLeader(tenant string) (string, bool) {
	m := c.singleLeaders.Load()
	if m == nil {
		return "", false
	}
	a, ok := (*m)[tenant]
	return a, ok
}

// DropSingleLeader forgets tenant's single leader until the next server
// state refresh: a strong statement sent there missed its partition (ODP
// does the same on that feedback). Any goroutine.
func (c *Cluster) DropSingleLeader(tenant string) {
	for {
		old := c.singleLeaders.Load()
		if old == nil {
			return
		}
		if _, ok := (*old)[tenant]; !ok {
			return
		}
		m := make(map[string]string, len(*old))
		for k, v := range *old {
			if k != tenant {
				m[k] = v
			}
		}
		if c.singleLeaders.CompareAndSwap(old, &m) {
			return
		}
	}
}
