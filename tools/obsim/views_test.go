package obsim

import (
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	"obgate/mysqlproto"
)

// ODP's SQL texts (odp-behaviour.md §1.1 and §5.2, with the format verbs
// filled in as ODP fills them).
const (
	int64Max        = "9223372036854775807"
	zoneSQL         = "SELECT /*+READ_CONSISTENCY(WEAK)*/ zone, status, 0 AS is_merging, region, idc AS spare4, type AS spare5 FROM oceanbase.DBA_OB_ZONES LIMIT 9223372036854775807"
	serverSQL       = "SELECT /*+READ_CONSISTENCY(WEAK)*/ svr_ip, svr_port AS rpc_port, sql_port AS svr_port, zone, status,start_service_time is not null AS start_service_time, stop_time is not null as stop_time FROM oceanbase.DBA_OB_SERVERS WHERE svr_port > 0 ORDER BY zone LIMIT 9223372036854775807"
	tenantSQL       = "SELECT /*+READ_CONSISTENCY(WEAK)*/ tenant_name, tenant_id, locality, previous_locality, primary_zone, status FROM oceanbase.DBA_OB_TENANTS where previous_locality is null and tenant_id != 1"
	singleLeaderSQL = "SELECT /*+READ_CONSISTENCY(WEAK)*/ t.tenant_name as tenant_name, leader_addr, count(*) = 1 AS is_single_leader FROM oceanbase.DBA_OB_TENANTS t RIGHT JOIN ( SELECT DISTINCT tenant_id, CONCAT(svr_ip, ':', sql_port) AS leader_addr FROM oceanbase.CDB_OB_LS_LOCATIONS WHERE ls_id != 1 AND role='leader' AND tenant_id IN (%s)) s ON t.tenant_id = s.tenant_id GROUP BY tenant_name"
	initSSInfoSQL   = "SELECT /*READ_CONSISTENCY(WEAK)*/ parameters.value as cluster, zs.zone AS zone, zs.status AS zone_status, ss.status AS server_status, zs.region AS region, zs.idc AS spare4, zs.type AS spare5, ss.svr_ip AS svr_ip, ss.sql_port AS svr_port, ss.svr_port AS rpc_port, ss.start_service_time is not null AS start_service_time, ss.stop_time is not null as stop_time FROM oceanbase.DBA_OB_SERVERS ss left join oceanbase.DBA_OB_ZONES zs ON zs.zone = ss.zone join V$OB_PARAMETERS parameters WHERE ss.svr_port > 0 and parameters.name = 'cluster' ORDER BY ss.zone LIMIT 9223372036854775807;"
	versionSQL      = "SELECT ob_version() AS cluster_version"
	sysVarSQL       = "SELECT /*+READ_CONSISTENCY(WEAK)*/ name, data_type, value, modified_time, flags FROM __all_virtual_proxy_sys_variable LIMIT 9223372036854775807"
	tableEntrySQL   = "SELECT /*+READ_CONSISTENCY(WEAK)%s*/ A.*, B.svr_port as svr_port FROM oceanbase.__all_virtual_proxy_schema A inner join oceanbase.DBA_OB_SERVERS B ON A.svr_ip = B.svr_ip and A.sql_port = B.sql_port WHERE A.tenant_name = '%s' AND A.database_name = '%s' AND A.table_name = '%s' AND A.tablet_id = %d ORDER BY A.role ASC LIMIT %s"
	batchEntrySQL   = "SELECT /*+READ_CONSISTENCY(WEAK)*/ A.*, B.svr_port as svr_port FROM oceanbase.__all_virtual_proxy_schema A inner join oceanbase.DBA_OB_SERVERS B ON A.svr_ip = B.svr_ip and A.sql_port = B.sql_port WHERE A.tenant_name = '%s' AND A.database_name = '%s' AND A.table_name = '%s' AND A.tablet_id IN (%s) ORDER BY A.tablet_id, A.role ASC LIMIT %s"
	dummySQL        = "SELECT /*+READ_CONSISTENCY(WEAK)*/ A.*, B.svr_port as svr_port FROM oceanbase.__all_virtual_proxy_schema A inner join oceanbase.DBA_OB_SERVERS B ON A.svr_ip = B.svr_ip and A.sql_port = B.sql_port WHERE A.tenant_name = '%s' AND A.database_name = '%s' AND A.table_name = '%s' AND A.sql_port > 0 ORDER BY A.tablet_id ASC, role ASC LIMIT %s"
	partInfoSQL     = "SELECT /*+READ_CONSISTENCY(WEAK)*/ * FROM oceanbase.__all_virtual_proxy_partition_info WHERE table_id = %d and tenant_name = '%s' order by part_key_idx LIMIT %d;"
	firstPartSQL    = "SELECT /*+READ_CONSISTENCY(WEAK)*/  A.tablet_id as tablet_id, IFNULL((SELECT B.ls_id FROM oceanbase.__all_virtual_tablet_to_ls B WHERE A.tablet_id = B.tablet_id AND B.table_id = %d AND B.tenant_id = (SELECT tenant_id FROM oceanbase.DBA_OB_TENANTS WHERE tenant_name = '%s' LIMIT 1) LIMIT 1), %d) as ls_id, A.part_id as part_id, A.part_name as part_name, A.high_bound_val_bin as high_bound_val_bin, A.sub_part_num AS sub_part_num FROM oceanbase.__all_virtual_proxy_partition A WHERE A.table_id = %d AND A.tenant_name = '%s'LIMIT %s;"
	subPartSQL      = "SELECT /*+READ_CONSISTENCY(WEAK)*/  A.tablet_id as tablet_id, IFNULL((SELECT B.ls_id FROM oceanbase.__all_virtual_tablet_to_ls B WHERE A.tablet_id = B.tablet_id AND B.table_id = %d AND B.tenant_id = (SELECT tenant_id FROM oceanbase.DBA_OB_TENANTS WHERE tenant_name = '%s' LIMIT 1) LIMIT 1), %d) as ls_id, A.part_id as part_id, A.sub_part_id as sub_part_id, A.part_name as part_name, A.high_bound_val_bin as high_bound_val_bin FROM oceanbase.__all_virtual_proxy_sub_partition A WHERE A.table_id = %d AND A.tenant_name = '%s'LIMIT %s;"
)

