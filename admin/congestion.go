package admin

import (
	"time"

	"obgate/mysqlproto"
)

// congestionColumns are SHOW PROXYCONGESTION's columns, in ODP's order
// (odp-behaviour.md §3.1); true marks a bigint column.
var congestionColumns = []column{
	{"cluster_name", false}, {"zone_name", false}, {"region_name", false}, {"zone_state", false},
	{"server_ip", false}, {"cr_version", true}, {"server_state", false},
	{"alive_congested", true}, {"last_alive_congested", false},
	{"dead_congested", true}, {"last_dead_congested", false},
	{"stat_alive_failures", true}, {"stat_conn_failures", true},
	{"conn_last_fail_time", false}, {"conn_failure_events", true},
	{"alive_last_fail_time", false}, {"alive_failure_events", true},
	{"ref_count", true}, {"detect_congested", true}, {"last_detect_congested", false},
}

// showCongestion answers SHOW PROXYCONGESTION [ALL] ['cluster']: the
// servers on a blocklist (every server with ALL), of one cluster when
// named. In mysql routing mode the cluster name is empty. A server whose
// connect failed and that no probe has reached since shows it in
// conn_failure_events and conn_last_fail_time and is counted congested;
// ref_count is the number of statements in flight to it.
func (a *Admin) showCongestion(c command) *mysqlproto.ResultSet {
	rs := newTypedResultSet(congestionColumns)
	m := a.srv.Health()
	if m == nil {
		return rs
	}
	for _, v := range m.Views(c.cluster, c.all) {
		rs.Rows = append(rs.Rows, []any{v.Cluster, v.Zone, v.Region, v.ZoneState,
			v.Addr, int64(v.ClusterVersion), v.ServerState,
			flag(v.AliveCongested), stamp(v.LastAliveCongested),
			flag(v.DeadCongested), stamp(v.LastDeadCongested),
			int64(v.StatAliveFailures), int64(v.StatConnFailures),
			stamp(v.ConnLastFailTime), int64(v.ConnFailureEvents),
			stamp(v.AliveLastFailTime), int64(v.AliveFailureEvents),
			v.InFlight, flag(v.DetectCongested), stamp(v.LastDetectCongested)})
	}
	return rs
}

func flag(b bool) int64 {
	if b {
		return 1
	}
	return 0
}

// stamp formats a time as ODP does: local time, or "0" when unset.
func stamp(t time.Time) string {
	if t.IsZero() {
		return "0"
	}
	return t.Local().Format(time.DateTime)
}
