package obsim

import (
	"errors"
	"fmt"
	"net"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"obgate/mysqlproto"
)

func TestStopStart(t *testing.T) {
	c := testCluster(t)
	n := c.Node("zone2-1")
	cl, err := dialOB(t, n.Addr(), obLogin{user: "root@test"})
	if err != nil {
		t.Fatal(err)
	}
	if err := n.Stop(); err != nil {
		t.Fatal(err)
	}
	if _, err := net.DialTimeout("tcp", n.Addr(), time.Second); !errors.Is(err, syscall.ECONNREFUSED) {
		t.Fatalf("dial a stopped node: %v, want connection refused", err)
	}
	if !cl.closed(2 * time.Second) {
		t.Fatal("existing connection survived Stop")
	}
	if n.State().Running {
		t.Error("state says running")
	}
	if err := n.Start(); err != nil {
		t.Fatal(err)
	}
	cl, err = dialOB(t, n.Addr(), obLogin{user: "root@test"})
	if err != nil {
		t.Fatalf("after Start: %v", err)
	}
	if r := cl.query("SELECT 1"); r.err != nil {
		t.Fatal(r.err)
	}
}

func TestHang(t *testing.T) {
	c := testCluster(t)
	n := c.Node("zone3-1")
	cl, err := dialOB(t, n.Addr(), obLogin{user: "root@test"})
	if err != nil {
		t.Fatal(err)
	}
	n.Hang()
	// New connections are accepted but get no handshake.
	raw, err := net.DialTimeout("tcp", n.Addr(), time.Second)
	if err != nil {
		t.Fatalf("connect to a hung node: %v", err)
	}
	defer raw.Close()
	_ = raw.SetReadDeadline(time.Now().Add(300 * time.Millisecond))
	if _, err := raw.Read(make([]byte, 1)); !isTimeout(err) {
		t.Fatalf("hung node answered: %v", err)
	}
	// An existing session stalls.
	done := make(chan obResult, 1)
	go func() { done <- cl.query("SELECT 42") }()
	select {
	case r := <-done:
		t.Fatalf("query answered while hung: %+v", r)
	case <-time.After(300 * time.Millisecond):
	}
	n.Unhang()
	select {
	case r := <-done:
		if r.err != nil || r.rows[0][0] != "42" {
			t.Fatalf("after unhang: %+v", r)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("query still stalled after Unhang")
	}
	_ = raw.SetReadDeadline(time.Now().Add(5 * time.Second))
	if _, err := raw.Read(make([]byte, 1)); err != nil {
		t.Fatalf("no handshake after unhang: %v", err)
	}
}

// TestHangSQL: a node whose SQL hangs still greets and logs clients in,
// but answers no command until UnhangSQL.
func TestHangSQL(t *testing.T) {
	c := testCluster(t)
	n := c.Node("zone3-1")
	before := n.Accepted()
	n.HangSQL()
	cl, err := dialOB(t, n.Addr(), obLogin{user: "root@test"})
	if err != nil {
		t.Fatalf("login to a node whose SQL hangs: %v", err)
	}
	if n.Accepted() != before+1 {
		t.Fatalf("accepted %d connections, want %d", n.Accepted(), before+1)
	}
	done := make(chan obResult, 1)
	go func() { done <- cl.query("SELECT 42") }()
	select {
	case r := <-done:
		t.Fatalf("query answered while the SQL hangs: %+v", r)
	case <-time.After(300 * time.Millisecond):
	}
	if !n.State().SQLHung {
		t.Fatal("state does not say the SQL hangs")
	}
	n.UnhangSQL()
	select {
	case r := <-done:
		if r.err != nil || r.rows[0][0] != "42" {
			t.Fatalf("after UnhangSQL: %+v", r)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("query still stalled after UnhangSQL")
	}
}

func TestSlow(t *testing.T) {
	c := testCluster(t)
	n := c.Node("zone1-1")
	cl, err := dialOB(t, n.Addr(), obLogin{user: "root@test"})
	if err != nil {
		t.Fatal(err)
	}
	n.Slow(150 * time.Millisecond)
	start := time.Now()
	if r := cl.query("SELECT 1"); r.err != nil {
		t.Fatal(r.err)
	}
	if d := time.Since(start); d < 150*time.Millisecond {
		t.Errorf("slow node answered in %v", d)
	}
	n.Slow(0)
}

func TestInjectError(t *testing.T) {
	c := testCluster(t)
	db1 := openDB(t, c.Node("zone1-1"), "root@test", "", "test")
	db2 := openDB(t, c.Node("zone2-1"), "root@test", "", "test")
	id, err := c.InjectError(ErrorRule{Node: "zone1-1", Pattern: `from\s+orders`, Code: 4038, Count: 2})
	if err != nil {
		t.Fatal(err)
	}
	for i := range 3 {
		_, err := db1.Exec("SELECT * FROM orders WHERE id = 1")
		want := uint16(4038)
		if i == 2 {
			want = 0
		}
		if got := sqlCode(err); got != want {
			t.Fatalf("attempt %d: %v, want code %d", i, err, want)
		}
		if i == 0 && err.Error() != "Error 4038 (HY000): Not master" {
			t.Errorf("message %q", err)
		}
	}
	if c.RemoveError(id) {
		t.Error("rule with an exhausted count still listed")
	}
	e := lastEntry(t, c.Node("zone1-1"), "query")
	if e.Result != "ok" {
		t.Errorf("last entry %+v", e)
	}
	// Other nodes are not affected; other statements neither.
	if _, err := c.InjectError(ErrorRule{Node: "zone1-1", Pattern: "customer", Code: 8002}); err != nil {
		t.Fatal(err)
	}
	if _, err := db2.Exec("SELECT customer FROM orders"); err != nil {
		t.Errorf("other node: %v", err)
	}
	if _, err := db1.Exec("SELECT id FROM orders"); err != nil {
		t.Errorf("other statement: %v", err)
	}
	if _, err := db1.Exec("SELECT customer FROM orders"); sqlCode(err) != 8002 {
		t.Errorf("matching statement: %v", err)
	}
	inj := lastEntry(t, c.Node("zone1-1"), "query")
	if !inj.Injected || inj.Code != 8002 {
		t.Errorf("injected entry %+v", inj)
	}
	c.ClearErrors()

	// Every node, a custom message, probability.
	if _, err := c.InjectError(ErrorRule{Pattern: "^select 5150", Code: 5150, Message: "go away"}); err != nil {
		t.Fatal(err)
	}
	if _, err := db2.Exec("select 5150"); err == nil || err.Error() != "Error 5150 (HY000): go away" {
		t.Errorf("all-node rule: %v", err)
	}
	if _, err := c.InjectError(ErrorRule{Pattern: "^select 4013", Code: 4013, Probability: 0.5}); err != nil {
		t.Fatal(err)
	}
	fails := 0
	for range 200 {
		if _, err := db2.Exec("select 4013"); sqlCode(err) == 4013 {
			fails++
		}
	}
	if fails < 40 || fails > 160 {
		t.Errorf("probability 0.5 failed %d of 200", fails)
	}
	// Login rule.
	if _, err := c.InjectError(ErrorRule{Node: "zone3-1", Login: true, Code: 8001, Count: 1}); err != nil {
		t.Fatal(err)
	}
	if err := openDB(t, c.Node("zone3-1"), "root@test", "", "").Ping(); sqlCode(err) != 8001 {
		t.Errorf("login rule: %v", err)
	}
	if err := openDB(t, c.Node("zone3-1"), "root@test", "", "").Ping(); err != nil {
		t.Errorf("after login rule: %v", err)
	}
}

// partitionLeader returns the leader of a partition.
func partitionLeader(t *testing.T, c *Cluster, table, part string) string {
	t.Helper()
	l, err := c.Leader(table, part)
	if err != nil {
		t.Fatal(err)
	}
	return l
}

func TestStatementLogAndPartitionHit(t *testing.T) {
	c := testCluster(t)
	// id 5 is in p1 of test.orders (HASH 4).
	leader := partitionLeader(t, c, "test.orders", "p1")
	follower := "zone1-1"
	if follower == leader {
		follower = "zone2-1"
	}
	for _, tc := range []struct {
		node, sql string
		local     bool
		hit       string // "" when no hit variable is expected
		parts     string
	}{
		{leader, "SELECT * FROM orders WHERE id = 5", true, "1", "[p1]"},
		{follower, "SELECT * FROM orders WHERE id = 5", false, "0", "[p1]"},
		{follower, "SELECT /*+READ_CONSISTENCY(WEAK)*/ * FROM orders WHERE id = 5", true, "1", "[p1]"},
		{follower, "UPDATE orders SET amount = amount + 1 WHERE id = 5", false, "0", "[p1]"},
		{follower, "SELECT * FROM orders", false, "0", "[]"},
		{follower, "SELECT 1", true, "", "[]"},
		{follower, "SELECT * FROM test.plain", follower == "zone2-1", hitValue(follower == "zone2-1"), "[plain]"},
	} {
		cl, err := dialOB(t, c.Node(tc.node).Addr(), obLogin{user: "root@test", db: "test", proxy: true})
		if err != nil {
			t.Fatal(err)
		}
		r := cl.query(tc.sql)
		if r.err != nil {
			t.Fatalf("%s: %v", tc.sql, r.err)
		}
		// The hit variable rides on the OK that ends the result; read it
		// through a statement that returns an OK for result sets too.
		e := lastEntry(t, c.Node(tc.node), "query")
		if e.Local != tc.local || e.Remote() == tc.local || fmt.Sprint(e.Partitions) != tc.parts && tc.parts != "[]" {
			t.Errorf("%s on %s: entry %+v, want local %v parts %s", tc.sql, tc.node, e, tc.local, tc.parts)
		}
		if e.Session != cl.connID || e.Client != "proxy" || e.Database != "test" || e.Protocol != "mysql" || e.Tenant != "test" {
			t.Errorf("entry fields %+v", e)
		}
		if r.columns == nil { // an OK: check the hit variable
			v, found := sessionVar(r.ok.SessionState, mysqlproto.OBPartitionHitVar)
			if found != (tc.hit != "") || v != tc.hit {
				t.Errorf("%s on %s: hit %q (%v), want %q", tc.sql, tc.node, v, found, tc.hit)
			}
		}
	}
	// A DML on a follower still ran: the row changed.
	db := openDB(t, c.Node(leader), "root@test", "", "test")
	if rows := queryStrings(t, db, "SELECT amount FROM orders WHERE id = 5"); rows[0][0] != "51" {
		t.Errorf("amount after remote update: %v", rows)
	}
	if _, err := db.Exec("UPDATE orders SET amount = 50 WHERE id = 5"); err != nil {
		t.Fatal(err)
	}
	// Errors are logged with their code.
	if _, err := db.Exec("SELECT * FROM missing_table"); sqlCode(err) != 1146 {
		t.Fatal(err)
	}
	if e := lastEntry(t, c.Node(leader), "query"); e.Result != "error" || e.Code != 1146 {
		t.Errorf("error entry %+v", e)
	}
	// The hit variable also comes with the OK that ends a result set
	// when the client uses DEPRECATE_EOF.
	cl, err := dialOB(t, c.Node(follower).Addr(), obLogin{user: "root@test", db: "test",
		caps: mysqlproto.DefaultClientCapability | mysqlproto.ClientDeprecateEOF})
	if err != nil {
		t.Fatal(err)
	}
	cl.pio.ResetSequence()
	if err := cl.pio.WritePacketFlush(append([]byte{byte(mysqlproto.ComQuery)}, "SELECT id FROM orders WHERE id = 5"...)); err != nil {
		t.Fatal(err)
	}
	var last []byte
	for range 4 { // column count, column, row, OK
		last = cl.read()
	}
	ok, good := mysqlproto.ParseOK(last, cl.caps)
	if v, found := sessionVar(ok.SessionState, mysqlproto.OBPartitionHitVar); !good || last[0] != mysqlproto.EOFHeader || !found || v != "0" {
		t.Errorf("result-set OK %x: hit %q %v", last, v, found)
	}
	// The merged cluster log is ordered and bounded per node.
	all := c.Log()
	for i := 1; i < len(all); i++ {
		if all[i].Seq <= all[i-1].Seq {
			t.Fatal("cluster log out of order")
		}
	}
}

func TestStatementLogRing(t *testing.T) {
	var seq atomic.Uint64
	l := newStmtLog(3, &seq)
	for i := range 5 {
		l.add(LogEntry{SQL: fmt.Sprint(i)})
	}
	got := l.entries()
	if len(got) != 3 || got[0].SQL != "2" || got[2].SQL != "4" {
		t.Errorf("ring: %+v", got)
	}
	l.add(LogEntry{SQL: string(make([]byte, MaxLogSQL+10))})
	if e := l.entries(); len(e[2].SQL) != MaxLogSQL {
		t.Errorf("SQL not truncated: %d", len(e[2].SQL))
	}
	l.clear()
	if len(l.entries()) != 0 {
		t.Error("clear")
	}
}

func TestKill(t *testing.T) {
	c := testCluster(t)
	victim, err := dialOB(t, c.Node("zone2-1").Addr(), obLogin{user: "root@test"})
	if err != nil {
		t.Fatal(err)
	}
	killer, err := dialOB(t, c.Node("zone1-1").Addr(), obLogin{user: "root@test"})
	if err != nil {
		t.Fatal(err)
	}
	// KILL QUERY interrupts a running statement of another session.
	done := make(chan obResult, 1)
	go func() { done <- victim.query("SELECT SLEEP(20)") }()
	waitRunning(t, c, "SELECT SLEEP(20)")
	if r := killer.query(fmt.Sprintf("KILL QUERY %d", victim.connID)); r.err != nil {
		t.Fatal(r.err)
	}
	select {
	case r := <-done:
		if r.err == nil && r.rows[0][0] != "1" {
			t.Errorf("killed sleep returned %+v", r)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("KILL QUERY did not interrupt")
	}
	if r := killer.query(fmt.Sprintf("KILL %d", victim.connID)); r.err != nil {
		t.Fatal(r.err)
	}
	if !victim.closed(2 * time.Second) {
		t.Error("killed session still open")
	}
	if r := killer.query("KILL 12345"); r.err == nil || r.err.Code != mysqlproto.ERNoSuchThread {
		t.Errorf("unknown id: %+v", r.err)
	}
}
