package route

import (
	"strconv"

	"obgate/internal/sqltext"
)

// This file builds the statements obgate runs as proxyro@sys that carry a
// client's text: tenant, database, table, package and routine names. A
// client names these in its login and its statements, and proxyro@sys
// reads every tenant's metadata, so a name that broke out of its literal
// would run the client's SQL with the sys tenant's privileges (or, with a
// sleep, stall the cluster's location fetcher). Hence:
//
//   - every name is checked first (sqltext.CheckName): a name no OceanBase
//     object can have never reaches a statement, and the builder fails;
//   - a name goes in only as sqltext's string literal, which means exactly
//     the name under either sql_mode and in any connection character set;
//   - ids go in as integers formatted by strconv;
//   - everything else is constant text: metaSQL.text takes a sqlText,
//     which an untyped string constant converts to and a string variable
//     does not, so no other text can slip in without a conversion a
//     reviewer sees.
//
// For an ordinary name each statement is ODP's, byte for byte
// (odp-behaviour.md §1.1, §5.2): sqltext quotes plain text as ODP does.

// sqlText is constant text of a statement.
type sqlText string

// metaSQL is a statement under construction.
type metaSQL struct{ b []byte }

func (q *metaSQL) text(s sqlText) *metaSQL {
	q.b = append(q.b, s...)
	return q
}

// str appends a string literal meaning s.
func (q *metaSQL) str(s string) *metaSQL {
	q.b = sqltext.AppendString(q.b, s)
	return q
}

// int appends an integer.
func (q *metaSQL) int(v int64) *metaSQL {
	q.b = strconv.AppendInt(q.b, v, 10)
	return q
}

// ints appends integers separated by sep.
func (q *metaSQL) ints(vs []int64, sep sqlText) *metaSQL {
	for i, v := range vs {
		if i > 0 {
			q.text(sep)
		}
		q.int(v)
	}
	return q
}

func (q *metaSQL) String() string { return string(q.b) }

// checkNames checks a tenant, database and table name, in that order.
func checkNames(tenant, db, table string) error {
	if err := sqltext.CheckName(sqltext.Tenant, tenant); err != nil {
		return err
	}
	if err := sqltext.CheckName(sqltext.Database, db); err != nil {
		return err
	}
	return sqltext.CheckName(sqltext.Table, table)
}

// schemaSelect is the head of the __all_virtual_proxy_schema queries, up
// to the tenant name's literal.
const schemaSelect = "SELECT /*+READ_CONSISTENCY(WEAK)*/ A.*, B.svr_port as svr_port FROM oceanbase.__all_virtual_proxy_schema A inner join oceanbase.DBA_OB_SERVERS B ON A.svr_ip = B.svr_ip and A.sql_port = B.sql_port WHERE A.tenant_name = "

// schemaWhere appends the tenant, database and table conditions of a
// __all_virtual_proxy_schema query.
func (q *metaSQL) schemaWhere(tenant, db, table string) *metaSQL {
	return q.text(schemaSelect).str(tenant).
		text(" AND A.database_name = ").str(db).
		text(" AND A.table_name = ").str(table)
}

// sqlTableEntry is ODP's table entry query: the first tablet's replicas
// of tenant's db.table.
func sqlTableEntry(tenant, db, table string) (string, error) {
	if err := checkNames(tenant, db, table); err != nil {
		return "", err
	}
	var q metaSQL
	q.schemaWhere(tenant, db, table).
		text(" AND A.tablet_id = 0 ORDER BY A.role ASC LIMIT 9223372036854775807")
	return q.String(), nil
}

// sqlTablets is ODP's partition entry query: the replicas of the tablets
// ids (at most tabletBatch) of tenant's db.table.
func sqlTablets(tenant, db, table string, ids []int64) (string, error) {
	if err := checkNames(tenant, db, table); err != nil {
		return "", err
	}
	var q metaSQL
	q.schemaWhere(tenant, db, table).
		text(" AND A.tablet_id IN (").ints(ids, ", ").
		text(") ORDER BY A.tablet_id, A.role ASC LIMIT 9223372036854775807")
	return q.String(), nil
}

// sqlTenantServers is ODP's tenant server list query: the replicas of the
// tenant's oceanbase.__all_dummy, one per server of the tenant.
func sqlTenantServers(tenant string) (string, error) {
	if err := sqltext.CheckName(sqltext.Tenant, tenant); err != nil {
		return "", err
	}
	var q metaSQL
	q.schemaWhere(tenant, dummyDatabase, dummyTable).
		text(" AND A.sql_port > 0 ORDER BY A.tablet_id ASC, role ASC LIMIT 9223372036854775807")
	return q.String(), nil
}

