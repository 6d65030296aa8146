package reactor_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"obgate/internal/sqltext"
	"obgate/internal/testkit"
	"obgate/tools/obsim"

	"github.com/go-sql-driver/mysql"
)

// Client names in the SQL obgate runs as proxyro@sys (route/metasql.go).
// With names spliced in with only ' doubled, an ordinary user of tenant
// test could end the literal with a backslash: EXPLAIN ROUTE of
// atk.`x\` showed the server's syntax error with obgate's query text, and
// atk.`x\' OR 1=1 -- ` turned the location query into "every row", so the
// statement resolved to another table's entry. These tests run obgate in
// front of obsim (whose views are real MariaDB tables that answer the
// exact SQL) and log in as that ordinary user.

// atkDB is the database of the attack tests' tables: x, and x\ (a real
// table whose name ends in a backslash, which must resolve to itself).
const atkDB = "obatk"

// startAttackOBSim starts the package's three-zone cluster with tables x
// and x\ in atkDB.
func startAttackOBSim(t *testing.T) *obsim.Cluster {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), hangLimit)
	defer cancel()
	if _, err := directDB(t).ExecContext(ctx, "DROP DATABASE IF EXISTS "+atkDB); err != nil {
		t.Fatal(err)
	}
	topo := obTopology()
	topo.Tables = []obsim.Table{
		{Tenant: obTenant, Database: atkDB, Name: "x", Create: "CREATE TABLE x (id INT PRIMARY KEY)",
			Data: []string{"INSERT INTO x VALUES (1)"}, Leaders: []string{"zone1-1"}},
		{Tenant: obTenant, Database: atkDB, Name: `x\`, Create: "CREATE TABLE `x\\` (id INT PRIMARY KEY)",
			Data: []string{"INSERT INTO `x\\` VALUES (2)"}, Leaders: []string{"zone2-1"}},
	}
	c, err := obsim.Start(ctx, obsim.Config{Topology: topo, MariaDBDSN: maria(t).DSN("root", "", "")})
	if err != nil {
		t.Fatalf("start obsim: %v", err)
	}
	t.Cleanup(func() {
		if err := c.Close(); err != nil {
			t.Errorf("obsim close: %v", err)
		}
	})
	return c
}

// leaks are texts that only obgate's own metadata SQL holds: none may
// reach a client.
var leaks = []string{"__all_virtual", "proxy_schema", "DBA_OB_SERVERS", "READ_CONSISTENCY", "tablet_id", "syntax", "near '"}

// checkNoLeak fails t if text holds any of the leaks.
func checkNoLeak(t *testing.T, what, text string) {
	t.Helper()
	for _, l := range leaks {
		if strings.Contains(text, l) {
			t.Errorf("%s shows obgate's metadata query (%q): %s", what, l, text)
		}
	}
}

// TestOBMetadataSQLAttack explains, then runs, statements on tables whose
// names would break out of a literal written by quote doubling alone. A
// name that is a table resolves to that table (x\ to x\, not x); one that
// is not resolves to nothing, at once, whatever SQL it holds; a name no
// object can have is refused; and no answer shows obgate's query.
func TestOBMetadataSQLAttack(t *testing.T) {
	maria(t)
	testkit.CheckLeaks(t)
	c := startAttackOBSim(t)
	p := startOBProxy(t, c, ioModes[0])
	_, conn := obConn(t, p, func(cfg *mysql.Config) { cfg.DBName = atkDB })
	ids := map[string]int64{}
	for _, ti := range c.Tables() {
		if ti.Database == atkDB {
			ids[ti.Name] = ti.TableID
		}
	}
	if len(ids) != 2 || ids["x"] == ids[`x\`] {
		t.Fatalf("obsim lists tables %v, want x and x\\ with their own ids", ids)
	}
	const (
		found   = ""
		missing = "the cluster does not list this table"
		refused = "table name refused"
	)
	for _, tc := range []struct {
		name string
		note string // found: the table's own entry
	}{
		{"x", found},
		{`x\`, found},
		{`x\' OR 1=1 -- `, missing},
		{`x\' OR table_name = 'x' -- `, missing},
		{`x\' OR SLEEP(1) -- `, missing},
		{"x'", missing},
		{`\'`, missing},
		{"x' OR '1'='1", missing},
		{strings.Repeat("y", 300), refused},
	} {
		id, err := sqltext.Ident(tc.name)
		if err != nil {
			t.Fatal(err)
		}
		q := "SELECT * FROM " + atkDB + "." + id
		start := time.Now()
		steps := explainSteps(t, conn, q)
		took := time.Since(start)
		text := explainText(steps)
		checkNoLeak(t, fmt.Sprintf("EXPLAIN ROUTE of table %q", tc.name), text)
		table := steps["table"]
		if !strings.HasPrefix(table, atkDB+"."+tc.name+" entry=") {
			t.Errorf("table %q: EXPLAIN's table line is %q:%s", tc.name, table, text)
		}
		if tc.note == found {
			if want := fmt.Sprintf(" table_id=%d ", ids[tc.name]); !strings.Contains(table, want) || !strings.Contains(table, "entry=AVAIL") {
				t.Errorf("table %q: EXPLAIN says %q, want its own entry (%s):%s", tc.name, table, want, text)
			}
		} else {
			if !strings.Contains(table, " table_id=0 ") {
				t.Errorf("table %q resolved to another table's entry: %q:%s", tc.name, table, text)
			}
			if !strings.Contains(steps["note"], tc.note) {
				t.Errorf("table %q: notes %q, want %q:%s", tc.name, steps["note"], tc.note, text)
			}
		}
		if took > 2*time.Second {
			t.Errorf("table %q: EXPLAIN ROUTE took %v: the location fetch ran the name", tc.name, took)
		}

		// The statement itself: the server answers for its own table, or
		// with its own error about the name.
		ctx, cancel := context.WithTimeout(context.Background(), hangLimit)
		rows, err := conn.QueryContext(ctx, q)
		if err == nil {
			rows.Close()
		}
		cancel()
		switch {
		case tc.note == found && err != nil:
			t.Errorf("%s: %v", q, err)
		case tc.note != found && err == nil:
			t.Errorf("%s: no error for a table that does not exist", q)
		case err != nil:
			checkNoLeak(t, "the error of "+q, err.Error())
			var me *mysql.MySQLError
			if tc.note == refused && (!errors.As(err, &me) || me.Number != 1103 && me.Number != 1059) {
				// Routed without a table, the statement reaches a server,
				// which refuses the name itself (ER_WRONG_TABLE_NAME, or
				// ER_TOO_LONG_IDENT as OceanBase says for some lengths).
				t.Errorf("%s: %v, want the server's own error about the name", q, err)
			}
		}
	}
}

