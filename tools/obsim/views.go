package obsim

import (
	"context"
	"database/sql"
	"fmt"
	"strings"
	"time"

	"obgate/internal/obpart"
)

// The views and internal tables ODP reads are real tables in the MariaDB
// database `oceanbase`, rewritten from the cluster model after every change,
// so that MariaDB answers ODP's SQL texts itself. Upper-case OceanBase view
// names also get a lower-case alias view (OceanBase names are
// case-insensitive; MariaDB's are not on Linux).

const viewDB = "oceanbase"

// viewDDL creates the tables. Column names and order follow OceanBase 4.x.
var viewDDL = []string{
	"CREATE DATABASE IF NOT EXISTS oceanbase",
	`CREATE TABLE IF NOT EXISTS oceanbase.DBA_OB_ZONES (
		ZONE varchar(128) NOT NULL PRIMARY KEY,
		CREATE_TIME datetime(6) NULL, MODIFY_TIME datetime(6) NULL,
		STATUS varchar(128) NOT NULL, IDC varchar(128) NOT NULL,
		REGION varchar(128) NOT NULL, TYPE varchar(128) NOT NULL)`,
	`CREATE TABLE IF NOT EXISTS oceanbase.DBA_OB_SERVERS (
		SVR_IP varchar(46) NOT NULL, SVR_PORT bigint NOT NULL, ID bigint NOT NULL,
		ZONE varchar(128) NOT NULL, SQL_PORT bigint NOT NULL, WITH_ROOTSERVER varchar(3) NOT NULL,
		STATUS varchar(64) NOT NULL, START_SERVICE_TIME datetime(6) NULL, STOP_TIME datetime(6) NULL,
		BLOCK_MIGRATE_IN_TIME datetime(6) NULL, CREATE_TIME datetime(6) NULL, MODIFY_TIME datetime(6) NULL,
		BUILD_VERSION varchar(256) NOT NULL, LAST_OFFLINE_TIME datetime(6) NULL,
		PRIMARY KEY (SVR_IP, SVR_PORT))`,
	`CREATE TABLE IF NOT EXISTS oceanbase.DBA_OB_TENANTS (
		TENANT_ID bigint NOT NULL PRIMARY KEY, TENANT_NAME varchar(128) NOT NULL,
		TENANT_TYPE varchar(4) NOT NULL, CREATE_TIME datetime(6) NULL, MODIFY_TIME datetime(6) NULL,
		PRIMARY_ZONE varchar(128) NULL, LOCALITY text NULL, PREVIOUS_LOCALITY text NULL,
		COMPATIBILITY_MODE varchar(6) NOT NULL, STATUS varchar(64) NOT NULL, IN_RECYCLEBIN varchar(3) NOT NULL,
		LOCKED varchar(3) NOT NULL, TENANT_ROLE varchar(100) NOT NULL, SWITCHOVER_STATUS varchar(100) NOT NULL,
		SWITCHOVER_EPOCH bigint NOT NULL, SYNC_SCN bigint NULL, REPLAYABLE_SCN bigint NULL,
		READABLE_SCN bigint NULL, RECOVERY_UNTIL_SCN bigint NULL, LOG_MODE varchar(100) NOT NULL,
		ARBITRATION_SERVICE_STATUS varchar(64) NOT NULL, UNIT_NUM bigint NOT NULL,
		COMPATIBLE varchar(256) NOT NULL, MAX_LS_ID bigint NOT NULL)`,
	`CREATE TABLE IF NOT EXISTS oceanbase.CDB_OB_LS_LOCATIONS (
		TENANT_ID bigint NOT NULL, LS_ID bigint NOT NULL, SVR_IP varchar(46) NOT NULL,
		SVR_PORT bigint NOT NULL, SQL_PORT bigint NOT NULL, ZONE varchar(128) NOT NULL,
		ROLE varchar(8) NOT NULL, MEMBER_LIST text NULL, PAXOS_REPLICA_NUMBER bigint NULL,
		REPLICA_TYPE varchar(16) NOT NULL, LEARNER_LIST text NULL, REBUILD varchar(8) NOT NULL,
		PRIMARY KEY (TENANT_ID, LS_ID, SVR_IP, SVR_PORT))`,
	`CREATE TABLE IF NOT EXISTS oceanbase.` + "`V$OB_PARAMETERS`" + ` (
		SVR_IP varchar(46) NOT NULL, SVR_PORT bigint NOT NULL, ZONE varchar(128) NOT NULL,
		SCOPE varchar(64) NOT NULL, TENANT_ID bigint NULL, NAME varchar(128) NOT NULL,
		DATA_TYPE varchar(128) NULL, VALUE text NOT NULL, INFO text NOT NULL, SECTION varchar(128) NOT NULL,
		EDIT_LEVEL varchar(128) NOT NULL, DEFAULT_VALUE text NOT NULL, ISDEFAULT varchar(3) NOT NULL)`,
	`CREATE TABLE IF NOT EXISTS oceanbase.` + "`GV$OB_PARAMETERS`" + ` LIKE oceanbase.` + "`V$OB_PARAMETERS`",
	`CREATE TABLE IF NOT EXISTS oceanbase.__all_virtual_proxy_sys_variable (
		name varchar(128) NOT NULL, tenant_id bigint NOT NULL, data_type bigint NOT NULL,
		value text NULL, flags bigint NOT NULL, modified_time bigint NOT NULL,
		PRIMARY KEY (tenant_id, name))`,
	`CREATE TABLE IF NOT EXISTS oceanbase.__all_virtual_proxy_schema (
		tenant_name varchar(128) NOT NULL, database_name varchar(128) NOT NULL,
		table_name varchar(256) NOT NULL, tablet_id bigint NOT NULL, svr_ip varchar(46) NOT NULL,
		sql_port bigint NOT NULL, table_id bigint NOT NULL, role bigint NOT NULL, part_num bigint NOT NULL,
		replica_num bigint NOT NULL, table_type bigint NOT NULL, schema_version bigint NOT NULL,
		replica_type bigint NOT NULL, dup_replica_type bigint NOT NULL, memstore_percent bigint NOT NULL,
		spare1 bigint NOT NULL, spare2 bigint NOT NULL, spare3 bigint NOT NULL,
		spare4 text NULL, spare5 text NULL, spare6 text NULL,
		complex_table_type bigint NOT NULL, level1_decoded_db_name varchar(128) NULL,
		level1_decoded_table_name varchar(256) NULL, level2_decoded_db_name varchar(128) NULL,
		level2_decoded_table_name varchar(256) NULL,
		PRIMARY KEY (tenant_name, database_name, table_name, tablet_id, svr_ip, sql_port))`,
	`CREATE TABLE IF NOT EXISTS oceanbase.__all_virtual_proxy_partition_info (
		tenant_name varchar(128) NOT NULL, table_id bigint NOT NULL, part_level bigint NOT NULL,
		all_part_num bigint NOT NULL, template_num bigint NOT NULL, part_id_rule_ver bigint NOT NULL,
		part_type bigint NOT NULL, part_num bigint NOT NULL, is_column_type tinyint NOT NULL,
		part_space bigint NOT NULL, part_expr text NULL, part_expr_bin text NULL,
		part_range_type varchar(1024) NULL, part_interval text NULL,
		part_interval_bin text NULL, interval_start text NULL,
		interval_start_bin text NULL, sub_part_type bigint NOT NULL, sub_part_num bigint NOT NULL,
		is_sub_column_type tinyint NOT NULL, sub_part_space bigint NOT NULL,
		sub_part_expr text NULL, sub_part_expr_bin text NULL,
		sub_part_range_type varchar(1024) NULL, def_sub_part_interval text NULL,
		def_sub_part_interval_bin text NULL, def_sub_interval_start text NULL,
		def_sub_interval_start_bin text NULL, part_key_num bigint NOT NULL,
		part_key_name varchar(128) NOT NULL, part_key_type bigint NOT NULL, part_key_idx bigint NOT NULL,
		part_key_level bigint NOT NULL, part_key_extra text NULL,
		part_key_collation_type bigint NOT NULL, part_key_rowkey_idx bigint NOT NULL,
		part_key_expr text NULL, part_key_length bigint NOT NULL, part_key_precision bigint NOT NULL,
		part_key_scale bigint NOT NULL, spare1 bigint NOT NULL, spare2 bigint NOT NULL, spare3 bigint NOT NULL,
		spare4 text NULL, spare5 text NULL, spare6 text NULL,
		part_key_default_value longblob NULL,
		PRIMARY KEY (tenant_name, table_id, part_key_level, part_key_name))`,
	`CREATE TABLE IF NOT EXISTS oceanbase.__all_virtual_proxy_partition (
		tenant_name varchar(128) NOT NULL, table_id bigint NOT NULL, part_id bigint NOT NULL,
		part_name varchar(128) NOT NULL, status bigint NOT NULL, low_bound_val text NULL,
		low_bound_val_bin blob NULL, high_bound_val text NULL,
		high_bound_val_bin blob NULL, part_position bigint NOT NULL, tablet_id bigint NOT NULL,
		sub_part_num bigint NOT NULL, sub_part_space bigint NOT NULL, sub_part_interval text NULL,
		sub_part_interval_bin blob NULL, sub_interval_start text NULL,
		sub_interval_start_bin blob NULL, spare1 bigint NOT NULL, spare2 bigint NOT NULL,
		spare3 bigint NOT NULL, spare4 text NULL, spare5 text NULL, spare6 text NULL,
		PRIMARY KEY (tenant_name, table_id, part_position), UNIQUE KEY (tenant_name, table_id, part_id))`,
	`CREATE TABLE IF NOT EXISTS oceanbase.__all_virtual_proxy_sub_partition (
		tenant_name varchar(128) NOT NULL, table_id bigint NOT NULL, part_id bigint NOT NULL,
		sub_part_id bigint NOT NULL, part_name varchar(128) NOT NULL, status bigint NOT NULL,
		low_bound_val text NULL, low_bound_val_bin blob NULL,
		high_bound_val text NULL, high_bound_val_bin blob NULL,
		sub_part_position bigint NOT NULL, tablet_id bigint NOT NULL, spare1 bigint NOT NULL,
		spare2 bigint NOT NULL, spare3 bigint NOT NULL, spare4 text NULL, spare5 text NULL,
		spare6 text NULL, PRIMARY KEY (tenant_name, table_id, part_id, sub_part_id))`,
	`CREATE TABLE IF NOT EXISTS oceanbase.__all_virtual_tablet_to_ls (
		tenant_id bigint NOT NULL, table_id bigint NOT NULL, tablet_id bigint NOT NULL,
		ls_id bigint NOT NULL, transfer_seq bigint NOT NULL, PRIMARY KEY (tenant_id, tablet_id))`,
	`CREATE TABLE IF NOT EXISTS oceanbase.__all_virtual_proxy_routine (
		tenant_name varchar(128) NOT NULL, database_name varchar(128) NOT NULL,
		package_name varchar(128) NOT NULL, routine_name varchar(128) NOT NULL, routine_id bigint NOT NULL,
		routine_type bigint NOT NULL, schema_version bigint NOT NULL, routine_sql longtext NULL,
		spare1 bigint NULL, spare2 bigint NULL, spare3 bigint NULL, spare4 text NULL,
		spare5 text NULL, spare6 text NULL,
		PRIMARY KEY (tenant_name, database_name, package_name, routine_name))`,
	"CREATE OR REPLACE VIEW oceanbase.dba_ob_zones AS SELECT * FROM oceanbase.DBA_OB_ZONES",
	"CREATE OR REPLACE VIEW oceanbase.dba_ob_servers AS SELECT * FROM oceanbase.DBA_OB_SERVERS",
	"CREATE OR REPLACE VIEW oceanbase.dba_ob_tenants AS SELECT * FROM oceanbase.DBA_OB_TENANTS",
	"CREATE OR REPLACE VIEW oceanbase.cdb_ob_ls_locations AS SELECT * FROM oceanbase.CDB_OB_LS_LOCATIONS",
	"CREATE OR REPLACE VIEW oceanbase.`v$ob_parameters` AS SELECT * FROM oceanbase.`V$OB_PARAMETERS`",
	"CREATE OR REPLACE VIEW oceanbase.`gv$ob_parameters` AS SELECT * FROM oceanbase.`GV$OB_PARAMETERS`",
}

