package route

import (
	"fmt"
	"strings"
)

// The SQL texts obgate runs as proxyro@sys, word for word those of ODP for
// OceanBase 4.x (odp-behaviour.md §1.1, §5.2), so that a cluster sees the
// same statements from obgate as from ODP.
const (
	sqlCheckVersion = "SELECT ob_version() AS cluster_version"

	sqlInitServers = "SELECT /*READ_CONSISTENCY(WEAK)*/ parameters.value as cluster, zs.zone AS zone, zs.status AS zone_status, ss.status AS server_status, zs.region AS region, zs.idc AS spare4, zs.type AS spare5, ss.svr_ip AS svr_ip, ss.sql_port AS svr_port, ss.svr_port AS rpc_port, ss.start_service_time is not null AS start_service_time, ss.stop_time is not null as stop_time FROM oceanbase.DBA_OB_SERVERS ss left join oceanbase.DBA_OB_ZONES zs ON zs.zone = ss.zone join V$OB_PARAMETERS parameters WHERE ss.svr_port > 0 and parameters.name = 'cluster' ORDER BY ss.zone LIMIT 9223372036854775807;"

	sqlZones = "SELECT /*+READ_CONSISTENCY(WEAK)*/ zone, status, 0 AS is_merging, region, idc AS spare4, type AS spare5 FROM oceanbase.DBA_OB_ZONES LIMIT 9223372036854775807"

	sqlServers = "SELECT /*+READ_CONSISTENCY(WEAK)*/ svr_ip, svr_port AS rpc_port, sql_port AS svr_port, zone, status,start_service_time is not null AS start_service_time, stop_time is not null as stop_time FROM oceanbase.DBA_OB_SERVERS WHERE svr_port > 0 ORDER BY zone LIMIT 9223372036854775807"

	sqlSysVariables = "SELECT /*+READ_CONSISTENCY(WEAK)*/ name, data_type, value, modified_time, flags FROM __all_virtual_proxy_sys_variable LIMIT 9223372036854775807"

	sqlTenants = "SELECT /*+READ_CONSISTENCY(WEAK)*/ tenant_name, tenant_id, locality, previous_locality, primary_zone, status FROM oceanbase.DBA_OB_TENANTS where previous_locality is null and tenant_id != 1"

	// sqlSingleLeaderFmt is ODP's 4.x single-leader query: per tenant (of
	// the ids given), the servers leading its user log streams, and
	// whether there is just one.
	sqlSingleLeaderFmt = "SELECT /*+READ_CONSISTENCY(WEAK)*/ t.tenant_name as tenant_name, leader_addr, count(*) = 1 AS is_single_leader FROM oceanbase.DBA_OB_TENANTS t RIGHT JOIN ( SELECT DISTINCT tenant_id, CONCAT(svr_ip, ':', sql_port) AS leader_addr FROM oceanbase.CDB_OB_LS_LOCATIONS WHERE ls_id != 1 AND role='leader' AND tenant_id IN (%s)) s ON t.tenant_id = s.tenant_id GROUP BY tenant_name"

	sqlTenantServersFmt = "SELECT /*+READ_CONSISTENCY(WEAK)*/ A.*, B.svr_port as svr_port FROM oceanbase.__all_virtual_proxy_schema A inner join oceanbase.DBA_OB_SERVERS B ON A.svr_ip = B.svr_ip and A.sql_port = B.sql_port WHERE A.tenant_name = '%s' AND A.database_name = '%s' AND A.table_name = '%s' AND A.sql_port > 0 ORDER BY A.tablet_id ASC, role ASC LIMIT 9223372036854775807"
)

// dummyDatabase and dummyTable name the entry whose locations are a
// tenant's server list.
const (
	dummyDatabase = "oceanbase"
	dummyTable    = "__all_dummy"
)

// sqlTenantServers returns the tenant server list query for tenant.
func sqlTenantServers(tenant string) string {
	return fmt.Sprintf(sqlTenantServersFmt, quoteSQL(tenant), dummyDatabase, dummyTable)
}

// quoteSQL doubles single quotes, as ODP does for tenant names.
func quoteSQL(s string) string { return strings.ReplaceAll(s, "'", "''") }
