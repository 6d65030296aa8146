package main

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"obgate/tools/obsim"
)

func TestCtlVerbs(t *testing.T) {
	zones, err := obsim.ParseZonesFlag("z1:r1:i1,z2:r2:i2:ReadWrite:1")
	if err != nil {
		t.Fatal(err)
	}
	topo := &obsim.Topology{Cluster: "cli", Zones: zones, Tenants: obsim.ParseTenantsFlag("t1:z1")}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	c, err := obsim.Start(ctx, obsim.Config{Topology: topo})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	cs, err := c.ServeControl("127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()

	run := func(args ...string) string {
		t.Helper()
		var out bytes.Buffer
		if err := ctl(append([]string{"--addr", cs.Addr()}, args...), &out); err != nil {
			t.Fatalf("ctl %v: %v", args, err)
		}
		return out.String()
	}
	if out := run("help"); !strings.Contains(out, "leader TABLE PARTITION NODE") {
		t.Errorf("help: %s", out)
	}
	var st obsim.ClusterState
	if err := json.Unmarshal([]byte(run("state")), &st); err != nil || st.Name != "cli" || len(st.Nodes) != 2 {
		t.Fatalf("state: %+v %v", st, err)
	}
	run("stop", "z2-1")
	if c.Node("z2-1").Running() {
		t.Error("stop did not stop")
	}
	if out := run("nodes"); !strings.Contains(out, "z2-1") || !strings.Contains(out, "false") {
		t.Errorf("nodes: %s", out)
	}
	run("start", "z2-1")
	run("hang", "z1-1")
	if !c.Node("z1-1").Hung() {
		t.Error("hang")
	}
	run("unhang", "z1-1")
	run("slow", "z1-1", "5ms")
	run("status", "z1-1", "inactive")
	run("stop-time", "z1-1", "now")
	run("start-service-time", "z1-1", "null")
	run("zone-status", "z2", "INACTIVE")
	ns := c.Node("z1-1").State()
	if ns.Status != "INACTIVE" || ns.StopTime == nil || ns.StartServiceTime != nil || ns.Delay != "5ms" {
		t.Errorf("node state %+v", ns)
	}
	if out := run("error", "-node", "z1-1", "-count", "1", "4038", "select 1"); !strings.Contains(out, "error rule 1 added") {
		t.Errorf("error: %s", out)
	}
	if out := run("errors"); !strings.Contains(out, `"code": 4038`) {
		t.Errorf("errors: %s", out)
	}
	run("clear-errors")
	if out := run("remote-plan-cost", "3ms"); !strings.Contains(out, "remote plan cost: 3ms") || c.RemotePlanCost() != 3*time.Millisecond {
		t.Errorf("remote-plan-cost 3ms: %s", out)
	}
	if out := run("remote-plan-cost", "0"); !strings.Contains(out, "remote plan cost: 0s") || c.RemotePlanCost() != 0 {
		t.Errorf("remote-plan-cost 0: %s", out)
	}
	if out := run("stats"); !strings.Contains(out, "STATEMENTS") || !strings.Contains(out, "total") || !strings.Contains(out, "z2-1") {
		t.Errorf("stats: %s", out)
	}
	var stats obsim.Stats
	if err := json.Unmarshal([]byte(run("stats", "-json")), &stats); err != nil || len(stats.Nodes) != 2 {
		t.Errorf("stats -json: %+v %v", stats, err)
	}
	run("clear-stats")
	run("reset")
	if out := run("remote-plan-cost"); !strings.Contains(out, "remote plan cost: 1ms") {
		t.Errorf("remote-plan-cost after reset: %s", out)
	}
	if out := run("log", "-n", "5"); !strings.Contains(out, "TIME") {
		t.Errorf("log: %s", out)
	}
	if out := run("tables"); !strings.Contains(out, "TABLE") {
		t.Errorf("tables: %s", out)
	}
	var out bytes.Buffer
	if err := ctl([]string{"--addr", cs.Addr(), "leader", "x.y", "p0", "z1-1"}, &out); err == nil {
		t.Error("leader of an unknown table accepted")
	}
	if err := ctl([]string{"--addr", cs.Addr(), "frobnicate"}, &out); err == nil {
		t.Error("unknown verb accepted")
	}
}
