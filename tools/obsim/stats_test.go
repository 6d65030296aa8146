package obsim

import (
	"database/sql"
	"testing"

	"github.com/go-sql-driver/mysql"
)

// test.orders: id 1 and 5 in p1 (leader zone2-1), id 4 in p0 (zone1-1).

func TestStats(t *testing.T) {
	c := testCluster(t)
	c.ResetStats()
	n := c.Node("zone1-1")
	db := openDB(t, n, "root@test", "", "test")
	for _, q := range []string{
		"SELECT customer FROM orders WHERE id = 1",                               // remote
		"SELECT customer FROM orders WHERE id = 4",                               // local
		"SELECT /*+ READ_CONSISTENCY(WEAK) */ customer FROM orders WHERE id = 1", // local, weak
		"SELECT 1", // local, no table
	} {
		queryStrings(t, db, q)
	}
	queryStrings(t, db, "SELECT customer FROM orders WHERE id = ?", 5) // execute: remote
	// Each statement of a multi-statement query counts.
	cfg := mysql.NewConfig()
	cfg.User, cfg.Net, cfg.Addr, cfg.DBName, cfg.MultiStatements = "root@test", "tcp", n.Addr(), "test", true
	connector, err := mysql.NewConnector(cfg)
	if err != nil {
		t.Fatal(err)
	}
	multi := sql.OpenDB(connector)
	defer multi.Close()
	if _, err := multi.Exec("UPDATE orders SET amount = amount WHERE id = 4; UPDATE orders SET amount = amount WHERE id = 1"); err != nil {
		t.Fatal(err)
	}
	// Injected errors do not count.
	if _, err := c.InjectError(ErrorRule{Pattern: "id = 2", Code: 4012, Count: 1}); err != nil {
		t.Fatal(err)
	}
	if _, err := db.Exec("SELECT customer FROM orders WHERE id = 2"); sqlCode(err) != 4012 {
		t.Fatalf("injected: %v", err)
	}
	// A proxied session on the leader of p1.
	ob, err := dialOB(t, c.Node("zone2-1").Addr(), obLogin{user: "root@test", db: "test", proxy: true})
	if err != nil {
		t.Fatal(err)
	}
	if r := ob.query("SELECT customer FROM orders WHERE id = 1"); r.err != nil {
		t.Fatal(r.err)
	}

	want := StatementStats{Statements: 7, Local: 4, Remote: 3, Weak: 1}
	got := n.Stats()
	if got.StatementStats != want || got.Direct != want || got.Proxy != (StatementStats{}) {
		t.Errorf("zone1-1 stats %+v, want %+v (direct)", got, want)
	}
	proxied := StatementStats{Statements: 1, Local: 1}
	if got := c.Node("zone2-1").Stats(); got.StatementStats != proxied || got.Proxy != proxied || got.Direct != (StatementStats{}) {
		t.Errorf("zone2-1 stats %+v", got)
	}
	all := c.Stats()
	total := StatementStats{Statements: 8, Local: 5, Remote: 3, Weak: 1}
	if len(all.Nodes) != 3 || all.Nodes["zone1-1"] != got || all.Total.StatementStats != total ||
		all.Total.Proxy != proxied || all.Total.Direct != want || all.Nodes["zone3-1"] != (NodeStats{}) {
		t.Errorf("cluster stats %+v", all)
	}

	// Over the control endpoint.
	cs, err := c.ServeControl("127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	cc := &ControlClient{Addr: cs.Addr()}
	var raw struct {
		Nodes map[string]map[string]any
		Total map[string]any
	}
	if err := cc.Do("GET", "/v1/stats", nil, &raw); err != nil {
		t.Fatal(err)
	}
	if z := raw.Nodes["zone1-1"]; z["statements"] != 7.0 || z["local"] != 4.0 || z["remote"] != 3.0 || z["weak"] != 1.0 || raw.Total["statements"] != 8.0 {
		t.Errorf("GET /v1/stats: %v", raw)
	}
	if err := cc.ResetStats(); err != nil {
		t.Fatal(err)
	}
	if st, err := cc.Stats(); err != nil || st.Total != (NodeStats{}) || len(st.Nodes) != 3 {
		t.Errorf("after DELETE /v1/stats: %+v %v", st, err)
	}
}

// BenchmarkStatementCounters is what counting adds to a statement when
// every session of a node counts at once.
func BenchmarkStatementCounters(b *testing.B) {
	var ctr stmtCounters
	b.RunParallel(func(pb *testing.PB) {
		i := 0
		for pb.Next() {
			ctr.count(i%3 != 0, i%5 == 0)
			i++
		}
	})
}
