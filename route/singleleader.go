package route

import (
	"fmt"
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
	var ids []string
	for _, ten := range t.Tenants {
		if strings.EqualFold(ten.Status, "NORMAL") && ten.ID > 0 {
			ids = append(ids, strconv.FormatInt(ten.ID, 10))
		}
	}
	if len(ids) == 0 {
		return out
	}
	res, err := cl.Query(fmt.Sprintf(sqlSingleLeaderFmt, strings.Join(ids, ",")))
	if err != nil {
		c.log.Debug("single leader query failed", "err", err)
		return out
	}
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
		out[res.String(i, "tenant_name")] = joinHostPort(addr[:colon], n)
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