// viewTables are the tables rewritten on refresh.
var viewTables = []string{"DBA_OB_ZONES", "DBA_OB_SERVERS", "DBA_OB_TENANTS", "CDB_OB_LS_LOCATIONS",
	"`V$OB_PARAMETERS`", "`GV$OB_PARAMETERS`", "__all_virtual_proxy_sys_variable", "__all_virtual_proxy_schema",
	"__all_virtual_proxy_partition_info", "__all_virtual_proxy_partition",
	"__all_virtual_proxy_sub_partition", "__all_virtual_tablet_to_ls"}

// rowSet collects the rows of one table for a multi-row INSERT.
type rowSet struct {
	table string
	cols  []string
	rows  [][]any
}

func (r *rowSet) add(vals ...any) {
	if len(vals) != len(r.cols) {
		panic(fmt.Sprintf("obsim: %s: %d values for %d columns", r.table, len(vals), len(r.cols)))
	}
	r.rows = append(r.rows, vals)
}

// nullTime renders a zero time as NULL.
func nullTime(t time.Time) any {
	if t.IsZero() {
		return nil
	}
	return t.UTC().Format("2006-01-02 15:04:05.000000")
}

// nullString renders "" as NULL, as the OceanBase views do.
func nullString(s string) any {
	if s == "" {
		return nil
	}
	return s
}

