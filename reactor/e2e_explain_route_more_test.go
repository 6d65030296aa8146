package reactor_test

import (
	"database/sql"
	"fmt"
	"strings"
	"testing"

	"obgate/internal/testkit"
	"obgate/tools/obsim"

	"github.com/go-sql-driver/mysql"
)

// More EXPLAIN ROUTE cases (admin/explain.go prints the router's account,
// route.Explain): weak reads, LDC classes, an unpartitioned table and a
// partitioned one whose partition the statement does not tell. They run
// obgate in front of the partition cluster (partTopology: zone1 idc1 r1,
// zone2 idc2 r1, zone3 idc3 r2, every table replicated on every zone) and
// assert the lines that prove each case, not the whole text.

// explainSteps runs EXPLAIN ROUTE q on conn and returns its (step, detail)
// rows by step; candidates are "candidate 1", "candidate 2", ...
func explainSteps(t *testing.T, conn *sql.Conn, q string) map[string]string {
	t.Helper()
	out := map[string]string{}
	for _, row := range rowStrings(t, conn, "EXPLAIN ROUTE "+q) {
		if prev, dup := out[row[0]]; dup {
			out[row[0]] = prev + "\n" + row[1] // notes may repeat
			continue
		}
		out[row[0]] = row[1]
	}
	return out
}

// explainText renders steps for failure messages.
func explainText(steps map[string]string) string {
	var sb strings.Builder
	for _, k := range []string{"statement", "table", "partition", "policy"} {
		if v, ok := steps[k]; ok {
			fmt.Fprintf(&sb, "\n    %s: %s", k, v)
		}
	}
	for i := 1; ; i++ {
		v, ok := steps[fmt.Sprintf("candidate %d", i)]
		if !ok {
			break
		}
		fmt.Fprintf(&sb, "\n    candidate %d: %s", i, v)
	}
	for _, k := range []string{"note", "used"} {
		if v, ok := steps[k]; ok {
			fmt.Fprintf(&sb, "\n    %s: %s", k, v)
		}
	}
	return sb.String()
}

// explainCandidates returns the candidate lines in order.
func explainCandidates(steps map[string]string) []string {
	var out []string
	for i := 1; ; i++ {
		v, ok := steps[fmt.Sprintf("candidate %d", i)]
		if !ok {
			return out
		}
		out = append(out, v)
	}
}

// partitionLeader returns the node leading partition part of table in c.
func partitionLeader(t *testing.T, c *obsim.Cluster, table string, part int) string {
	t.Helper()
	for _, ti := range c.Tables() {
		if ti.Name == table {
			return ti.Partitions[part].Leader
		}
	}
	t.Fatalf("cluster has no table %s", table)
	return ""
}

// wantCandidate checks that line (a candidate's detail) is addr's and
// contains every part.
func wantCandidate(t *testing.T, steps map[string]string, i int, addr string, parts ...string) {
	t.Helper()
	line := steps[fmt.Sprintf("candidate %d", i)]
	if !strings.HasPrefix(line, addr+" ") {
		t.Errorf("candidate %d is %q, want %s:%s", i, line, addr, explainText(steps))
		return
	}
	for _, p := range parts {
		if !strings.Contains(line, p) {
			t.Errorf("candidate %d (%s) lacks %q:%s", i, addr, p, explainText(steps))
		}
	}
}

