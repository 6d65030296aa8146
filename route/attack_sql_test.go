package route

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"

	"obgate/internal/sqltext"
	"obgate/internal/sqltext/sqltexttest"
)

// The SQL obgate runs as proxyro@sys with a client's names in it
// (metasql.go). Before, names were spliced in with only ' doubled, so a
// backslash ended the literal early: an ordinary user of tenant test whose
// EXPLAIN ROUTE named acc.`x\` got the server's syntax error with the
// query text, and acc.`x\' OR 1=1 -- ` resolved to another table's entry.
// These tests pin the statement text for ordinary names (ODP's, byte for
// byte) and check every builder with hostile names: a name CheckName
// refuses never reaches SQL; any other keeps the statement's shape under
// both readings of a backslash and reads back as itself.

// ODP's statement texts (odp-behaviour.md §1.1, §5.2) as obgate sent them
// with fmt.Sprintf, kept here as the reference for ordinary names.
const (
	odpTableEntryFmt    = "SELECT /*+READ_CONSISTENCY(WEAK)*/ A.*, B.svr_port as svr_port FROM oceanbase.__all_virtual_proxy_schema A inner join oceanbase.DBA_OB_SERVERS B ON A.svr_ip = B.svr_ip and A.sql_port = B.sql_port WHERE A.tenant_name = '%s' AND A.database_name = '%s' AND A.table_name = '%s' AND A.tablet_id = 0 ORDER BY A.role ASC LIMIT 9223372036854775807"
	odpTabletsFmt       = "SELECT /*+READ_CONSISTENCY(WEAK)*/ A.*, B.svr_port as svr_port FROM oceanbase.__all_virtual_proxy_schema A inner join oceanbase.DBA_OB_SERVERS B ON A.svr_ip = B.svr_ip and A.sql_port = B.sql_port WHERE A.tenant_name = '%s' AND A.database_name = '%s' AND A.table_name = '%s' AND A.tablet_id IN (%s) ORDER BY A.tablet_id, A.role ASC LIMIT 9223372036854775807"
	odpPartInfoFmt      = "SELECT /*+READ_CONSISTENCY(WEAK)*/ * FROM oceanbase.__all_virtual_proxy_partition_info WHERE table_id = %d and tenant_name = '%s' order by part_key_idx LIMIT 128;"
	odpFirstPartsFmt    = "SELECT /*+READ_CONSISTENCY(WEAK)*/  A.tablet_id as tablet_id, IFNULL((SELECT B.ls_id FROM oceanbase.__all_virtual_tablet_to_ls B WHERE A.tablet_id = B.tablet_id AND B.table_id = %d AND B.tenant_id = (SELECT tenant_id FROM oceanbase.DBA_OB_TENANTS WHERE tenant_name = '%s' LIMIT 1) LIMIT 1), -1) as ls_id, A.part_id as part_id, A.part_name as part_name, A.high_bound_val_bin as high_bound_val_bin, A.sub_part_num AS sub_part_num FROM oceanbase.__all_virtual_proxy_partition A WHERE A.table_id = %d AND A.tenant_name = '%s'LIMIT 9223372036854775807;"
	odpSubPartsFmt      = "SELECT /*+READ_CONSISTENCY(WEAK)*/  A.tablet_id as tablet_id, IFNULL((SELECT B.ls_id FROM oceanbase.__all_virtual_tablet_to_ls B WHERE A.tablet_id = B.tablet_id AND B.table_id = %d AND B.tenant_id = (SELECT tenant_id FROM oceanbase.DBA_OB_TENANTS WHERE tenant_name = '%s' LIMIT 1) LIMIT 1), -1) as ls_id, A.part_id as part_id, A.sub_part_id as sub_part_id, A.part_name as part_name, A.high_bound_val_bin as high_bound_val_bin FROM oceanbase.__all_virtual_proxy_sub_partition A WHERE A.table_id = %d AND A.tenant_name = '%s'LIMIT 9223372036854775807;"
	odpRoutineFmt       = "SELECT /*+READ_CONSISTENCY(WEAK)*/ * FROM oceanbase.__all_virtual_proxy_routine WHERE tenant_name = '%s' and database_name = '%s' and package_name = '%s' and routine_name = '%s'"
	odpSingleLeaderFmt  = "SELECT /*+READ_CONSISTENCY(WEAK)*/ t.tenant_name as tenant_name, leader_addr, count(*) = 1 AS is_single_leader FROM oceanbase.DBA_OB_TENANTS t RIGHT JOIN ( SELECT DISTINCT tenant_id, CONCAT(svr_ip, ':', sql_port) AS leader_addr FROM oceanbase.CDB_OB_LS_LOCATIONS WHERE ls_id != 1 AND role='leader' AND tenant_id IN (%s)) s ON t.tenant_id = s.tenant_id GROUP BY tenant_name"
	odpTenantServersFmt = "SELECT /*+READ_CONSISTENCY(WEAK)*/ A.*, B.svr_port as svr_port FROM oceanbase.__all_virtual_proxy_schema A inner join oceanbase.DBA_OB_SERVERS B ON A.svr_ip = B.svr_ip and A.sql_port = B.sql_port WHERE A.tenant_name = '%s' AND A.database_name = '%s' AND A.table_name = '%s' AND A.sql_port > 0 ORDER BY A.tablet_id ASC, role ASC LIMIT 9223372036854775807"
)