// column returns the named column of a result (by name, as ODP reads it).
func columnOf(t *testing.T, res *mysqlproto.Result, row int, name string) string {
	t.Helper()
	for i, c := range res.Columns {
		if c.Name == name {
			return string(res.Rows[row][i])
		}
	}
	t.Fatalf("no column %q in %v", name, res.Columns)
	return ""
}

// proxyro logs in as ODP does for its internal SQL: proxyro@sys, db
// oceanbase.
func proxyro(t *testing.T, c *Cluster, node string) *mysqlproto.Client {
	t.Helper()
	cl, err := mysqlproto.Dial(t.Context(), c.Node(node).Addr(), mysqlproto.ClientOptions{User: "proxyro@sys", Database: "oceanbase"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cl.Close() })
	return cl
}

func mustQuery(t *testing.T, cl *mysqlproto.Client, q string) *mysqlproto.Result {
	t.Helper()
	res, err := cl.Query(q)
	if err != nil {
		t.Fatalf("%s\n: %v", q, err)
	}
	return res
}

func TestViewsAnswerODPSQL(t *testing.T) {
	c := testCluster(t)
	cl := proxyro(t, c, "zone2-1")

	if v := columnOf(t, mustQuery(t, cl, versionSQL), 0, "cluster_version"); v != "4.2.1.0" {
		t.Errorf("ob_version() = %q", v)
	}
	if res := mustQuery(t, cl, "select 'detect server alive' from dual"); len(res.Rows) != 1 {
		t.Error("detect query")
	}

	zones := mustQuery(t, cl, zoneSQL)
	if len(zones.Rows) != 3 {
		t.Fatalf("zones: %d rows", len(zones.Rows))
	}
	for i, z := range c.Topology().Zones {
		got := []string{columnOf(t, zones, i, "zone"), columnOf(t, zones, i, "status"), columnOf(t, zones, i, "is_merging"),
			columnOf(t, zones, i, "region"), columnOf(t, zones, i, "spare4"), columnOf(t, zones, i, "spare5")}
		want := []string{z.Name, "ACTIVE", "0", z.Region, z.IDC, "ReadWrite"}
		if strings.Join(got, ",") != strings.Join(want, ",") {
			t.Errorf("zone row %d = %v, want %v", i, got, want)
		}
	}

	servers := mustQuery(t, cl, serverSQL)
	if len(servers.Rows) != 3 {
		t.Fatalf("servers: %d rows", len(servers.Rows))
	}
	for i, n := range c.Nodes() {
		got := []string{columnOf(t, servers, i, "svr_ip"), columnOf(t, servers, i, "rpc_port"), columnOf(t, servers, i, "svr_port"),
			columnOf(t, servers, i, "zone"), columnOf(t, servers, i, "status"), columnOf(t, servers, i, "start_service_time"),
			columnOf(t, servers, i, "stop_time")}
		want := []string{"127.0.0.1", strconv.Itoa(n.RPCPort()), strconv.Itoa(n.Port()), n.Zone(), "ACTIVE", "1", "0"}
		if strings.Join(got, ",") != strings.Join(want, ",") {
			t.Errorf("server row %d = %v, want %v", i, got, want)
		}
	}

	ss := mustQuery(t, cl, initSSInfoSQL)
	if len(ss.Rows) != 3 || columnOf(t, ss, 0, "cluster") != "obtest" || columnOf(t, ss, 2, "region") != "shanghai" {
		t.Errorf("INIT_SS_INFO: %v", ss.Rows)
	}

	tenants := mustQuery(t, cl, tenantSQL)
	names := map[string]string{}
	for i := range tenants.Rows {
		names[columnOf(t, tenants, i, "tenant_name")] = columnOf(t, tenants, i, "tenant_id") + " " +
			columnOf(t, tenants, i, "primary_zone") + " " + columnOf(t, tenants, i, "locality")
	}
	if names["test"] != "1002 RANDOM FULL{1}@zone1, FULL{1}@zone2, FULL{1}@zone3" ||
		names["app"] != "1004 zone2 FULL{1}@zone1, FULL{1}@zone2" || names["META$1002"] == "" || names["sys"] != "" {
		t.Errorf("tenants: %v", names)
	}

	leaders := mustQuery(t, cl, fmt.Sprintf(singleLeaderSQL, "1002,1004"))
	single := map[string]string{}
	for i := range leaders.Rows {
		single[columnOf(t, leaders, i, "tenant_name")] = columnOf(t, leaders, i, "is_single_leader")
	}
	// app's only table has both partitions led from its primary zone.
	if single["test"] != "0" || single["app"] != "1" {
		t.Errorf("single leader: %v", single)
	}

	vars := mustQuery(t, cl, sysVarSQL)
	if len(vars.Rows) < 10 || columnOf(t, vars, 0, "name") == "" {
		t.Errorf("sys variables: %d rows", len(vars.Rows))
	}
}