// TestOBExplainRouteWeakRead explains a point read of a partition whose
// leader is not in the proxy's IDC (proxy_idc_name=idc1): strong, the
// leader is candidate 1 ("partition leader of a strong statement");
// weak, by the hint /*+ READ_CONSISTENCY(WEAK) */ or by the session's
// ob_read_consistency=WEAK, the output says "weak read" and lists the
// replicas in the weak policy's order (MERGE_IDC_ORDER: the SAME_IDC
// replica, then SAME_REGION, then OTHER_REGION, the leader only by its
// class) and uses the first; the weak read then runs there, weakly. A
// STRONG hint, and a locking read, stay strong in a weak session. It
// proves EXPLAIN ROUTE tells weak from strong reads the way routing does,
// and shows the weak order.
func TestOBExplainRouteWeakRead(t *testing.T) {
	maria(t)
	testkit.CheckLeaks(t)
	c := startPartOBSim(t, false)
	p := startOBProxy(t, c, ioModes[0], "proxy_idc_name", "idc1")
	_, conn := obConn(t, p, func(cfg *mysql.Config) { cfg.DBName = partDB })
	id := -1
	for i := range 4 { // h_orders: HASH(id) over 4 partitions
		if partitionLeader(t, c, "h_orders", i) != "zone1-1" {
			id = i
			break
		}
	}
	if id < 0 {
		t.Fatal("every h_orders partition is led from zone1; the test proves nothing")
	}
	leader := nodeAddr(c, partitionLeader(t, c, "h_orders", id))
	z1, z2, z3 := nodeAddr(c, "zone1-1"), nodeAddr(c, "zone2-1"), nodeAddr(c, "zone3-1")
	point := fmt.Sprintf("v FROM h_orders WHERE id = %d", id)
	execCtx(t, conn, "SELECT "+point) // the table's location is cached

	strong := func(what, q string) {
		t.Helper()
		steps := explainSteps(t, conn, q)
		if !strings.HasPrefix(steps["policy"], "strong read, ") {
			t.Errorf("%s: policy %q, want a strong read:%s", what, steps["policy"], explainText(steps))
		}
		wantCandidate(t, steps, 1, leader, " leader, ", "partition leader of a strong statement: first")
		if steps["used"] != leader {
			t.Errorf("%s: used %q, want the leader %s", what, steps["used"], leader)
		}
	}
	weak := func(what, q, consistency string) {
		t.Helper()
		steps := explainSteps(t, conn, q)
		if !strings.Contains(steps["statement"], "read_consistency="+consistency) {
			t.Errorf("%s: statement %q, want read_consistency=%s", what, steps["statement"], consistency)
		}
		if want := "weak read, route policy MERGE_IDC_ORDER, LDC on, proxy IDC idc1"; steps["policy"] != want {
			t.Errorf("%s: policy %q, want %q:%s", what, steps["policy"], want, explainText(steps))
		}
		wantCandidate(t, steps, 1, z1, "zone=zone1 idc=idc1 region=r1", " SAME_IDC ", "MERGE_IDC_ORDER class 1 of its order (SAME_IDC")
		wantCandidate(t, steps, 2, z2, "zone=zone2 idc=idc2 region=r1", " SAME_REGION ", "MERGE_IDC_ORDER class 2 of its order (SAME_REGION")
		wantCandidate(t, steps, 3, z3, "zone=zone3 idc=idc3 region=r2", " OTHER_REGION ", "MERGE_IDC_ORDER class 5 of its order (OTHER_REGION")
		if n := len(explainCandidates(steps)); n != 3 {
			t.Errorf("%s: %d candidates, want the 3 replicas:%s", what, n, explainText(steps))
		}
		if strings.Contains(explainText(steps), "partition leader of a strong statement") {
			t.Errorf("%s: a weak read puts the leader first:%s", what, explainText(steps))
		}
		if steps["used"] != z1 {
			t.Errorf("%s: used %q, want the same-IDC replica %s", what, steps["used"], z1)
		}
		mk := newMarker("exweak")
		execCtx(t, conn, fmt.Sprintf("%s /* %s */", q, mk))
		if e := entryFor(t, c, mk); e.Node != "zone1-1" || !e.Weak {
			t.Errorf("%s ran on %s (weak %v), not weakly where EXPLAIN ROUTE said (zone1-1)", what, e.Node, e.Weak)
		}
	}

	strong("plain read", "SELECT "+point)
	weak("READ_CONSISTENCY(WEAK) hint", "SELECT /*+ READ_CONSISTENCY(WEAK) */ "+point, "WEAK")
	execCtx(t, conn, "SET ob_read_consistency = 'WEAK'")
	weak("ob_read_consistency=WEAK", "SELECT "+point, "DEFAULT")
	strong("READ_CONSISTENCY(STRONG) hint in a weak session", "SELECT /*+ READ_CONSISTENCY(STRONG) */ "+point)
	strong("locking read in a weak session", "SELECT "+point+" FOR UPDATE")
	execCtx(t, conn, "SET ob_read_consistency = 'STRONG'")
	strong("plain read after ob_read_consistency=STRONG", "SELECT "+point)
}