// metaNames are the names a builder may take.
type metaNames struct {
	tenant, db, table, pkg, routine string
	tableID                         int64
	ids                             []int64
}

// metaBuilder is one builder of internal SQL: how to call it, which names
// it takes (its literals, in order, with ODP's own constants), and ODP's
// text for ordinary names.
type metaBuilder struct {
	name     string
	build    func(n metaNames) (string, error)
	literals func(n metaNames) []string
	odp      func(n metaNames) string
}

func joinIDs(ids []int64, sep string) string {
	s := make([]string, len(ids))
	for i, id := range ids {
		s[i] = fmt.Sprint(id)
	}
	return strings.Join(s, sep)
}

var metaBuilders = []metaBuilder{
	{"table entry",
		func(n metaNames) (string, error) { return sqlTableEntry(n.tenant, n.db, n.table) },
		func(n metaNames) []string { return []string{n.tenant, n.db, n.table} },
		func(n metaNames) string { return fmt.Sprintf(odpTableEntryFmt, n.tenant, n.db, n.table) }},
	{"tablets",
		func(n metaNames) (string, error) { return sqlTablets(n.tenant, n.db, n.table, n.ids) },
		func(n metaNames) []string { return []string{n.tenant, n.db, n.table} },
		func(n metaNames) string {
			return fmt.Sprintf(odpTabletsFmt, n.tenant, n.db, n.table, joinIDs(n.ids, ", "))
		}},
	{"tenant servers",
		func(n metaNames) (string, error) { return sqlTenantServers(n.tenant) },
		func(n metaNames) []string { return []string{n.tenant, dummyDatabase, dummyTable} },
		func(n metaNames) string { return fmt.Sprintf(odpTenantServersFmt, n.tenant, dummyDatabase, dummyTable) }},
	{"partition info",
		func(n metaNames) (string, error) { return sqlPartInfo(n.tableID, n.tenant) },
		func(n metaNames) []string { return []string{n.tenant} },
		func(n metaNames) string { return fmt.Sprintf(odpPartInfoFmt, n.tableID, n.tenant) }},
	{"first partitions",
		func(n metaNames) (string, error) { return sqlFirstParts(n.tableID, n.tenant) },
		func(n metaNames) []string { return []string{n.tenant, n.tenant} },
		func(n metaNames) string {
			return fmt.Sprintf(odpFirstPartsFmt, n.tableID, n.tenant, n.tableID, n.tenant)
		}},
	{"sub-partitions",
		func(n metaNames) (string, error) { return sqlSubParts(n.tableID, n.tenant) },
		func(n metaNames) []string { return []string{n.tenant, n.tenant} },
		func(n metaNames) string { return fmt.Sprintf(odpSubPartsFmt, n.tableID, n.tenant, n.tableID, n.tenant) }},
	{"routine",
		func(n metaNames) (string, error) { return sqlRoutine(n.tenant, n.db, n.pkg, n.routine) },
		func(n metaNames) []string { return []string{n.tenant, n.db, n.pkg, n.routine} },
		func(n metaNames) string { return fmt.Sprintf(odpRoutineFmt, n.tenant, n.db, n.pkg, n.routine) }},
	{"single leader",
		func(n metaNames) (string, error) { return sqlSingleLeader(n.ids), nil },
		func(n metaNames) []string { return []string{":", "leader"} }, // ODP's own
		func(n metaNames) string { return fmt.Sprintf(odpSingleLeaderFmt, joinIDs(n.ids, ",")) }},
}