func TestViewsLocations(t *testing.T) {
	c := testCluster(t)
	cl := proxyro(t, c, "zone1-1")
	tables := map[string]TableInfo{}
	for _, ti := range c.Tables() {
		tables[ti.Database+"."+ti.Name] = ti
	}
	orders := tables["test.orders"]

	// Table entry: the first tablet's replicas, leader first, with the
	// RPC port joined from DBA_OB_SERVERS.
	for _, hint := range []string{"", ", FORCE_REFRESH_LOCATION_CACHE"} {
		res := mustQuery(t, cl, fmt.Sprintf(tableEntrySQL, hint, "test", "test", "orders", 0, int64Max))
		if len(res.Rows) != 3 {
			t.Fatalf("table entry: %d rows", len(res.Rows))
		}
		leader := c.Node(orders.Partitions[0].Leader)
		if columnOf(t, res, 0, "role") != "1" || columnOf(t, res, 0, "sql_port") != strconv.Itoa(leader.Port()) ||
			columnOf(t, res, 0, "svr_port") != strconv.Itoa(leader.RPCPort()) || columnOf(t, res, 0, "part_num") != "4" ||
			columnOf(t, res, 0, "replica_num") != "3" || columnOf(t, res, 0, "table_id") != strconv.FormatInt(orders.TableID, 10) ||
			columnOf(t, res, 0, "table_type") != "3" || columnOf(t, res, 1, "role") != "2" || columnOf(t, res, 0, "spare4") != "" {
			t.Errorf("table entry rows: %v", res.Rows)
		}
	}

	// Partition entries, one tablet and a batch.
	p2 := orders.Partitions[2]
	res := mustQuery(t, cl, fmt.Sprintf(tableEntrySQL, "", "test", "test", "orders", p2.TabletID, int64Max))
	if len(res.Rows) != 3 || columnOf(t, res, 0, "sql_port") != strconv.Itoa(c.Node(p2.Leader).Port()) {
		t.Errorf("partition entry: %v", res.Rows)
	}
	ids := []string{strconv.FormatInt(orders.Partitions[1].TabletID, 10), strconv.FormatInt(orders.Partitions[3].TabletID, 10)}
	res = mustQuery(t, cl, fmt.Sprintf(batchEntrySQL, "test", "test", "orders", strings.Join(ids, ","), int64Max))
	if len(res.Rows) != 6 || columnOf(t, res, 0, "tablet_id") != ids[0] || columnOf(t, res, 3, "tablet_id") != ids[1] {
		t.Errorf("batch entry: %v", res.Rows)
	}

	// Tenant servers (__all_dummy): every server of the tenant, grouped.
	res = mustQuery(t, cl, fmt.Sprintf(dummySQL, "app", "oceanbase", "__all_dummy", int64Max))
	if len(res.Rows) != 2 || columnOf(t, res, 0, "role") != "1" || columnOf(t, res, 1, "role") != "2" {
		t.Errorf("app dummy entry: %v", res.Rows)
	}
	res = mustQuery(t, cl, fmt.Sprintf(dummySQL, "sys", "oceanbase", "__all_dummy", int64Max))
	if len(res.Rows) != 3 {
		t.Errorf("sys dummy entry: %v", res.Rows)
	}

	// Partition info of a HASH table.
	res = mustQuery(t, cl, fmt.Sprintf(partInfoSQL, orders.TableID, "test", 128))
	if len(res.Rows) != 1 || columnOf(t, res, 0, "part_type") != "0" || columnOf(t, res, 0, "part_num") != "4" ||
		columnOf(t, res, 0, "part_level") != "1" || columnOf(t, res, 0, "part_key_name") != "id" ||
		columnOf(t, res, 0, "part_key_type") != "5" || columnOf(t, res, 0, "part_key_idx") != "0" ||
		columnOf(t, res, 0, "template_num") != "0" || columnOf(t, res, 0, "part_expr") != "`id`" {
		t.Errorf("orders part info: %v", res.Rows)
	}
	res = mustQuery(t, cl, fmt.Sprintf(firstPartSQL, orders.TableID, "test", -1, orders.TableID, "test", int64Max))
	if len(res.Rows) != 4 {
		t.Fatalf("orders partitions: %v", res.Rows)
	}
	for i, p := range orders.Partitions {
		if columnOf(t, res, i, "tablet_id") != strconv.FormatInt(p.TabletID, 10) || columnOf(t, res, i, "ls_id") != strconv.FormatInt(p.LSID, 10) ||
			columnOf(t, res, i, "part_id") != strconv.Itoa(i) || columnOf(t, res, i, "part_name") != p.Name {
			t.Errorf("orders partition %d: %v", i, res.Rows[i])
		}
	}

	// RANGE bounds come as serialized rowkeys.
	events := tables["test.events"]
	res = mustQuery(t, cl, fmt.Sprintf(firstPartSQL, events.TableID, "test", -1, events.TableID, "test", int64Max))
	var bounds []string
	for i := range res.Rows {
		objs, _, ok := mysqlproto.ReadOBRowkey(res.Rows[i][4], 0, nil, 8)
		if !ok || len(objs) != 1 {
			t.Fatalf("bound %d: %x", i, res.Rows[i][4])
		}
		if objs[0].Meta.Type == mysqlproto.OBTypeExtend {
			bounds = append(bounds, "MAX")
		} else {
			bounds = append(bounds, strconv.FormatInt(objs[0].Int, 10))
		}
	}
	if strings.Join(bounds, ",") != "100,200,MAX" {
		t.Errorf("events bounds: %v", bounds)
	}

	// LIST values as serialized rows, the DEFAULT partition as a MAX row.
	shops := tables["test.shops"]
	res = mustQuery(t, cl, fmt.Sprintf(firstPartSQL, shops.TableID, "test", -1, shops.TableID, "test", int64Max))
	var lists []string
	for i := range res.Rows {
		var vals []string
		b := res.Rows[i][4]
		for p := 0; p < len(b); {
			objs, next, ok := mysqlproto.ReadOBRow(b, p, nil, 4)
			if !ok {
				t.Fatalf("list row: %x", b)
			}
			if objs[0].Meta.Type == mysqlproto.OBTypeExtend {
				vals = append(vals, "DEFAULT")
			} else {
				vals = append(vals, string(objs[0].Bytes))
			}
			p = next
		}
		lists = append(lists, strings.Join(vals, "|"))
	}
	if strings.Join(lists, ",") != "hz|sh,bj,DEFAULT" {
		t.Errorf("shops lists: %v", lists)
	}

	// Two levels: two part-key rows, and sub-partitions with tablets.
	metrics := tables["test.metrics"]
	res = mustQuery(t, cl, fmt.Sprintf(partInfoSQL, metrics.TableID, "test", 128))
	if len(res.Rows) != 2 || columnOf(t, res, 0, "part_level") != "2" || columnOf(t, res, 0, "part_type") != "4" ||
		columnOf(t, res, 0, "sub_part_type") != "1" || columnOf(t, res, 0, "part_key_num") != "2" ||
		columnOf(t, res, 1, "part_key_name") != "host" || columnOf(t, res, 1, "part_key_level") != "2" ||
		columnOf(t, res, 1, "part_key_type") != "22" || columnOf(t, res, 1, "part_key_collation_type") != "45" {
		t.Errorf("metrics part info: %v", res.Rows)
	}
	res = mustQuery(t, cl, fmt.Sprintf(firstPartSQL, metrics.TableID, "test", -1, metrics.TableID, "test", int64Max))
	if len(res.Rows) != 2 || columnOf(t, res, 0, "sub_part_num") != "2" || columnOf(t, res, 0, "ls_id") != "-1" {
		t.Errorf("metrics first level: %v", res.Rows)
	}
	res = mustQuery(t, cl, fmt.Sprintf(subPartSQL, metrics.TableID, "test", -1, metrics.TableID, "test", int64Max))
	if len(res.Rows) != 4 {
		t.Fatalf("metrics sub partitions: %v", res.Rows)
	}
	for i, p := range metrics.Partitions {
		if columnOf(t, res, i, "tablet_id") != strconv.FormatInt(p.TabletID, 10) || columnOf(t, res, i, "part_name") != p.Name ||
			columnOf(t, res, i, "part_id") != strconv.Itoa(i/2) || columnOf(t, res, i, "sub_part_id") != strconv.Itoa(i%2) {
			t.Errorf("metrics sub partition %d: %v", i, res.Rows[i])
		}
	}
}

