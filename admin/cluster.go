package admin

import (
	"obgate/mysqlproto"
	"obgate/route"
)

// showCluster answers SHOW PROXYCLUSTER [LIKE 'cluster'] with ODP's
// columns (ob_show_cluster_handler.cpp): one row per configured root
// server of each cluster. obgate takes root servers from rootservice_list
// and cluster_rootservice_list, not from a config server: rs_url is
// empty; it does not learn the root service's leader or replica types:
// role and replica_type are empty.
func (a *Admin) showCluster(c command) *mysqlproto.ResultSet {
	rs := &mysqlproto.ResultSet{Columns: []mysqlproto.Column{
		mysqlproto.VarcharColumn("cluster_name"), mysqlproto.BigintColumn("cluster_id"),
		mysqlproto.VarcharColumn("rs_url"), mysqlproto.VarcharColumn("root_addr"),
		mysqlproto.VarcharColumn("role"), mysqlproto.VarcharColumn("replica_type"),
	}}
	for _, cl := range a.clusters(c) {
		for _, addr := range cl.RSList() {
			rs.Rows = append(rs.Rows, []any{cl.Name(), clusterID(cl), "", addr, "", ""})
		}
	}
	return rs
}

// showClusterIDC answers SHOW PROXYCLUSTER IDC [LIKE 'cluster']: each
// cluster's IDCs and their regions, from its zones (__all_zone, read with
// the routing table), since obgate has no config server's IDC list:
// idc_url is empty. A cluster not loaded yet, or whose zones name no IDC,
// has no rows.
func (a *Admin) showClusterIDC(c command) *mysqlproto.ResultSet {
	rs := &mysqlproto.ResultSet{Columns: []mysqlproto.Column{
		mysqlproto.VarcharColumn("cluster_name"), mysqlproto.BigintColumn("cluster_id"),
		mysqlproto.VarcharColumn("idc_url"), mysqlproto.VarcharColumn("idc"), mysqlproto.VarcharColumn("region"),
	}}
	for _, cl := range a.clusters(c) {
		t := cl.Table()
		if t == nil {
			continue
		}
		for _, ir := range t.IDCs() {
			rs.Rows = append(rs.Rows, []any{cl.Name(), clusterID(cl), "", ir.IDC, ir.Region})
		}
	}
	return rs
}

// showResource answers SHOW PROXYRESOURCE [LIKE 'cluster'] with ODP's
// columns (ob_show_resource_handler.cpp). state is CR_AVAIL once the
// cluster's metadata loaded, CR_INITING before; version is the routing
// table's generation (the cr_version SHOW PROXYCONGESTION shows);
// ref_count the client sessions using the cluster now; the rs-list and
// IDC-list fetch times are the last routing-table refresh, which reads
// servers and zones together. obgate does not track a cluster's last
// access nor delete resources, and runs no separate fetch tasks:
// last_access_time_ns, deleting_completed_thread_num and the task counts
// are 0, and last_access_time is "0".
func (a *Admin) showResource(c command) *mysqlproto.ResultSet {
	rs := newTypedResultSet([]column{
		{"cluster_name", false}, {"cluster_id", true}, {"state", false}, {"version", true}, {"ref_count", true},
		{"last_access_time_ns", true}, {"last_access_time", false}, {"deleting_completed_thread_num", true},
		{"fetch_rs_list_task_count", true}, {"last_fetch_rs_list_time_ns", true}, {"last_fetch_rs_list_time", false},
		{"fetch_idc_list_task_count", true}, {"last_fetch_idc_list_time_ns", true}, {"last_fetch_idc_list_time", false},
	})
	clusters := a.clusters(c)
	if len(clusters) == 0 {
		return rs
	}
	refs := map[string]int64{}
	for _, s := range a.srv.Sessions() {
		if !s.Admin {
			refs[s.Identity.Cluster]++
		}
	}
	for _, cl := range clusters {
		state, version, fetchedNS, fetched := "CR_INITING", int64(0), int64(0), "0"
		if t := cl.Table(); t != nil {
			state, version = "CR_AVAIL", int64(t.Generation)
			if !t.Refreshed.IsZero() {
				fetchedNS, fetched = t.Refreshed.UnixNano(), stamp(t.Refreshed)
			}
		}
		rs.Rows = append(rs.Rows, []any{cl.Name(), clusterID(cl), state, version, refs[cl.Name()],
			int64(0), "0", int64(0), int64(0), fetchedNS, fetched, int64(0), fetchedNS, fetched})
	}
	return rs
}

// clusters returns the clusters whose name matches c's LIKE pattern.
func (a *Admin) clusters(c command) []*route.Cluster {
	var out []*route.Cluster
	for _, cl := range a.allClusters() {
		if !c.hasLike || matchLike(c.like, cl.Name()) {
			out = append(out, cl)
		}
	}
	return out
}

// clusterID is the cluster's id as obgate knows it: -1, since obgate
// reads no cluster id from the cluster (ODP shows the master cluster's).
func clusterID(cl *route.Cluster) int64 { return cl.ID() }