// Replica role and type codes of __all_virtual_proxy_schema.
const (
	roleLeader          = 1
	roleFollower        = 2
	replicaTypeFull     = 0  // ObReplicaType REPLICA_TYPE_FULL
	replicaTypeReadOnly = 16 // REPLICA_TYPE_READONLY (5 is LOGONLY)
	tableTypeSystem     = 0
	tableTypeUser       = 3
	allDummyTableID     = 1
)

// defaultTimeZoneName is the tenants' global time_zone.
func (c *Cluster) defaultTimeZoneName() string {
	for _, v := range sysVariables {
		if v.name == "time_zone" {
			return v.value
		}
	}
	return "SYSTEM"
}

// defaultTimeZone is the time zone of a new session.
func (c *Cluster) defaultTimeZone() *time.Location {
	return obpart.ParseTimeZone(c.defaultTimeZoneName())
}

// sysVariables are the rows of __all_virtual_proxy_sys_variable: name,
// ObObjType of the value, value, flags.
var sysVariables = []struct {
	name  string
	typ   int
	value string
	flags int
}{
	{"autocommit", 5, "1", 3},
	{"character_set_client", 5, "45", 3},
	{"character_set_connection", 5, "45", 3},
	{"character_set_results", 5, "45", 3},
	{"collation_connection", 5, "45", 3},
	{"interactive_timeout", 5, "28800", 3},
	{"wait_timeout", 5, "28800", 3},
	{"max_allowed_packet", 5, "16777216", 3},
	{"net_buffer_length", 5, "16384", 3},
	{"sql_mode", 10, "4194304", 3},
	{"time_zone", 22, "+8:00", 3},
	{"tx_isolation", 22, "READ-COMMITTED", 3},
	{"tx_read_only", 5, "0", 3},
	{"version_comment", 22, "OceanBase 4.x (simulated by obsim)", 1},
	{"ob_query_timeout", 5, "10000000", 3},
	{"ob_trx_timeout", 5, "86400000000", 3},
	{"ob_trx_idle_timeout", 5, "86400000000", 3},
	{"ob_read_consistency", 5, "3", 3},
	{"ob_route_policy", 5, "1", 3},
	{"ob_enable_transmission_checksum", 5, "1", 3},
	{"ob_proxy_global_variables_version", 5, "0", 3},
	{"ob_compatibility_mode", 5, "0", 1},
}

