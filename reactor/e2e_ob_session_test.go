package reactor_test

import (
	"fmt"
	"strings"
	"testing"

	"obgate/internal/testkit"
	"obgate/tools/obsim"

	"github.com/go-sql-driver/mysql"
)

// TestOBSessionStateEverywhere logs in with both login-name forms, sets
// session state on one connection and, with enable_cached_server=false,
// reads it back many times: the statements run on every node (obsim's log
// says where), and every node answers with the client's state, which
// obgate replays on server sessions that lack it.
func TestOBSessionStateEverywhere(t *testing.T) {
	testkit.CheckLeaks(t)
	c := startOBSim(t)
	forEachMode(t, func(t *testing.T, mode string) {
		p := startOBProxy(t, c, mode, "enable_cached_server", "false")
		for _, login := range []string{obFullUser, obClusterName + ":" + obTenant + ":" + obUser} {
			t.Run(login, func(t *testing.T) {
				resetOBSim(t, c)
				_, conn := obConn(t, p, func(cfg *mysql.Config) { cfg.User, cfg.DBName = login, "" })
				mk := newMarker("state")
				stmt := func(i int, q string) string { return fmt.Sprintf("%s /* %s-%d */", q, mk, i) }

				// Only obgate's replay can carry these values to a node
				// that did not run the SET: each one differs from the
				// server default.
				execCtx(t, conn, stmt(0, "SET autocommit = 0"))
				execCtx(t, conn, stmt(1, "SET @z = 'not yet null'"))
				for i := 2; i < 8; i++ { // spread @z = 'not yet null' and autocommit=0
					rowStrings(t, conn, stmt(i, "SELECT @z, @@autocommit"))
				}
				execCtx(t, conn, stmt(8, "SET autocommit = 1"))
				execCtx(t, conn, stmt(9, "SET time_zone = '+03:17'"))
				execCtx(t, conn, stmt(10, "SET sql_mode = 'STRICT_ALL_TABLES,PIPES_AS_CONCAT'"))
				execCtx(t, conn, stmt(11, `SET @s = 'it''s "q"', @n = 42, @z = NULL`))
				execCtx(t, conn, stmt(12, "USE "+obDB))

				want := []string{"+03:17", "PIPES_AS_CONCAT,STRICT_ALL_TABLES", `it's "q"`, "42", "NULL", obDB, "1", "ab"}
				const reads = 30
				for i := 100; i < 100+reads; i++ {
					got := rowStrings(t, conn, stmt(i, "SELECT @@time_zone, @@sql_mode, @s, @n, @z, DATABASE(), @@autocommit, 'a' || 'b'"))
					if len(got) != 1 || fmt.Sprint(got[0]) != fmt.Sprint(want) {
						e := proxyEntries(c, fmt.Sprintf("%s-%d ", mk, i))
						t.Errorf("read %d: got %q, want %q (ran on %s)", i, got, want, describeEntries(e))
					}
				}

				var readNodes []string
				for i := 100; i < 100+reads; i++ {
					es := proxyEntries(c, fmt.Sprintf("%s-%d ", mk, i))
					if len(es) != 1 {
						t.Fatalf("read %d: %d log entries, want 1:%s", i, len(es), describeEntries(es))
					}
					readNodes = append(readNodes, es[0].Node)
				}
				all := proxyEntries(c, mk)
				if nodes := nodesOf(all); len(nodes) < 3 {
					t.Errorf("with enable_cached_server=false the client's statements ran on %v, want all 3 nodes:%s", nodes, describeEntries(all))
				}
				distinct := map[string]bool{}
				for _, n := range readNodes {
					distinct[n] = true
				}
				if len(distinct) < 3 {
					t.Errorf("the %d reads ran on %v only, want all 3 nodes", reads, readNodes)
				}
				for _, e := range all {
					if e.User != obUser || e.Tenant != obTenant {
						t.Errorf("entry #%d ran as %s@%s, want %s@%s", e.Seq, e.User, e.Tenant, obUser, obTenant)
					}
				}
			})
		}
	})
}

// TestOBUserVarBackslashLiteral checks that a user variable holding a
// backslash keeps its value on every node when the client uses
// NO_BACKSLASH_ESCAPES. The server reports the variable as a literal
// written for the session's sql_mode ('a\b' under NO_BACKSLASH_ESCAPES);
// obgate must replay it so that the node reads the same value whatever
// sql_mode that node's session has when it parses the replay.
func TestOBUserVarBackslashLiteral(t *testing.T) {
	testkit.CheckLeaks(t)
	c := startOBSim(t)
	p := startOBProxy(t, c, "netpoll", "enable_cached_server", "false")
	const value = `a\b\\c` // six characters, as written under NO_BACKSLASH_ESCAPES
	cases := []struct {
		name  string
		setup []string
		mode  string // sql_mode the reads run with
	}{
		{"assigned and read under NO_BACKSLASH_ESCAPES", []string{
			"SET sql_mode = 'NO_BACKSLASH_ESCAPES'",
			`SET @b = '` + value + `'`,
		}, "NO_BACKSLASH_ESCAPES"},
		{"assigned under NO_BACKSLASH_ESCAPES, read after it", []string{
			"SET sql_mode = 'NO_BACKSLASH_ESCAPES'",
			`SET @b = '` + value + `'`,
			"SET sql_mode = 'STRICT_TRANS_TABLES'",
		}, "STRICT_TRANS_TABLES"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			resetOBSim(t, c)
			_, conn := obConn(t, p)
			mk := newMarker("bs")
			for i, q := range tc.setup {
				execCtx(t, conn, fmt.Sprintf("%s /* %s-%d */", q, mk, i))
			}
			for i := 100; i < 130; i++ {
				got := rowStrings(t, conn, fmt.Sprintf("SELECT @b, LENGTH(@b), @@sql_mode /* %s-%d */", mk, i))
				if len(got) != 1 || got[0][0] != value || got[0][1] != "6" || got[0][2] != tc.mode {
					t.Fatalf("read %d: got %q, want [%s 6 %s]; obgate replayed:%s", i, got, value, tc.mode, describeEntries(syncEntries(c)))
				}
			}
			if nodes := nodesOf(proxyEntries(c, mk)); len(nodes) < 3 {
				t.Errorf("the reads ran on %v, want all 3 nodes", nodes)
			}
		})
	}
}

// syncEntries returns the proxy statements obgate sent on its own (SET
// replays and COM_INIT_DB).
func syncEntries(c *obsim.Cluster) []obsim.LogEntry {
	var out []obsim.LogEntry
	for _, e := range c.Log() {
		if e.Client == "proxy" && (e.Command == "init_db" || (e.Command == "query" && strings.HasPrefix(e.SQL, "SET @"))) {
			out = append(out, e)
		}
	}
	return out
}