// TestOBExplainRouteLDCClasses explains statements with proxy_idc_name
// set and zones with IDCs and regions: each candidate line shows its
// zone, IDC, region and LDC class from the proxy's point of view, and the
// order follows the classes. With idc1: zone1 SAME_IDC, zone2 SAME_REGION
// (r1), zone3 OTHER_REGION, for a statement without a table (in that
// order) and for a strong point read (the leader first, then its
// followers by class); the session's @proxy_idc_name = 'idc3' makes zone3
// SAME_IDC and both r1 zones OTHER_REGION; an IDC no zone has turns LDC
// off, and so does a proxy without proxy_idc_name, where every server is
// SAME_IDC. It proves the classes EXPLAIN ROUTE prints are the IDC
// matching the router does.
func TestOBExplainRouteLDCClasses(t *testing.T) {
	maria(t)
	testkit.CheckLeaks(t)
	c := startPartOBSim(t, false)
	p := startOBProxy(t, c, ioModes[0], "proxy_idc_name", "idc1")
	_, conn := obConn(t, p, func(cfg *mysql.Config) { cfg.DBName = partDB })
	z1, z2, z3 := nodeAddr(c, "zone1-1"), nodeAddr(c, "zone2-1"), nodeAddr(c, "zone3-1")

	steps := explainSteps(t, conn, "SELECT 1")
	if want := "strong read, route policy MERGE_IDC_ORDER, LDC on, proxy IDC idc1"; steps["policy"] != want {
		t.Errorf("SELECT 1: policy %q, want %q", steps["policy"], want)
	}
	wantCandidate(t, steps, 1, z1, "zone=zone1 idc=idc1 region=r1 type=ReadWrite SAME_IDC server")
	wantCandidate(t, steps, 2, z2, "zone=zone2 idc=idc2 region=r1 type=ReadWrite SAME_REGION server")
	wantCandidate(t, steps, 3, z3, "zone=zone3 idc=idc3 region=r2 type=ReadWrite OTHER_REGION server")

	// h_orders id 1 is partition 1; its leader goes first whatever its
	// class, the followers by class.
	leaderNode := partitionLeader(t, c, "h_orders", 1)
	execCtx(t, conn, "SELECT v FROM h_orders WHERE id = 1")
	steps = explainSteps(t, conn, "SELECT v FROM h_orders WHERE id = 1")
	class := map[string]string{"zone1-1": "SAME_IDC", "zone2-1": "SAME_REGION", "zone3-1": "OTHER_REGION"}
	wantCandidate(t, steps, 1, nodeAddr(c, leaderNode), " "+class[leaderNode]+" leader, ")
	i := 2
	for _, n := range []string{"zone1-1", "zone2-1", "zone3-1"} {
		if n == leaderNode {
			continue
		}
		wantCandidate(t, steps, i, nodeAddr(c, n), " "+class[n]+" follower, ", "then "+class[n]+" read-write replica")
		i++
	}

	execCtx(t, conn, "SET @proxy_idc_name = 'idc3'")
	steps = explainSteps(t, conn, "SELECT 1")
	if !strings.HasSuffix(steps["policy"], "LDC on, proxy IDC idc3") {
		t.Errorf("@proxy_idc_name = 'idc3': policy %q", steps["policy"])
	}
	wantCandidate(t, steps, 1, z3, "zone=zone3 idc=idc3 region=r2 type=ReadWrite SAME_IDC server")
	others := explainCandidates(steps)[1:]
	if len(others) != 2 {
		t.Fatalf("@proxy_idc_name = 'idc3': %d candidates, want 3:%s", len(others)+1, explainText(steps))
	}
	for _, line := range others {
		if !strings.Contains(line, " OTHER_REGION server") || !(strings.HasPrefix(line, z1+" ") || strings.HasPrefix(line, z2+" ")) {
			t.Errorf("@proxy_idc_name = 'idc3': candidate %q, want zone1 or zone2 as OTHER_REGION:%s", line, explainText(steps))
		}
	}

	offCheck := func(what string, conn *sql.Conn) {
		t.Helper()
		steps := explainSteps(t, conn, "SELECT 1")
		if !strings.HasSuffix(steps["policy"], "LDC off") {
			t.Errorf("%s: policy %q, want LDC off", what, steps["policy"])
		}
		cands := explainCandidates(steps)
		if len(cands) != 3 {
			t.Errorf("%s: %d candidates, want 3:%s", what, len(cands), explainText(steps))
		}
		for _, line := range cands {
			if !strings.Contains(line, " SAME_IDC server") {
				t.Errorf("%s: candidate %q, want SAME_IDC (every server, LDC off):%s", what, line, explainText(steps))
			}
		}
	}
	execCtx(t, conn, "SET @proxy_idc_name = 'nowhere'")
	offCheck("@proxy_idc_name of no zone", conn)
	_, plain := obConn(t, startOBProxy(t, c, ioModes[0]), func(cfg *mysql.Config) { cfg.DBName = partDB })
	offCheck("no proxy_idc_name", plain)
}