// buildViewRows generates every view row from the model. Called with c.mu
// held.
func (c *Cluster) buildViewRows() []*rowSet {
	now := time.Now()
	zones := &rowSet{table: "DBA_OB_ZONES", cols: []string{"ZONE", "CREATE_TIME", "MODIFY_TIME", "STATUS", "IDC", "REGION", "TYPE"}}
	for _, z := range c.topo.Zones {
		zones.add(z.Name, nullTime(c.started), nullTime(now), c.zoneStatus[z.Name], z.IDC, z.Region, z.Type)
	}
	servers := &rowSet{table: "DBA_OB_SERVERS", cols: []string{"SVR_IP", "SVR_PORT", "ID", "ZONE", "SQL_PORT",
		"WITH_ROOTSERVER", "STATUS", "START_SERVICE_TIME", "STOP_TIME", "BLOCK_MIGRATE_IN_TIME", "CREATE_TIME",
		"MODIFY_TIME", "BUILD_VERSION", "LAST_OFFLINE_TIME"}}
	for i, n := range c.nodeList {
		rs := "NO"
		if i == 0 {
			rs = "YES"
		}
		servers.add(nodeIP, n.rpcPort, i+1, n.zone, n.port, rs, n.view.status, nullTime(n.view.startService),
			nullTime(n.view.stopTime), nil, nullTime(c.started), nullTime(now),
			c.topo.Version+"_obsim", nil)
	}
	tenants := &rowSet{table: "DBA_OB_TENANTS", cols: []string{"TENANT_ID", "TENANT_NAME", "TENANT_TYPE",
		"CREATE_TIME", "MODIFY_TIME", "PRIMARY_ZONE", "LOCALITY", "PREVIOUS_LOCALITY", "COMPATIBILITY_MODE",
		"STATUS", "IN_RECYCLEBIN", "LOCKED", "TENANT_ROLE", "SWITCHOVER_STATUS", "SWITCHOVER_EPOCH", "SYNC_SCN",
		"REPLAYABLE_SCN", "READABLE_SCN", "RECOVERY_UNTIL_SCN", "LOG_MODE", "ARBITRATION_SERVICE_STATUS",
		"UNIT_NUM", "COMPATIBLE", "MAX_LS_ID"}}
	lsLoc := &rowSet{table: "CDB_OB_LS_LOCATIONS", cols: []string{"TENANT_ID", "LS_ID", "SVR_IP", "SVR_PORT",
		"SQL_PORT", "ZONE", "ROLE", "MEMBER_LIST", "PAXOS_REPLICA_NUMBER", "REPLICA_TYPE", "LEARNER_LIST", "REBUILD"}}
	tabletLS := &rowSet{table: "__all_virtual_tablet_to_ls", cols: []string{"tenant_id", "table_id", "tablet_id", "ls_id", "transfer_seq"}}
	scn := now.UnixNano()
	addLS := func(t *tenantModel, tenantID, lsID int64, leader string, replicas []string) {
		var members []string
		paxos := 0
		for _, r := range replicas {
			if c.zone(c.nodes[r].zone).Type != "ReadOnly" {
				members = append(members, fmt.Sprintf("%s:%d:1", nodeIP, c.nodes[r].rpcPort))
				paxos++
			}
		}
		for _, r := range replicas {
			n := c.nodes[r]
			role, rtype := "FOLLOWER", "FULL"
			if r == leader {
				role = "LEADER"
			}
			if c.zone(n.zone).Type == "ReadOnly" {
				rtype = "READONLY"
			}
			lsLoc.add(tenantID, lsID, nodeIP, n.rpcPort, n.port, n.zone, role, strings.Join(members, ","), paxos, rtype, "", "FALSE")
		}
	}
	for _, t := range c.tenants {
		tenantReplicas := c.tenantLSReplicas(t)
		maxLS := int64(1)
		for _, tb := range t.tables {
			for _, p := range tb.tablets {
				maxLS = max(maxLS, p.lsID)
			}
		}
		if t.id != sysTenantID {
			meta := t.id - 1
			tenants.add(meta, fmt.Sprintf("META$%d", t.id), "META", nullTime(c.started), nullTime(now),
				t.primaryZone, c.locality(t), nil, "MYSQL", "NORMAL", "NO", "NO", "PRIMARY", "NORMAL", 0,
				nil, nil, nil, nil, "NOARCHIVELOG", "DISABLED", 1, c.topo.Version, 1)
			addLS(t, meta, 1, t.sysLSLeader, tenantReplicas)
		}
		typ := "USER"
		if t.id == sysTenantID {
			typ = "SYS"
		}
		var syncSCN any
		if typ == "USER" {
			syncSCN = scn
		}
		tenants.add(t.id, t.name, typ, nullTime(c.started), nullTime(now), t.primaryZone, c.locality(t), nil,
			"MYSQL", "NORMAL", "NO", "NO", "PRIMARY", "NORMAL", 0, syncSCN, syncSCN, syncSCN, nil,
			"NOARCHIVELOG", "DISABLED", 1, c.topo.Version, maxLS)
		addLS(t, t.id, 1, t.sysLSLeader, tenantReplicas)
		for _, tb := range t.tables {
			for _, p := range tb.tablets {
				addLS(t, t.id, p.lsID, p.leader, p.replicas)
				tabletLS.add(t.id, tb.id, p.id, p.lsID, 0)
			}
		}
	}
	params := &rowSet{table: "`V$OB_PARAMETERS`", cols: []string{"SVR_IP", "SVR_PORT", "ZONE", "SCOPE", "TENANT_ID",
		"NAME", "DATA_TYPE", "VALUE", "INFO", "SECTION", "EDIT_LEVEL", "DEFAULT_VALUE", "ISDEFAULT"}}
	gparams := &rowSet{table: "`GV$OB_PARAMETERS`", cols: params.cols}
	for i, n := range c.nodeList {
		for _, p := range c.parameters() {
			row := []any{nodeIP, n.rpcPort, n.zone, "CLUSTER", nil, p[0], "STRING", p[1], p[2], "OBSERVER", "DYNAMIC_EFFECTIVE", p[1], "YES"}
			gparams.add(row...)
			if i == 0 {
				params.add(row...)
			}
		}
	}
	sysvars := &rowSet{table: "__all_virtual_proxy_sys_variable", cols: []string{"name", "tenant_id", "data_type", "value", "flags", "modified_time"}}
	for _, v := range sysVariables {
		sysvars.add(v.name, sysTenantID, v.typ, v.value, v.flags, c.started.UnixMicro())
	}
	schema, partInfo, parts, subParts := c.locationRows()
	return []*rowSet{zones, servers, tenants, lsLoc, params, gparams, sysvars, schema, partInfo, parts, subParts, tabletLS}
}

