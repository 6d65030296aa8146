package obsim

import (
	"errors"
	"io"
	"net"
	"net/http"
	"strings"
	"syscall"
	"testing"
	"time"
)

func TestControlEndpoint(t *testing.T) {
	c := testCluster(t)
	cs, err := c.ServeControl("127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	cc := &ControlClient{Addr: cs.Addr()}

	st, err := cc.State()
	if err != nil {
		t.Fatal(err)
	}
	if st.Name != "obtest" || st.ID != 7 || len(st.Nodes) != 3 || len(st.Tenants) != 3 || st.Zones[2].Region != "shanghai" {
		t.Fatalf("state %+v", st)
	}

	// stop / start
	if err := cc.NodeAction("zone2-1", "stop"); err != nil {
		t.Fatal(err)
	}
	if _, err := net.DialTimeout("tcp", c.Node("zone2-1").Addr(), time.Second); !errors.Is(err, syscall.ECONNREFUSED) {
		t.Errorf("after ctl stop: %v", err)
	}
	if err := cc.NodeAction("zone2-1", "start"); err != nil {
		t.Fatal(err)
	}
	if err := openDB(t, c.Node("zone2-1"), "root@test", "", "").Ping(); err != nil {
		t.Errorf("after ctl start: %v", err)
	}

	// hang / slow
	if err := cc.NodeAction("zone3-1", "hang"); err != nil || !c.Node("zone3-1").Hung() {
		t.Errorf("hang: %v", err)
	}
	if err := cc.NodeAction("zone3-1", "hang-sql"); err != nil || !c.Node("zone3-1").SQLHung() {
		t.Fatalf("hang-sql: %v", err)
	}
	if err := cc.NodeAction("zone3-1", "unhang-sql"); err != nil || c.Node("zone3-1").SQLHung() {
		t.Fatalf("unhang-sql: %v", err)
	}
	if err := cc.NodeAction("zone3-1", "unhang"); err != nil || c.Node("zone3-1").Hung() {
		t.Errorf("unhang: %v", err)
	}
	if err := cc.Slow("zone1-1", 20*time.Millisecond); err != nil || c.Node("zone1-1").Delay() != 20*time.Millisecond {
		t.Errorf("slow: %v", err)
	}

	// statuses show up in the views
	inactive, now, null := "INACTIVE", "now", "null"
	if err := cc.SetStatus("zone1-1", StatusChange{Status: &inactive, StopTime: &now, StartServiceTime: &null}); err != nil {
		t.Fatal(err)
	}
	ns := c.Node("zone1-1").State()
	if ns.Status != "INACTIVE" || ns.StopTime == nil || ns.StartServiceTime != nil {
		t.Errorf("node state %+v", ns)
	}
	if err := cc.SetZoneStatus("zone3", "inactive"); err != nil {
		t.Fatal(err)
	}
	cl := proxyro(t, c, "zone2-1")
	servers := mustQuery(t, cl, serverSQL)
	if columnOf(t, servers, 0, "status") != "INACTIVE" || columnOf(t, servers, 0, "stop_time") != "1" || columnOf(t, servers, 0, "start_service_time") != "0" {
		t.Errorf("servers: %v", servers.Rows)
	}
	if z := mustQuery(t, cl, zoneSQL); columnOf(t, z, 2, "status") != "INACTIVE" {
		t.Errorf("zones: %v", z.Rows)
	}

	// leader moves
	if err := cc.MoveLeader("test.accounts", "p0", "zone1-1"); err != nil {
		t.Fatal(err)
	}
	if l, _ := c.Leader("test.accounts", "p0"); l != "zone1-1" {
		t.Errorf("leader %s", l)
	}
	if err := cc.MoveLeader("test.accounts", "p9", "zone1-1"); err == nil || !strings.Contains(err.Error(), "no partition") {
		t.Errorf("bad partition: %v", err)
	}

	// errors and the log
	id, err := cc.InjectError(ErrorRule{Pattern: "select 77", Code: 8002})
	if err != nil || id == 0 {
		t.Fatal(err)
	}
	db := openDB(t, c.Node("zone2-1"), "root@test", "", "")
	if _, err := db.Exec("select 77"); sqlCode(err) != 8002 {
		t.Errorf("injected via ctl: %v", err)
	}
	entries, err := cc.Log("zone2-1", 0, 1)
	if err != nil || len(entries) != 1 || entries[0].Code != 8002 || !entries[0].Injected {
		t.Errorf("log: %+v %v", entries, err)
	}
	since := entries[0].Seq
	if _, err := db.Exec("select 78"); err != nil {
		t.Fatal(err)
	}
	entries, _ = cc.Log("", since, 0)
	if len(entries) != 1 || entries[0].SQL != "select 78" {
		t.Errorf("log since %d: %+v", since, entries)
	}
	if err := cc.Do(http.MethodDelete, "/v1/errors", nil, nil); err != nil || len(c.ErrorRules()) != 0 {
		t.Errorf("clear errors: %v", err)
	}

	// reset
	if err := cc.Reset(); err != nil {
		t.Fatal(err)
	}
	if ns := c.Node("zone1-1").State(); ns.Status != "ACTIVE" || ns.StopTime != nil || ns.Delay != "0s" {
		t.Errorf("after reset %+v", ns)
	}

	// bad requests
	if err := cc.NodeAction("zone9-1", "stop"); err == nil {
		t.Error("unknown node accepted")
	}
	resp, err := http.Post("http://"+cs.Addr()+"/v1/errors", "application/json", strings.NewReader(`{"code": 0}`))
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusBadRequest || !strings.Contains(string(body), "needs a code") {
		t.Errorf("bad rule: %d %s", resp.StatusCode, body)
	}
	if _, err := c.ServeControl("0.0.0.0:0"); err == nil {
		t.Error("control endpoint accepted a non-loopback address")
	}
}
