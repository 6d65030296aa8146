package obsim

import (
	"context"
	"database/sql"
	"fmt"
	"reflect"
	"strconv"
	"testing"
	"time"
)

// testdata/sbtest-topology.json is the cluster a sysbench run can use:
// sbtest.sbtest1..8 HASH(id) over 6 partitions, leaders spread over the
// three zones.

func TestSbtestTopology(t *testing.T) {
	topo, err := LoadTopology("testdata/sbtest-topology.json")
	if err != nil {
		t.Fatal(err)
	}
	c := StartForTest(t, topo)
	if len(c.Tables()) != 8 || len(c.Tables()[7].Partitions) != 6 || c.RemotePlanCost() != time.Millisecond {
		t.Fatalf("tables %+v, cost %v", c.Tables(), c.RemotePlanCost())
	}
	for i := 1; i <= 12; i++ {
		if _, err := c.Admin().Exec(fmt.Sprintf("INSERT INTO sbtest.sbtest1 (id, k, c, pad) VALUES (%d, %d, 'c-%d', 'pad')", i, i%5, i)); err != nil {
			t.Fatal(err)
		}
	}
	const cost = 20 * time.Millisecond
	c.SetRemotePlanCost(cost)
	c.ResetStats()

	dbs := map[string]*sql.DB{}
	for _, n := range c.Nodes() {
		dbs[n.Name()] = openDB(t, n, "root@test", "", "sbtest")
	}
	// A sysbench point select, prepared and as text, for one id of each
	// partition on every node.
	for id := 1; id <= 6; id++ {
		part, err := c.PartitionOf("test.sbtest.sbtest1", map[string]string{"id": strconv.Itoa(id)})
		if err != nil {
			t.Fatal(err)
		}
		leader, err := c.Leader("test.sbtest.sbtest1", part)
		if err != nil {
			t.Fatal(err)
		}
		for _, n := range c.Nodes() {
			for _, form := range []struct {
				command, sql string
				args         []any
			}{
				{"execute", "SELECT c FROM sbtest1 WHERE id=?", []any{id}},
				{"query", "SELECT c FROM sbtest1 WHERE id=" + strconv.Itoa(id), nil},
			} {
				var got string
				begin := time.Now()
				if err := dbs[n.Name()].QueryRow(form.sql, form.args...).Scan(&got); err != nil || got != "c-"+strconv.Itoa(id) {
					t.Fatalf("%s on %s: %q %v", form.sql, n.Name(), got, err)
				}
				took := time.Since(begin)
				e := lastEntry(t, n, form.command)
				local := n.Name() == leader
				if e.Local != local || !reflect.DeepEqual(e.Partitions, []string{part}) || e.Table != "sbtest.sbtest1" {
					t.Errorf("%s id %d on %s (leader %s): %+v", form.command, id, n.Name(), leader, e)
				}
				if !local && (took < cost || e.Duration < cost) {
					t.Errorf("remote %s id %d on %s took %v (entry %v), want >= %v", form.command, id, n.Name(), took, e.Duration, cost)
				}
			}
		}
	}
	// Each node leads two of the six partitions.
	for _, n := range c.Nodes() {
		if st := n.Stats(); st.StatementStats != (StatementStats{Statements: 12, Local: 4, Remote: 8}) {
			t.Errorf("%s stats %+v", n.Name(), st)
		}
	}

	// Weak reads are local on every replica holder, strong DML is not.
	part, _ := c.PartitionOf("test.sbtest.sbtest1", map[string]string{"id": "1"})
	leader, _ := c.Leader("test.sbtest.sbtest1", part)
	var follower *Node
	for _, n := range c.Nodes() {
		if n.Name() != leader {
			follower = n
		}
	}
	db := dbs[follower.Name()]
	var s string
	if err := db.QueryRow("SELECT /*+ READ_CONSISTENCY(WEAK) */ c FROM sbtest1 WHERE id=?", 1).Scan(&s); err != nil {
		t.Fatal(err)
	}
	if e := lastEntry(t, follower, "execute"); !e.Local || !e.Weak {
		t.Errorf("weak hint on a follower: %+v", e)
	}
	conn, err := db.Conn(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if _, err := conn.ExecContext(context.Background(), "SET ob_read_consistency = WEAK"); err != nil {
		t.Fatal(err)
	}
	if err := conn.QueryRowContext(context.Background(), "SELECT c FROM sbtest1 WHERE id=?", 1).Scan(&s); err != nil {
		t.Fatal(err)
	}
	if e := lastEntry(t, follower, "execute"); !e.Local || !e.Weak {
		t.Errorf("weak session on a follower: %+v", e)
	}
	if _, err := conn.ExecContext(context.Background(), "UPDATE sbtest1 SET k=k+1 WHERE id=?", 1); err != nil {
		t.Fatal(err)
	}
	if e := lastEntry(t, follower, "execute"); e.Local || e.Weak {
		t.Errorf("weak session, UPDATE on a follower: %+v", e)
	}

	// A topology may name tables whose data already is in MariaDB: their
	// create (here not even SQL) is not run, and the rows stay.
	again := *topo
	again.Tables = append([]Table(nil), topo.Tables...)
	again.Tables[0].Create = "not SQL: must not run"
	again.Tables[1].Create = ""
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	c2, err := Start(ctx, Config{Topology: &again, MariaDBDSN: c.MariaDB().DSN("root", "", "")})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c2.Close() }) // after the pool below is closed
	leader2, _ := c2.Leader("test.sbtest.sbtest1", part)
	n2 := c2.Node(leader2)
	db2 := openDB(t, n2, "root@test", "", "sbtest")
	if rows := queryStrings(t, db2, "SELECT COUNT(*) FROM sbtest1"); rows[0][0] != "12" {
		t.Errorf("rows after a second start: %v", rows)
	}
	if err := db2.QueryRow("SELECT c FROM sbtest1 WHERE id=?", 1).Scan(&s); err != nil || s != "c-1" {
		t.Fatal(s, err)
	}
	if e := lastEntry(t, n2, "execute"); !e.Local || !reflect.DeepEqual(e.Partitions, []string{part}) {
		t.Errorf("existing table, point select on its leader: %+v", e)
	}
}