// tenantLSReplicas places the replicas of a tenant's LS 1: one per zone,
// the leader's server in its zone.
func (c *Cluster) tenantLSReplicas(t *tenantModel) []string {
	var out []string
	for _, z := range t.zones {
		if z == c.nodes[t.sysLSLeader].zone {
			out = append(out, t.sysLSLeader)
		} else {
			out = append(out, c.zoneNodes(z)[0].name)
		}
	}
	return out
}

// parameters are the V$OB_PARAMETERS rows: name, value, info.
func (c *Cluster) parameters() [][3]string {
	rs := make([]string, 0, len(c.nodeList))
	for _, z := range c.topo.Zones {
		rs = append(rs, fmt.Sprintf("%s:%d:%d", nodeIP, c.zoneNodes(z.Name)[0].rpcPort, c.zoneNodes(z.Name)[0].port))
	}
	return [][3]string{
		{"cluster", c.topo.Cluster, "Name of the cluster"},
		{"cluster_id", fmt.Sprint(c.topo.ClusterID), "ID of the cluster"},
		{"rootservice_list", strings.Join(rs, ";"), "a list of servers which contains rootservice"},
		{"enable_rebalance", "True", "specifies whether the partition load-balancing is turned on"},
		{"obconfig_url", "", "URL for OBConfig service"},
	}
}

