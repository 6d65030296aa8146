package admin

import (
	"obgate/mysqlproto"
	"obgate/reactor"
)

// statRow is one SHOW PROXYSTAT row: ODP's stat name and persist type,
// and where obgate's number comes from.
type statRow struct {
	name       string
	persistent bool
	value      func(reactor.StatCounters) int64
}

// statRows are the ODP statistics obgate counts, in ODP's registration
// order (src/obproxy/stat/ob_mysql_stats.cpp). ODP's other statistics
// have no counterpart in obgate and are left out rather than shown as 0.
var statRows = []statRow{
	{"total_transaction_count", true, func(s reactor.StatCounters) int64 { return int64(s.TotalTransactions) }},
	{"total_query_count", true, func(s reactor.StatCounters) int64 { return int64(s.TotalQueries) }},
	{"current_client_connections", true, func(s reactor.StatCounters) int64 { return s.CurrentClients }},
	{"current_active_client_connections", false, func(s reactor.StatCounters) int64 { return s.ActiveClients }},
	{"current_client_transactions", true, func(s reactor.StatCounters) int64 { return s.ClientTransactions }},
	{"total_client_connections", false, func(s reactor.StatCounters) int64 { return int64(s.TotalClients) }},
	{"current_server_connections", true, func(s reactor.StatCounters) int64 { return s.CurrentServers }},
	{"broken_server_connections", true, func(s reactor.StatCounters) int64 { return int64(s.BrokenServers) }},
	{"client_request_total_size", false, func(s reactor.StatCounters) int64 { return int64(s.ClientRequestBytes) }},
	{"client_response_total_size", false, func(s reactor.StatCounters) int64 { return int64(s.ClientResponseBytes) }},
	{"server_response_total_size", false, func(s reactor.StatCounters) int64 { return int64(s.ServerResponseBytes) }},
}

// showStat answers SHOW PROXYSTAT [REFRESH] [LIKE 'pattern'] with ODP's
// columns stat_name, value, persist_type. obgate's counters are always
// current, so REFRESH (ODP: sync the per-thread counters first) changes
// nothing.
func (a *Admin) showStat(c command) *mysqlproto.ResultSet {
	rs := &mysqlproto.ResultSet{Columns: []mysqlproto.Column{
		mysqlproto.VarcharColumn("stat_name"), mysqlproto.BigintColumn("value"), mysqlproto.VarcharColumn("persist_type"),
	}}
	st := a.srv.StatCounters()
	for _, r := range statRows {
		if c.hasLike && !matchLike(c.like, r.name) {
			continue
		}
		persist := "NULL"
		if r.persistent {
			persist = "PERSISTENT"
		}
		rs.Rows = append(rs.Rows, []any{r.name, r.value(st), persist})
	}
	return rs
}
