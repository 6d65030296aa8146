package reactor_test

import (
	"net"
	"strconv"
	"strings"
	"testing"
	"time"

	"obgate/internal/testkit"
)

// TestMySQLModeAvoidsDeadAndHungServers lists, in mysql routing mode, a
// server that refuses connections and one that accepts them but never
// greets (a stopped mariadbd) beside the real MariaDB. Every login
// succeeds; the refusing server is avoided after its first failed
// connect, the hung one once the detect task (server_detect_mode=2,
// detect_server_timeout=1s) finds it dead, and from then on logins do not
// wait for either.
func TestMySQLModeAvoidsDeadAndHungServers(t *testing.T) {
	testkit.CheckLeaks(t)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	refused := ln.Addr().String()
	ln.Close()
	hung, err := net.Listen("tcp", "127.0.0.1:0") // accepts (backlog), never greets
	if err != nil {
		t.Fatal(err)
	}
	defer hung.Close()
	p := startProxy(t, haMode, "rootservice_list", refused+";"+hung.Addr().String()+";"+mdb.Addr(),
		"server_detect_mode", "2", "detect_server_timeout", "1s", "server_detect_refresh_interval", "200ms")
	login := func() {
		db := rootDB(t, p)
		if n := queryInt(t, db, "SELECT 1"); n != 1 {
			t.Fatalf("SELECT 1 = %d", n)
		}
		db.Close()
	}
	for range 3 {
		login()
	}
	waitFor(t, 10*time.Second, "hung server found dead", func() bool {
		v, _ := viewOf(p, hung.Addr().String())
		return v.DetectCongested
	})
	if v, _ := viewOf(p, refused); !v.Congested {
		t.Fatalf("refusing server not listed: %+v", v)
	}
	before := metricValue(t, p, "obgate_server_connect_failures_total")
	for range 6 {
		login()
	}
	if after := metricValue(t, p, "obgate_server_connect_failures_total"); after != before {
		t.Fatalf("logins tried listed servers again: %v more connect failures", after-before)
	}
}

// metricValue reads one series of obgate's /metrics.
func metricValue(t *testing.T, p *testkit.Proxy, series string) float64 {
	t.Helper()
	var b strings.Builder
	p.Metrics.WritePrometheus(&b)
	for _, line := range strings.Split(b.String(), "\n") {
		name, val, ok := strings.Cut(line, " ")
		if ok && (name == series || strings.HasPrefix(name, series+"{")) {
			f, err := strconv.ParseFloat(val, 64)
			if err != nil {
				t.Fatalf("%s: %v", line, err)
			}
			return f
		}
	}
	t.Fatalf("no series %s", series)
	return 0
}