// locationRows generates __all_virtual_proxy_schema and the partition
// tables.
func (c *Cluster) locationRows() (schema, partInfo, parts, subParts *rowSet) {
	schema = &rowSet{table: "__all_virtual_proxy_schema", cols: []string{"tenant_name", "database_name", "table_name",
		"tablet_id", "svr_ip", "sql_port", "table_id", "role", "part_num", "replica_num", "table_type",
		"schema_version", "replica_type", "dup_replica_type", "memstore_percent", "spare1", "spare2", "spare3",
		"spare4", "spare5", "spare6", "complex_table_type", "level1_decoded_db_name", "level1_decoded_table_name",
		"level2_decoded_db_name", "level2_decoded_table_name"}}
	partInfo = &rowSet{table: "__all_virtual_proxy_partition_info", cols: []string{"tenant_name", "table_id",
		"part_level", "all_part_num", "template_num", "part_id_rule_ver", "part_type", "part_num", "is_column_type",
		"part_space", "part_expr", "part_expr_bin", "part_range_type", "part_interval", "part_interval_bin",
		"interval_start", "interval_start_bin", "sub_part_type", "sub_part_num", "is_sub_column_type",
		"sub_part_space", "sub_part_expr", "sub_part_expr_bin", "sub_part_range_type", "def_sub_part_interval",
		"def_sub_part_interval_bin", "def_sub_interval_start", "def_sub_interval_start_bin", "part_key_num",
		"part_key_name", "part_key_type", "part_key_idx", "part_key_level", "part_key_extra",
		"part_key_collation_type", "part_key_rowkey_idx", "part_key_expr", "part_key_length",
		"part_key_precision", "part_key_scale", "spare1", "spare2", "spare3", "spare4", "spare5", "spare6",
		"part_key_default_value"}}
	parts = &rowSet{table: "__all_virtual_proxy_partition", cols: []string{"tenant_name", "table_id", "part_id",
		"part_name", "status", "low_bound_val", "low_bound_val_bin", "high_bound_val", "high_bound_val_bin",
		"part_position", "tablet_id", "sub_part_num", "sub_part_space", "sub_part_interval", "sub_part_interval_bin",
		"sub_interval_start", "sub_interval_start_bin", "spare1", "spare2", "spare3", "spare4", "spare5", "spare6"}}
	subParts = &rowSet{table: "__all_virtual_proxy_sub_partition", cols: []string{"tenant_name", "table_id",
		"part_id", "sub_part_id", "part_name", "status", "low_bound_val", "low_bound_val_bin", "high_bound_val",
		"high_bound_val_bin", "sub_part_position", "tablet_id", "spare1", "spare2", "spare3", "spare4", "spare5", "spare6"}}

	addReplica := func(t *tenantModel, db, table string, tabletID int64, node string, tableID int64, role,
		partNum, replicaNum, tableType int, schemaVersion int64) {
		n := c.nodes[node]
		rtype := replicaTypeFull
		if c.zone(n.zone).Type == "ReadOnly" {
			rtype = replicaTypeReadOnly
		}
		schema.add(t.name, db, table, tabletID, nodeIP, n.port, tableID, role, partNum, replicaNum, tableType,
			schemaVersion, rtype, 0, 100, 0, 0, 0, nil, nil, nil, 0, nil, nil, nil, nil)
	}
	for _, t := range c.tenants {
		// __all_dummy: the tenant's servers, grouped into virtual tablets
		// of one server per zone; the first server of a group leads it.
		byZone := map[string][]*Node{}
		total := 0
		for _, z := range t.zones {
			byZone[z] = c.zoneNodes(z)
			total += len(byZone[z])
		}
		paxos := c.paxosReplicaNum(t)
		used := map[string]int{}
		for group := 0; total > 0; group++ {
			first := true
			for _, z := range t.zones {
				if used[z] >= len(byZone[z]) {
					continue
				}
				n := byZone[z][used[z]]
				used[z]++
				total--
				role := roleFollower
				if first {
					role, first = roleLeader, false
				}
				addReplica(t, viewDB, "__all_dummy", int64(group), n.name, allDummyTableID, role, 1, paxos, tableTypeSystem, c.schemaVersion)
			}
		}
		for _, tb := range t.tables {
			addTablet := func(id int64, p *tablet) {
				for _, r := range p.replicas {
					role := roleFollower
					if r == p.leader {
						role = roleLeader
					}
					addReplica(t, tb.db, tb.name, id, r, tb.id, role, len(tb.tablets), paxos, tableTypeUser, tb.schemaVersion)
				}
			}
			// tablet_id 0 answers "the first tablet", as the OBServer does.
			addTablet(0, tb.tablets[0])
			if tb.part != nil {
				for _, p := range tb.tablets {
					addTablet(p.id, p)
				}
			} else {
				addTablet(tb.tablets[0].id, tb.tablets[0])
			}
			if tb.part == nil {
				continue
			}
			c.partitionRows(t, tb, partInfo, parts, subParts)
		}
	}
	return schema, partInfo, parts, subParts
}