// benignNames are ordinary names.
var benignNames = metaNames{tenant: "test", db: "acc", table: "orders", pkg: "", routine: "p_upd",
	tableID: 500002, ids: []int64{200001, 200002, 9223372036854775807}}

// TestMetaSQLIsODPs checks that for ordinary names, Chinese ones included,
// every builder writes ODP's statement byte for byte.
func TestMetaSQLIsODPs(t *testing.T) {
	for _, n := range []metaNames{
		benignNames,
		{tenant: "sys", db: "oceanbase", table: "__all_dummy", pkg: "pkg", routine: "r", tableID: 1, ids: []int64{1}},
		{tenant: "租户", db: "库", table: "订单", pkg: "包", routine: "过程", tableID: 0, ids: []int64{0, 1}},
		{tenant: "t$1", db: "db_2", table: "T3", pkg: "", routine: "x", tableID: 1 << 40, ids: []int64{7}},
	} {
		for _, b := range metaBuilders {
			got, err := b.build(n)
			if want := b.odp(n); err != nil || got != want {
				t.Errorf("%s with %+v:\n got %s (%v)\nwant %s", b.name, n, got, err, want)
			}
		}
	}
}

// hostileNames break a literal written with ' doubled alone, or are names
// no OceanBase object can have.
var hostileNames = []string{
	`x\`,
	`x\' OR 1=1 -- `,
	`x'`,
	`\'`,
	`x\' UNION SELECT * FROM oceanbase.__all_user #`,
	`x\' AND SLEEP(10) -- `,
	`x\'/*`,
	"x'\n-- ",
	"a\x00b",
	"\xff\xfe",
	"x\xbf'",   // GBK: 0xbf, then a quote
	"x\xbf\\'", // GBK: 0xbf 0x5c is one character in GBK
	"\xc0\xa7", // an overlong '
	"tab\there",
	"\x1a",
	strings.Repeat(`\'`, 40),
	strings.Repeat("x", 300),
	strings.Repeat("库", 64),
	strings.Repeat("库", 300),
}

// TestMetaSQLHostileNames puts every hostile name into every name of every
// builder, in turn.
func TestMetaSQLHostileNames(t *testing.T) {
	for _, b := range metaBuilders {
		for _, h := range hostileNames {
			for slot := range 5 {
				n := benignNames
				switch slot {
				case 0:
					n.tenant = h
				case 1:
					n.db = h
				case 2:
					n.table = h
				case 3:
					n.pkg = h
				case 4:
					n.routine = h
				}
				checkMetaSQL(t, b, n)
			}
		}
	}
}

// checkMetaSQL fails t unless b, given n, refuses a name CheckName refuses
// (and builds nothing), or builds a statement with the shape of the benign
// one whose literals read as n's names.
func checkMetaSQL(t *testing.T, b metaBuilder, n metaNames) {
	t.Helper()
	got, err := b.build(n)
	refused := refusedName(b, n)
	switch {
	case refused != nil && (err == nil || !errors.Is(err, sqltext.ErrRefused) || got != ""):
		t.Fatalf("%s with %q: built %q (%v), want it refused (%v)", b.name, b.literals(n), got, err, refused)
	case refused != nil:
		return
	case err != nil:
		t.Fatalf("%s with %q: %v", b.name, b.literals(n), err)
	}
	benign := benignNames
	benign.tableID, benign.ids = n.tableID, n.ids
	ref, _ := b.build(benign)
	for _, esc := range []bool{true, false} {
		want := sqltexttest.Shape(sqltexttest.Tokens(ref, esc))
		toks := sqltexttest.Tokens(got, esc)
		if shape := sqltexttest.Shape(toks); shape != want {
			t.Fatalf("%s with %q, backslash escapes %v: %s\nreads %s\nwant  %s", b.name, b.literals(n), esc, got, shape, want)
		}
		if vals := sqltexttest.Values(toks); !slices.Equal(vals, b.literals(n)) {
			t.Fatalf("%s, backslash escapes %v: literals read %q, want %q", b.name, esc, vals, b.literals(n))
		}
	}
}