// TestOBUserVarQuotedName sets user variables whose names need backquotes
// (a space, a backquote) and reads them on every node: obgate replays them
// as SET @`a b` = …, which the nodes' parser reads as the same variables.
// Spliced in raw (SET @a b = …), the replay was a syntax error.
func TestOBUserVarQuotedName(t *testing.T) {
	testkit.CheckLeaks(t)
	c := startOBSim(t)
	p := startOBProxy(t, c, ioModes[0], "enable_cached_server", "false")
	_, conn := obConn(t, p)
	mk := newMarker("uvq")
	execCtx(t, conn, fmt.Sprintf("SET @`a b` = 'sp ace', @`a``b` = 2, @`x\\` = 3 /* %s-0 */", mk))
	for i := 1; i <= 30; i++ {
		got := rowStrings(t, conn, fmt.Sprintf("SELECT @`a b`, @`a``b`, @`x\\` /* %s-%d */", mk, i))
		if len(got) != 1 || fmt.Sprint(got[0]) != "[sp ace 2 3]" {
			t.Fatalf("read %d: %q, want [sp ace 2 3]; obgate replayed:%s", i, got, describeEntries(syncEntries(c)))
		}
	}
	if nodes := nodesOf(proxyEntries(c, mk)); len(nodes) < 3 {
		t.Errorf("the reads ran on %v, want all 3 nodes", nodes)
	}
}