// paxosReplicaNum counts the tenant's full replicas.
func (c *Cluster) paxosReplicaNum(t *tenantModel) int {
	n := 0
	for _, z := range t.zones {
		if c.zone(z).Type != "ReadOnly" {
			n++
		}
	}
	return n
}

// partitionRows adds one table's rows to the partition tables.
func (c *Cluster) partitionRows(t *tenantModel, tb *tableModel, partInfo, parts, subParts *rowSet) {
	level := 1
	subType := 0
	if tb.sub != nil {
		level = 2
		subType = int(tb.sub.fn)
	}
	keyNum := len(tb.part.cols)
	if tb.sub != nil {
		keyNum += len(tb.sub.cols)
	}
	levels := []*partLevel{tb.part, tb.sub}
	for li, l := range levels {
		if l == nil {
			continue
		}
		for _, col := range l.cols {
			rowkeyIdx := -1
			if i, ok := tb.pkIndex[col.name]; ok {
				rowkeyIdx = i
			}
			subRangeType := ""
			if tb.sub != nil {
				subRangeType = tb.sub.rangeTypeText()
			}
			partInfo.add(t.name, tb.id, level, len(tb.tablets), 0, 0, int(tb.part.fn), tb.part.num, 0, 0,
				tb.part.exprText(), "", tb.part.rangeTypeText(), "", "", "", "", subType, 0, 0, 0,
				tb.sub.exprText(), "", subRangeType, "", "", "", "", keyNum, col.name, col.obTypeNum, col.ordinal,
				li+1, "", col.collation, rowkeyIdx, "", col.length, col.precision, col.scale, 0, 0, 0, nil, nil, nil, nil)
			// part_key_idx is the column's position in the table, so the
			// view's "order by part_key_idx" lists keys in table order, not
			// in the order of the partitioning expression.
		}
	}
	for i := range tb.part.num {
		tabletID := int64(0)
		subNum := 0
		if tb.sub == nil {
			tabletID = tb.tablets[i].id
		} else {
			subNum = tb.sub.num
		}
		// The rows come back in partition order (the order of the server's
		// partition array), whatever the part ids: the primary key is
		// part_position.
		pos := i
		parts.add(t.name, tb.id, tb.part.ids[i], tb.part.names[i], 0, nil, nil, nullString(tb.part.boundText(i)),
			nullBytes(tb.part.boundBin(i)), pos, tabletID, subNum, 0, nil, nil, nil, nil, tb.schemaVersion, 0, 0, nil, nil, nil)
	}
	if tb.sub == nil {
		return
	}
	for _, p := range tb.tablets {
		pos := 0
		if tb.sub.fn.hashLike() {
			pos = p.sub
		}
		subParts.add(t.name, tb.id, tb.part.ids[p.part], p.sub, p.name, 0, nil, nil, nullString(tb.sub.boundText(p.sub)),
			nullBytes(tb.sub.boundBin(p.sub)), pos, p.id, tb.schemaVersion, 0, 0, nil, nil, nil)
	}
}