// sqlPartInfo is ODP's partition info query of table tableID of tenant.
func sqlPartInfo(tableID int64, tenant string) (string, error) {
	if err := sqltext.CheckName(sqltext.Tenant, tenant); err != nil {
		return "", err
	}
	var q metaSQL
	q.text("SELECT /*+READ_CONSISTENCY(WEAK)*/ * FROM oceanbase.__all_virtual_proxy_partition_info WHERE table_id = ").int(tableID).
		text(" and tenant_name = ").str(tenant).
		text(" order by part_key_idx LIMIT 128;")
	return q.String(), nil
}

// partitionsHead is the head of the first and sub-partition queries, up to
// the table id: each partition's tablet and its log stream.
const partitionsHead = "SELECT /*+READ_CONSISTENCY(WEAK)*/  A.tablet_id as tablet_id, IFNULL((SELECT B.ls_id FROM oceanbase.__all_virtual_tablet_to_ls B WHERE A.tablet_id = B.tablet_id AND B.table_id = "

// sqlPartitions is a partition query of table tableID of tenant:
// partitionsHead, then the columns and view between the log stream
// subquery and the final WHERE.
func sqlPartitions(tableID int64, tenant string, columns sqlText) (string, error) {
	if err := sqltext.CheckName(sqltext.Tenant, tenant); err != nil {
		return "", err
	}
	var q metaSQL
	q.text(partitionsHead).int(tableID).
		text(" AND B.tenant_id = (SELECT tenant_id FROM oceanbase.DBA_OB_TENANTS WHERE tenant_name = ").str(tenant).
		text(" LIMIT 1) LIMIT 1), -1) as ls_id, ").text(columns).
		text(" A WHERE A.table_id = ").int(tableID).
		text(" AND A.tenant_name = ").str(tenant).
		text("LIMIT 9223372036854775807;")
	return q.String(), nil
}

// sqlFirstParts is ODP's first-level partition query of table tableID of
// tenant.
func sqlFirstParts(tableID int64, tenant string) (string, error) {
	return sqlPartitions(tableID, tenant, "A.part_id as part_id, A.part_name as part_name, A.high_bound_val_bin as high_bound_val_bin, A.sub_part_num AS sub_part_num FROM oceanbase.__all_virtual_proxy_partition")
}

// sqlSubParts is ODP's sub-partition query of table tableID of tenant.
func sqlSubParts(tableID int64, tenant string) (string, error) {
	return sqlPartitions(tableID, tenant, "A.part_id as part_id, A.sub_part_id as sub_part_id, A.part_name as part_name, A.high_bound_val_bin as high_bound_val_bin FROM oceanbase.__all_virtual_proxy_sub_partition")
}

// sqlRoutine is ODP's routine query: the route SQL of tenant's
// db.pkg.name (pkg empty for a routine outside any package).
func sqlRoutine(tenant, db, pkg, name string) (string, error) {
	for _, c := range []struct {
		k sqltext.Kind
		s string
	}{{sqltext.Tenant, tenant}, {sqltext.Database, db}, {sqltext.Package, pkg}, {sqltext.Routine, name}} {
		if err := sqltext.CheckName(c.k, c.s); err != nil {
			return "", err
		}
	}
	var q metaSQL
	q.text("SELECT /*+READ_CONSISTENCY(WEAK)*/ * FROM oceanbase.__all_virtual_proxy_routine WHERE tenant_name = ").str(tenant).
		text(" and database_name = ").str(db).
		text(" and package_name = ").str(pkg).
		text(" and routine_name = ").str(name)
	return q.String(), nil
}

// sqlSingleLeader is ODP's single-leader query for the tenants ids: per
// tenant, the servers leading its user log streams, and whether there is
// just one. Ids are numbers, so there is nothing to check.
func sqlSingleLeader(ids []int64) string {
	var q metaSQL
	q.text("SELECT /*+READ_CONSISTENCY(WEAK)*/ t.tenant_name as tenant_name, leader_addr, count(*) = 1 AS is_single_leader FROM oceanbase.DBA_OB_TENANTS t RIGHT JOIN ( SELECT DISTINCT tenant_id, CONCAT(svr_ip, ':', sql_port) AS leader_addr FROM oceanbase.CDB_OB_LS_LOCATIONS WHERE ls_id != 1 AND role='leader' AND tenant_id IN (").
		ints(ids, ",").
		text(")) s ON t.tenant_id = s.tenant_id GROUP BY tenant_name")
	return q.String()
}