// refusedName is the CheckName error of the first name b takes that
// CheckName refuses, or nil.
func refusedName(b metaBuilder, n metaNames) error {
	switch b.name {
	case "table entry", "tablets":
		return firstErr(sqltext.CheckName(sqltext.Tenant, n.tenant), sqltext.CheckName(sqltext.Database, n.db), sqltext.CheckName(sqltext.Table, n.table))
	case "tenant servers", "partition info", "first partitions", "sub-partitions":
		return sqltext.CheckName(sqltext.Tenant, n.tenant)
	case "routine":
		return firstErr(sqltext.CheckName(sqltext.Tenant, n.tenant), sqltext.CheckName(sqltext.Database, n.db),
			sqltext.CheckName(sqltext.Package, n.pkg), sqltext.CheckName(sqltext.Routine, n.routine))
	}
	return nil
}

func firstErr(errs ...error) error {
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}

// TestMetaSQLRefusals pins what a refused name says, and that each lookup
// fails with it before it takes any connection (the cluster here has
// none, and is not ready: a lookup that got as far as SQL would wait).
func TestMetaSQLRefusals(t *testing.T) {
	tc := newTestCluster(t, false)
	ctx, cancel := context.WithTimeout(context.Background(), 0)
	defer cancel()
	long := strings.Repeat("x", 257)
	if _, err := tc.fetchTable(ctx, "t", "db", long); !errors.Is(err, sqltext.ErrRefused) ||
		!strings.Contains(err.Error(), "table name refused: longer than 256 characters") {
		t.Errorf("fetchTable with a 257-character table name: %v", err)
	}
	if _, err := tc.fetchTable(ctx, "t", "d\x00b", "x"); !errors.Is(err, sqltext.ErrRefused) ||
		!strings.Contains(err.Error(), `"d\x00b"`) || !strings.Contains(err.Error(), "database name refused: holds a NUL byte") {
		t.Errorf("fetchTable with a NUL in the database name: %v", err)
	}
	if _, err := tc.queryTenant(ctx, "te\xffst"); !errors.Is(err, sqltext.ErrRefused) ||
		!strings.Contains(err.Error(), "tenant name refused: not valid UTF-8") {
		t.Errorf("queryTenant with invalid UTF-8: %v", err)
	}
	if _, err := tc.queryRoutine("t", "", "", "p"); !errors.Is(err, sqltext.ErrRefused) ||
		!strings.Contains(err.Error(), "database name refused: empty") {
		t.Errorf("queryRoutine without a database: %v", err)
	}
}

// FuzzInternalSQLBuilders feeds any names and ids to every builder: each
// either refuses a name CheckName refuses, or writes a statement with the
// benign statement's shape, under both readings of a backslash, whose
// literals are the names.
func FuzzInternalSQLBuilders(f *testing.F) {
	for _, h := range hostileNames {
		f.Add(h, "acc", h, "", h, int64(1), int64(2))
		f.Add("test", h, "orders", h, "p", int64(-1), int64(0))
	}
	f.Add("test", "acc", "orders", "", "p_upd", int64(500002), int64(9223372036854775807))
	f.Fuzz(func(t *testing.T, tenant, db, table, pkg, routine string, tableID, id int64) {
		n := metaNames{tenant: tenant, db: db, table: table, pkg: pkg, routine: routine,
			tableID: tableID, ids: []int64{id, tableID}}
		for _, b := range metaBuilders {
			checkMetaSQL(t, b, n)
		}
	})
}
