package obsim

import (
	"database/sql"
	"strings"
	"testing"
	"time"

	"github.com/go-sql-driver/mysql"
)

// In testdata/topology.json test.orders is HASH(id) over 4 partitions with
// leaders p0 zone1-1, p1 zone2-1, p2 zone3-1, p3 zone1-1: id 1 and 5 are
// in p1.

func TestRemotePlanCost(t *testing.T) {
	c := testCluster(t)
	if got := c.RemotePlanCost(); got != time.Millisecond {
		t.Fatalf("default remote plan cost %v", got)
	}
	const cost = 40 * time.Millisecond
	c.SetRemotePlanCost(cost)
	remote, leader := c.Node("zone1-1"), c.Node("zone2-1")
	rdb := openDB(t, remote, "root@test", "", "test")
	ldb := openDB(t, leader, "root@test", "", "test")
	var customer string

	timed := func(db *sql.DB, q string, args ...any) time.Duration {
		t.Helper()
		begin := time.Now()
		if err := db.QueryRow(q, args...).Scan(&customer); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
		return time.Since(begin)
	}
	// Text and prepared forms, remote: one cost each, in the reply time and
	// the entry's duration.
	if d := timed(rdb, "SELECT customer FROM orders WHERE id = 1"); d < cost {
		t.Errorf("remote query took %v < %v", d, cost)
	}
	if e := lastEntry(t, remote, "query"); e.Local || e.Duration < cost {
		t.Errorf("remote query entry %+v", e)
	}
	if d := timed(rdb, "SELECT customer FROM orders WHERE id = ?", 1); d < cost {
		t.Errorf("remote execute took %v < %v", d, cost)
	}
	if e := lastEntry(t, remote, "execute"); e.Local || e.Duration < cost {
		t.Errorf("remote execute entry %+v", e)
	}
	// Local statements run as before.
	timed(ldb, "SELECT customer FROM orders WHERE id = 1")
	if e := lastEntry(t, leader, "query"); !e.Local {
		t.Errorf("local query entry %+v", e)
	}

	// A multi-statement query pays for each remote statement.
	cfg := mysql.NewConfig()
	cfg.User, cfg.Net, cfg.Addr, cfg.DBName, cfg.MultiStatements = "root@test", "tcp", remote.Addr(), "test", true
	connector, err := mysql.NewConnector(cfg)
	if err != nil {
		t.Fatal(err)
	}
	multi := sql.OpenDB(connector)
	defer multi.Close()
	begin := time.Now()
	rows, err := multi.Query("SELECT customer FROM orders WHERE id = 1; SELECT 1; SELECT customer FROM orders WHERE id = 5")
	if err != nil {
		t.Fatal(err)
	}
	sets := 0
	for {
		for rows.Next() {
		}
		sets++
		if !rows.NextResultSet() {
			break
		}
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	rows.Close()
	if d := time.Since(begin); sets != 3 || d < 2*cost {
		t.Errorf("multi-statement query: %d result sets in %v, want 3 in >= %v", sets, d, 2*cost)
	}

	// 0 turns the cost off; Reset restores the topology's.
	c.SetRemotePlanCost(0)
	if c.RemotePlanCost() != 0 {
		t.Error("cost not off")
	}
	timed(rdb, "SELECT customer FROM orders WHERE id = 1")
	c.SetRemotePlanCost(-time.Second)
	if c.RemotePlanCost() != 0 {
		t.Errorf("negative cost kept: %v", c.RemotePlanCost())
	}
	if err := c.Reset(); err != nil {
		t.Fatal(err)
	}
	if c.RemotePlanCost() != time.Millisecond {
		t.Errorf("after Reset: %v", c.RemotePlanCost())
	}
}

// A session sleeping out a remote-plan cost ends when its node stops.
func TestRemotePlanCostInterrupted(t *testing.T) {
	c := testCluster(t)
	c.SetRemotePlanCost(time.Hour)
	n := c.Node("zone1-1")
	db := openDB(t, n, "root@test", "", "test")
	errc := make(chan error, 1)
	go func() {
		var s string
		errc <- db.QueryRow("SELECT customer FROM orders WHERE id = 1 /* sleeper */").Scan(&s)
	}()
	watch := openDB(t, c.Node("zone2-1"), "root@test", "", "")
	for i := 0; ; i++ {
		if i == 500 {
			t.Fatal("the statement never started")
		}
		found := false
		for _, row := range queryStrings(t, watch, "SHOW FULL PROCESSLIST") {
			if strings.Contains(row[len(row)-3], "sleeper") {
				found = true
			}
		}
		if found {
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	if err := n.Stop(); err != nil {
		t.Fatal(err)
	}
	if err := <-errc; err == nil {
		t.Error("the statement succeeded on a stopped node")
	}
}

func TestRemotePlanCostTopology(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want time.Duration
		bad  bool
	}{
		{"", time.Millisecond, false},
		{"0", 0, false},
		{"250us", 250 * time.Microsecond, false},
		{"2ms", 2 * time.Millisecond, false},
		{"-1ms", 0, true},
		{"soon", 0, true},
	} {
		topo := &Topology{Cluster: "c", Zones: []Zone{{Name: "z1"}}, RemotePlanCost: tc.in}
		n, err := topo.normalize()
		if tc.bad {
			if err == nil {
				t.Errorf("%q accepted", tc.in)
			}
			continue
		}
		if err != nil {
			t.Errorf("%q: %v", tc.in, err)
			continue
		}
		if d, err := parseRemotePlanCost(n.RemotePlanCost); err != nil || d != tc.want {
			t.Errorf("%q: normalized to %q = %v (%v), want %v", tc.in, n.RemotePlanCost, d, err, tc.want)
		}
	}
	if _, err := ParseTopology([]byte(`{"cluster":"c","remote_plan_cost":"3ms","zones":[{"name":"z"}]}`)); err != nil {
		t.Error(err)
	}
}

func TestRemotePlanCostControl(t *testing.T) {
	c := testCluster(t)
	cs, err := c.ServeControl("127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	cc := &ControlClient{Addr: cs.Addr()}
	if d, err := cc.RemotePlanCost(); err != nil || d != time.Millisecond {
		t.Errorf("GET: %v %v", d, err)
	}
	if err := cc.SetRemotePlanCost(7 * time.Millisecond); err != nil || c.RemotePlanCost() != 7*time.Millisecond {
		t.Errorf("POST: %v, cost %v", err, c.RemotePlanCost())
	}
	var out map[string]string
	if err := cc.Do("POST", "/v1/remote-plan-cost", map[string]string{"cost": "0"}, &out); err != nil || out["cost"] != "0s" || c.RemotePlanCost() != 0 {
		t.Errorf("POST 0: %v %v", out, err)
	}
	for _, body := range []any{map[string]string{"cost": "fast"}, map[string]string{"cost": "-2ms"}, map[string]string{}} {
		if err := cc.Do("POST", "/v1/remote-plan-cost", body, nil); err == nil {
			t.Errorf("%v accepted", body)
		}
	}
}
