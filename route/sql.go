package route

// The SQL texts obgate runs as proxyro@sys, word for word those of ODP for
// OceanBase 4.x (odp-behaviour.md §1.1, §5.2), so that a cluster sees the
// same statements from obgate as from ODP. These carry no client text; the
// statements that do are built in metasql.go.
const (
	sqlCheckVersion = "SELECT ob_version() AS cluster_version"

	sqlInitServers = "SELECT /*READ_CONSISTENCY(WEAK)*/ parameters.value as cluster, zs.zone AS zone, zs.status AS zone_status, ss.status AS server_status, zs.region AS region, zs.idc AS spare4, zs.type AS spare5, ss.svr_ip AS svr_ip, ss.sql_port AS svr_port, ss.svr_port AS rpc_port, ss.start_service_time is not null AS start_service_time, ss.stop_time is not null as stop_time FROM oceanbase.DBA_OB_SERVERS ss left join oceanbase.DBA_OB_ZONES zs ON zs.zone = ss.zone join V$OB_PARAMETERS parameters WHERE ss.svr_port > 0 and parameters.name = 'cluster' ORDER BY ss.zone LIMIT 9223372036854775807;"

	sqlZones = "SELECT /*+READ_CONSISTENCY(WEAK)*/ zone, status, 0 AS is_merging, region, idc AS spare4, type AS spare5 FROM oceanbase.DBA_OB_ZONES LIMIT 9223372036854775807"

	sqlServers = "SELECT /*+READ_CONSISTENCY(WEAK)*/ svr_ip, svr_port AS rpc_port, sql_port AS svr_port, zone, status,start_service_time is not null AS start_service_time, stop_time is not null as stop_time FROM oceanbase.DBA_OB_SERVERS WHERE svr_port > 0 ORDER BY zone LIMIT 9223372036854775807"

	sqlSysVariables = "SELECT /*+READ_CONSISTENCY(WEAK)*/ name, data_type, value, modified_time, flags FROM __all_virtual_proxy_sys_variable LIMIT 9223372036854775807"

	sqlTenants = "SELECT /*+READ_CONSISTENCY(WEAK)*/ tenant_name, tenant_id, locality, previous_locality, primary_zone, status FROM oceanbase.DBA_OB_TENANTS where previous_locality is null and tenant_id != 1"
)

// dummyDatabase and dummyTable name the entry whose locations are a
// tenant's server list.
const (
	dummyDatabase = "oceanbase"
	dummyTable    = "__all_dummy"
)
