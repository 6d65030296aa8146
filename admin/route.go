package admin

import (
	"strings"
	"time"

	"obgate/mysqlproto"
)

// showRoute answers SHOW PROXYROUTE [LIKE 'cluster tenant db table'] with
// ODP's columns. obgate routes by tenant server lists for now, so the rows
// are each tenant's __all_dummy entry with its servers.
func (a *Admin) showRoute(c command) *mysqlproto.ResultSet {
	cols := []string{"cluster_name", "tenant_name", "database_name", "table_name", "state",
		"partition_num", "replica_num", "table_id", "cluster_version", "schema_version",
		"from_rslist", "create_time", "last_valid_time", "last_access_time", "last_update_time",
		"expire_time", "relative_expire_time", "server addr"}
	rs := &mysqlproto.ResultSet{}
	for _, name := range cols {
		rs.Columns = append(rs.Columns, mysqlproto.VarcharColumn(name))
	}
	var pats []string
	if c.hasLike {
		pats = strings.Fields(c.like)
	}
	match := func(i int, v string) bool { return i >= len(pats) || matchLike(pats[i], v) }
	clusters := a.srv.Clusters()
	if clusters == nil {
		return rs
	}
	for _, cl := range clusters.All() {
		version := ""
		if t := cl.Table(); t != nil {
			version = t.Version
		}
		for _, ts := range cl.TenantLists() {
			if !match(0, cl.Name()) || !match(1, ts.Tenant) || !match(2, "oceanbase") || !match(3, "__all_dummy") {
				continue
			}
			stamp := ts.Fetched.Format(time.DateTime)
			rs.Rows = append(rs.Rows, []any{cl.Name(), ts.Tenant, "oceanbase", "__all_dummy", "AVAIL",
				int64(1), int64(len(ts.Addrs)), int64(1), version, int64(0), "false",
				stamp, stamp, stamp, stamp, "0", "0", strings.Join(ts.Addrs, ";")})
		}
	}
	return rs
}
