package main_test

import (
	"context"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"obgate/bench/memory"
	"obgate/mysqlproto"
	"obgate/tools/obsim"
)

// probeURL is the address of a probe endpoint on p's metrics port.
func (p *obgateProc) probeURL(path string) string {
	return "http://" + net.JoinHostPort("127.0.0.1", strconv.Itoa(p.mport)) + path
}

// probe asks one probe endpoint and returns its status and body; status 0
// means the metrics port did not answer.
func (p *obgateProc) probe(path string) (int, string) {
	p.t.Helper()
	c := http.Client{Timeout: 5 * time.Second}
	resp, err := c.Get(p.probeURL(path))
	if err != nil {
		return 0, err.Error()
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, strings.TrimSpace(string(b))
}

// waitProbe polls path until its answer satisfies ok, and returns it; it
// fails the test when obgate exits or after timeout.
func (p *obgateProc) waitProbe(path string, timeout time.Duration, ok func(code int, body string) bool) (int, string) {
	p.t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		code, body := p.probe(path)
		if ok(code, body) {
			return code, body
		}
		select {
		case <-p.exited:
			p.t.Fatalf("obgate exited while waiting on %s (last answer %d %q): %v", path, code, body, p.waitErr)
		case <-time.After(20 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			p.t.Fatalf("%s: waited %v; last answer %d %q", path, timeout, code, body)
		}
	}
}

func statusIs(want int) func(int, string) bool {
	return func(code int, _ string) bool { return code == want }
}

// TestProbesThroughDrain follows /healthz and /readyz through a graceful
// stop in mysql routing mode: both 200 while serving; on SIGTERM with a
// transaction open, readiness turns 503 "draining" while liveness stays
// 200 and the session still works; after COMMIT obgate exits 0.
func TestProbesThroughDrain(t *testing.T) {
	p := startObgate(t, "", "-o", "hot_upgrade_exit_timeout=30s")
	if code, body := p.waitProbe("/readyz", 30*time.Second, statusIs(200)); body != "ok" {
		t.Fatalf("/readyz while serving: %d %q, want 200 ok", code, body)
	}
	if code, body := p.probe("/healthz"); code != 200 || body != "ok" {
		t.Fatalf("/healthz while serving: %d %q, want 200 ok", code, body)
	}

	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	c, err := mysqlproto.Dial(ctx, p.addr(), mysqlproto.ClientOptions{User: "root"})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Conn().Close()
	_ = c.Conn().SetDeadline(time.Now().Add(time.Minute))
	if _, err := c.Exec("BEGIN"); err != nil {
		t.Fatal(err)
	}
	stopped := time.Now()
	if err := p.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	if _, body := p.waitProbe("/readyz", 10*time.Second, statusIs(503)); body != "draining" {
		t.Errorf("/readyz while draining answered %q, want draining", body)
	}
	if code, body := p.probe("/healthz"); code != 200 || body != "ok" {
		t.Errorf("/healthz while draining: %d %q, want 200 ok", code, body)
	}
	// The drain is still on: the transaction's session works.
	if err := memory.SelectOne(c); err != nil {
		t.Fatalf("a statement inside the open transaction during the drain: %v", err)
	}
	if code, _ := p.probe("/readyz"); code != 503 {
		t.Errorf("/readyz later in the drain: %d, want 503", code)
	}
	if _, err := c.Exec("COMMIT"); err != nil {
		t.Fatalf("COMMIT during the drain: %v", err)
	}
	if code := p.wait(30*time.Second - time.Since(stopped)); code != 0 {
		t.Fatalf("obgate exited with %d, want 0", code)
	}
	if code, _ := p.probe("/healthz"); code != 0 {
		t.Errorf("/healthz after exit answered %d", code)
	}
}

// startOBGateProc starts obgate in oceanbase routing mode on the root
// servers rs of cluster name, without waiting for anything.
func startOBGateProc(t *testing.T, rs, name string) *obgateProc {
	t.Helper()
	p := newObgateProc(t, "")
	p.args = []string{"-N", "-p", strconv.Itoa(p.port), "-l", strconv.Itoa(p.mport),
		"-r", rs, "-c", name, "--config-dir", p.confDir}
	p.spawn()
	return p
}

// TestReadyzWaitsForCluster checks readiness in oceanbase routing mode: it
// stays 503 "not bootstrapped" (naming the cluster) while the root
// servers cannot be reached, although obgate is alive, and turns 200 once
// the cluster's server list is loaded from obsim.
func TestReadyzWaitsForCluster(t *testing.T) {
	t.Run("unreachable", func(t *testing.T) {
		p := startOBGateProc(t, net.JoinHostPort("127.0.0.1", strconv.Itoa(freePort(t))), "nowhere")
		p.waitProbe("/healthz", 30*time.Second, statusIs(200))
		// Once a refresh has failed, readiness must say why.
		deadline := time.Now().Add(30 * time.Second)
		for !strings.Contains(p.log(), "cluster refresh failed") {
			if time.Now().After(deadline) {
				t.Fatalf("no failed cluster refresh in 30 s; log:\n%s", tail(p.log(), 20))
			}
			time.Sleep(20 * time.Millisecond)
		}
		code, body := p.waitProbe("/readyz", 10*time.Second, func(code int, body string) bool {
			return code != 503 || strings.Contains(body, "not bootstrapped")
		})
		if code != 503 || !strings.Contains(body, "nowhere") {
			t.Fatalf("/readyz with the cluster unreachable: %d %q, want 503 naming cluster nowhere", code, body)
		}
		if code, _ := p.probe("/healthz"); code != 200 {
			t.Errorf("/healthz with the cluster unreachable: %d, want 200", code)
		}
	})
	t.Run("obsim", func(t *testing.T) {
		ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
		defer cancel()
		cl, err := obsim.Start(ctx, obsim.Config{
			Topology: &obsim.Topology{
				Cluster: "probes", ClusterID: 7,
				Zones:   []obsim.Zone{{Name: "zone1", Region: "r1"}},
				Tenants: []obsim.Tenant{{Name: "sys"}},
			},
			MariaDBDSN: mariaDB(t).DSN("root", "", ""),
		})
		if err != nil {
			t.Fatalf("start obsim: %v", err)
		}
		t.Cleanup(func() {
			if err := cl.Close(); err != nil {
				t.Errorf("obsim close: %v", err)
			}
		})
		p := startOBGateProc(t, cl.RSList(), cl.Name())
		if code, body := p.waitProbe("/readyz", 30*time.Second, statusIs(200)); body != "ok" {
			t.Fatalf("/readyz with the cluster loaded: %d %q, want 200 ok", code, body)
		}
		if code := p.stop(30 * time.Second); code != 0 {
			t.Fatalf("obgate exited with %d, want 0", code)
		}
	})
}