// TestOBExplainRouteTables explains statements on an unpartitioned table
// and on a partitioned table whose partition the statement does not give.
// The unpartitioned table (plain, led from zone2): one partition, "not
// partitioned", its leader first and used. The partitioned table
// (h_orders, HASH(id) over 4): no key in the WHERE ("no key in WHERE",
// also without a WHERE) or several keys ("several partitions" with the
// keys it found) leave the partition unknown, so the candidates are the
// servers holding the table's partitions ("partition holder"), none of
// them a leader put first; a table the cluster does not list says so in a
// note and goes by the tenant's servers. It proves EXPLAIN ROUTE says why
// it could, or could not, pick a partition.
func TestOBExplainRouteTables(t *testing.T) {
	maria(t)
	testkit.CheckLeaks(t)
	c := startPartOBSim(t, false)
	p := startOBProxy(t, c, ioModes[0])
	_, conn := obConn(t, p, func(cfg *mysql.Config) { cfg.DBName = partDB })
	execCtx(t, conn, "SELECT v FROM plain WHERE id = 5")
	execCtx(t, conn, "SELECT v FROM h_orders WHERE id = 5")

	steps := explainSteps(t, conn, "SELECT v FROM plain WHERE id = 5")
	if !strings.HasPrefix(steps["table"], "obpart.plain entry=AVAIL ") || !strings.HasSuffix(steps["table"], " partitions=1") {
		t.Errorf("unpartitioned table: table %q, want obpart.plain, AVAIL, 1 partition", steps["table"])
	}
	if !strings.HasSuffix(steps["partition"], "not partitioned") {
		t.Errorf("unpartitioned table: partition %q, want not partitioned", steps["partition"])
	}
	leader := nodeAddr(c, partitionLeader(t, c, "plain", 0))
	wantCandidate(t, steps, 1, leader, " leader, ", "partition leader of a strong statement: first")
	if steps["used"] != leader {
		t.Errorf("unpartitioned table: used %q, want its leader %s:%s", steps["used"], leader, explainText(steps))
	}

	for _, tc := range []struct{ q, partition string }{
		{"SELECT v FROM h_orders WHERE v = 'x'", "no key in WHERE"},
		{"SELECT v FROM h_orders", "no key in WHERE"},
		{"SELECT v FROM h_orders WHERE id IN (1, 2)", "several partitions keys: id IN (1,2)"},
	} {
		steps := explainSteps(t, conn, tc.q)
		if !strings.HasSuffix(steps["table"], " partitions=4") {
			t.Errorf("%s: table %q, want 4 partitions", tc.q, steps["table"])
		}
		if steps["partition"] != tc.partition {
			t.Errorf("%s: partition %q, want %q:%s", tc.q, steps["partition"], tc.partition, explainText(steps))
		}
		cands := explainCandidates(steps)
		if len(cands) != 3 {
			t.Errorf("%s: %d candidates, want the 3 servers holding partitions:%s", tc.q, len(cands), explainText(steps))
		}
		for _, line := range cands {
			if !strings.Contains(line, " partition holder, ") || strings.Contains(line, "partition leader of a strong statement") {
				t.Errorf("%s: candidate %q, want a partition holder (the partition is unknown):%s", tc.q, line, explainText(steps))
			}
		}
		if steps["used"] == "" || strings.HasPrefix(steps["used"], "none") {
			t.Errorf("%s: used %q", tc.q, steps["used"])
		}
	}

	steps = explainSteps(t, conn, "SELECT v FROM nosuch WHERE id = 1")
	if !strings.Contains(steps["note"], "the cluster does not list this table: tenant server list") {
		t.Errorf("unlisted table: notes %q:%s", steps["note"], explainText(steps))
	}
	if _, ok := steps["partition"]; ok {
		t.Errorf("unlisted table: a partition line %q", steps["partition"])
	}
	for _, line := range explainCandidates(steps) {
		if !strings.Contains(line, " server, ") {
			t.Errorf("unlisted table: candidate %q, want a tenant server:%s", line, explainText(steps))
		}
	}
}