func TestViewsFollowChanges(t *testing.T) {
	c := testCluster(t)
	cl := proxyro(t, c, "zone1-1")
	n := c.Node("zone2-1")
	if err := n.SetStatus("inactive"); err != nil {
		t.Fatal(err)
	}
	if err := n.SetStopTime(time.Now()); err != nil {
		t.Fatal(err)
	}
	if err := c.Node("zone3-1").SetStartServiceTime(time.Time{}); err != nil {
		t.Fatal(err)
	}
	if err := c.SetZoneStatus("zone1", "INACTIVE"); err != nil {
		t.Fatal(err)
	}
	servers := mustQuery(t, cl, serverSQL)
	got := []string{}
	for i := range servers.Rows {
		got = append(got, columnOf(t, servers, i, "status")+"/"+columnOf(t, servers, i, "start_service_time")+"/"+columnOf(t, servers, i, "stop_time"))
	}
	if strings.Join(got, " ") != "ACTIVE/1/0 INACTIVE/1/1 ACTIVE/0/0" {
		t.Errorf("servers after changes: %v", got)
	}
	if z := mustQuery(t, cl, zoneSQL); columnOf(t, z, 0, "status") != "INACTIVE" {
		t.Errorf("zone1 status: %v", z.Rows[0])
	}

	// A leader move shows in the table entry and the LS locations.
	before, _ := c.Leader("test.orders", "p1")
	target := "zone3-1"
	if before == target {
		target = "zone1-1"
	}
	if err := c.MoveLeader("test.orders", "p1", target); err != nil {
		t.Fatal(err)
	}
	var p1 PartitionInfo
	for _, ti := range c.Tables() {
		if ti.Name == "orders" {
			p1 = ti.Partitions[1]
		}
	}
	res := mustQuery(t, cl, fmt.Sprintf(tableEntrySQL, "", "test", "test", "orders", p1.TabletID, int64Max))
	if columnOf(t, res, 0, "role") != "1" || columnOf(t, res, 0, "sql_port") != strconv.Itoa(c.Node(target).Port()) {
		t.Errorf("after move, leader row %v", res.Rows[0])
	}
	ls := mustQuery(t, cl, fmt.Sprintf("SELECT svr_ip, sql_port FROM oceanbase.CDB_OB_LS_LOCATIONS WHERE tenant_id = 1002 AND ls_id = %d AND role = 'LEADER'", p1.LSID))
	if len(ls.Rows) != 1 || string(ls.Rows[0][1]) != strconv.Itoa(c.Node(target).Port()) {
		t.Errorf("LS leader: %v", ls.Rows)
	}
	// app becomes multi-leader when one of its partitions moves away.
	if err := c.MoveLeader("app.appdb.items", "p0", "zone1-1"); err != nil {
		t.Fatal(err)
	}
	leaders := mustQuery(t, cl, fmt.Sprintf(singleLeaderSQL, "1004"))
	if len(leaders.Rows) != 1 || columnOf(t, leaders, 0, "is_single_leader") != "0" {
		t.Errorf("app single leader after move: %v", leaders.Rows)
	}
	// Reset restores everything.
	if err := c.Reset(); err != nil {
		t.Fatal(err)
	}
	if after, _ := c.Leader("test.orders", "p1"); after != before {
		t.Errorf("leader after reset %s, want %s", after, before)
	}
	servers = mustQuery(t, cl, serverSQL)
	if columnOf(t, servers, 1, "status") != "ACTIVE" || columnOf(t, servers, 1, "stop_time") != "0" {
		t.Errorf("servers after reset: %v", servers.Rows)
	}
}
