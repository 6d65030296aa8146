package admin

import (
	"strings"
	"time"

	"obgate/mysqlproto"
	"obgate/route"
)

// routeColumns are ODP's SHOW PROXYROUTE columns.
var routeColumns = []string{"cluster_name", "tenant_name", "database_name", "table_name", "state",
	"partition_num", "replica_num", "table_id", "cluster_version", "schema_version",
	"from_rslist", "create_time", "last_valid_time", "last_access_time", "last_update_time",
	"expire_time", "relative_expire_time", "server addr"}

// partitionColumns are ODP's SHOW PROXYROUTE PARTITION columns, with the
// cluster, tenant and table named too (obgate), so that the rows say what
// they are about.
var partitionColumns = []string{"table_id", "partition_id", "state", "cluster_version", "schema_version",
	"create_time", "last_valid_time", "last_access_time", "last_update_time", "expire_time",
	"relative_expire_time", "server addr", "cluster_name", "tenant_name", "database_name", "table_name"}

// showRoute answers SHOW PROXYROUTE [LIKE 'cluster tenant db table'] with
// ODP's columns: each tenant's server list (its __all_dummy entry) and
// every table location in the cache. The server list of a table is its
// first tablet's replicas, the leader marked, as ODP prints them.
func (a *Admin) showRoute(c command) *mysqlproto.ResultSet {
	rs := newResultSet(routeColumns)
	match := likeMatcher(c)
	for _, cl := range a.allClusters() {
		version := clusterVersion(cl)
		for _, ts := range cl.TenantLists() {
			if !match(cl.Name(), ts.Tenant, "oceanbase", "__all_dummy") {
				continue
			}
			stamp := ts.Fetched.Format(time.DateTime)
			rs.Rows = append(rs.Rows, []any{cl.Name(), ts.Tenant, "oceanbase", "__all_dummy", "AVAIL",
				int64(1), int64(len(ts.Addrs)), int64(1), version, int64(0), "false",
				stamp, stamp, stamp, stamp, "0", "0", strings.Join(ts.Addrs, ";")})
		}
		for _, e := range cl.TableEntries() {
			if !match(cl.Name(), e.Tenant, e.Database, e.Table) {
				continue
			}
			rs.Rows = append(rs.Rows, []any{cl.Name(), e.Tenant, e.Database, e.Table, e.State().String(),
				int64(e.PartNum), int64(e.ReplicaNum), e.TableID, version, e.SchemaVersion, "false",
				stamp(e.Created), stamp(e.Updated), stamp(e.LastAccess()), stamp(e.Updated), "0", "0",
				replicaList(e.First)})
		}
	}
	return rs
}

// showRoutePartition answers SHOW PROXYROUTE PARTITION [LIKE …]: one row
// per tablet of every cached partitioned table.
func (a *Admin) showRoutePartition(c command) *mysqlproto.ResultSet {
	rs := newResultSet(partitionColumns)
	match := likeMatcher(c)
	for _, cl := range a.allClusters() {
		version := clusterVersion(cl)
		for _, e := range cl.TableEntries() {
			if e.Part == nil || !match(cl.Name(), e.Tenant, e.Database, e.Table) {
				continue
			}
			for _, l := range e.Tablets() {
				rs.Rows = append(rs.Rows, []any{e.TableID, l.TabletID, e.State().String(), version, e.SchemaVersion,
					stamp(e.Created), stamp(e.Updated), stamp(e.LastAccess()), stamp(e.Updated), "0", "0",
					replicaList(l), cl.Name(), e.Tenant, e.Database, e.Table})
			}
		}
	}
	return rs
}

// allClusters returns every cluster obgate routes to; none when it has no
// cluster set.
func (a *Admin) allClusters() []*route.Cluster {
	cs := a.srv.Clusters()
	if cs == nil {
		return nil
	}
	return cs.All()
}

func newResultSet(cols []string) *mysqlproto.ResultSet {
	rs := &mysqlproto.ResultSet{}
	for _, name := range cols {
		rs.Columns = append(rs.Columns, mysqlproto.VarcharColumn(name))
	}
	return rs
}

// column is a column of an admin view: its name, and whether it is a
// BIGINT (else a VARCHAR).
type column struct {
	name   string
	bigint bool
}

// newTypedResultSet returns an empty result set with the columns cols.
func newTypedResultSet(cols []column) *mysqlproto.ResultSet {
	rs := &mysqlproto.ResultSet{}
	for _, col := range cols {
		if col.bigint {
			rs.Columns = append(rs.Columns, mysqlproto.BigintColumn(col.name))
		} else {
			rs.Columns = append(rs.Columns, mysqlproto.VarcharColumn(col.name))
		}
	}
	return rs
}

// likeMatcher returns a test of cluster, tenant, database and table
// against the space-separated LIKE patterns of c (missing ones match all).
func likeMatcher(c command) func(names ...string) bool {
	var pats []string
	if c.hasLike {
		pats = strings.Fields(c.like)
	}
	return func(names ...string) bool {
		for i, n := range names {
			if i < len(pats) && !matchLike(pats[i], n) {
				return false
			}
		}
		return true
	}
}

// replicaList prints a tablet's replicas as ODP does: addr followed by its
// role, separated by ';'.
func replicaList(l *route.TabletLocation) string {
	if l == nil {
		return ""
	}
	parts := make([]string, 0, len(l.Replicas))
	for _, r := range l.Replicas {
		role := "FOLLOWER"
		switch {
		case r.Leader:
			role = "LEADER"
		case r.ReadOnly:
			role = "READONLY"
		}
		parts = append(parts, r.Addr+" "+role)
	}
	return strings.Join(parts, ";")
}

// clusterVersion is the version of the servers cl's routing table was
// read from, or "" before it was read.
func clusterVersion(cl *route.Cluster) string {
	if t := cl.Table(); t != nil {
		return t.Version
	}
	return ""
}