func nullBytes(b []byte) any {
	if len(b) == 0 {
		return nil
	}
	return b
}

// refreshViews rewrites every view table in one transaction, so readers see
// either the old or the new state. Called with c.mu held.
func (c *Cluster) refreshViews(ctx context.Context) error {
	sets := c.buildViewRows()
	tx, err := c.admin.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("obsim: refresh views: %w", err)
	}
	defer tx.Rollback()
	for _, name := range viewTables {
		if _, err := tx.ExecContext(ctx, "DELETE FROM oceanbase."+name); err != nil {
			return fmt.Errorf("obsim: refresh views: %w", err)
		}
	}
	for _, rs := range sets {
		if err := insertRows(ctx, tx, rs); err != nil {
			return fmt.Errorf("obsim: refresh %s: %w", rs.table, err)
		}
	}
	return tx.Commit()
}

// insertRows runs multi-row INSERTs of at most 200 rows each.
func insertRows(ctx context.Context, tx *sql.Tx, rs *rowSet) error {
	const batch = 200
	for start := 0; start < len(rs.rows); start += batch {
		rows := rs.rows[start:min(start+batch, len(rs.rows))]
		var b strings.Builder
		b.WriteString("INSERT INTO oceanbase." + rs.table + " (" + strings.Join(rs.cols, ", ") + ") VALUES ")
		args := make([]any, 0, len(rows)*len(rs.cols))
		one := "(" + strings.TrimSuffix(strings.Repeat("?, ", len(rs.cols)), ", ") + ")"
		for i, r := range rows {
			if i > 0 {
				b.WriteString(", ")
			}
			b.WriteString(one)
			args = append(args, r...)
		}
		if _, err := tx.ExecContext(ctx, b.String(), args...); err != nil {
			return err
		}
	}
	return nil
}
