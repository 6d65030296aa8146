package main_test

import (
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"obgate/internal/testkit"
	"obgate/mysqlproto"
)

// TestMemoryGuard drives obgate over the high-water mark of
// proxy_mem_limited (16 MB here, its least) with clients that each start a 1 GiB
// result and do not read it: obgate holds little of each result (it stops
// reading the server for a client that does not read), so it is the
// sessions that add up, until
// new clients get ERR 1041 instead of the process growing; the
// process survives, and once the slow clients are gone new clients get in
// again.
func TestMemoryGuard(t *testing.T) {
	if testing.Short() {
		t.Skip("holds hundreds of stalled result sets")
	}
	p := startObgate(t, "", "-o", "proxy_mem_limited=16MB")
	const most = 4000
	var stalled []*testkit.RawConn
	defer func() {
		for _, c := range stalled {
			c.Close()
		}
	}()
	var refusal *mysqlproto.SQLError
	for len(stalled) < most && refusal == nil {
		c, err := testkit.DialRaw(p.addr(), 10*time.Second)
		if err != nil {
			t.Fatal(err)
		}
		if err := c.Login("root", "", "", 10*time.Second); err != nil {
			c.Close()
			if !errors.As(err, &refusal) {
				t.Fatalf("login %d: %v", len(stalled)+1, err)
			}
			break
		}
		// 1 GiB of rows the client never reads: obgate holds what it read
		// before it stopped reading MariaDB for this client.
		if err := c.WritePacket(0, append([]byte{byte(mysqlproto.ComQuery)}, "SELECT REPEAT('x', 1024) FROM seq_1_to_1000000"...)); err != nil {
			t.Fatal(err)
		}
		stalled = append(stalled, c)
	}
	if refusal == nil {
		t.Fatalf("%d stalled clients never took memory over the high-water mark; metrics:\n%s", len(stalled), memMetrics(t, p))
	}
	if refusal.Code != mysqlproto.EROutOfResources || !strings.Contains(refusal.Message, "proxy_mem_limited") {
		t.Fatalf("refusal: %v, want ERR 1041 naming proxy_mem_limited", refusal)
	}
	t.Logf("refused after %d stalled clients: %v", len(stalled), refusal)
	if m := memMetrics(t, p); !strings.Contains(m, "obgate_memory_high 1") || !strings.Contains(m, `obgate_client_refused_total{reason="memory"}`) {
		t.Fatalf("metrics do not show the refusal:\n%s", m)
	}
	for _, c := range stalled {
		c.Close()
	}
	stalled = nil
	testkit.Eventually(t, time.Minute, func() bool {
		c, err := testkit.DialRaw(p.addr(), 10*time.Second)
		if err != nil {
			return false
		}
		defer c.Close()
		return c.Login("root", "", "", 10*time.Second) == nil
	}, "new clients are still refused after the slow ones left; metrics:\n%s", memMetrics(t, p))
	select {
	case <-p.exited:
		t.Fatalf("obgate exited: %s", tail(p.log(), 2000))
	default:
	}
}

func memMetrics(t *testing.T, p *obgateProc) string {
	resp, err := http.Get(p.metricsURL())
	if err != nil {
		return err.Error()
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	var keep []string
	for _, l := range strings.Split(string(b), "\n") {
		if strings.HasPrefix(l, "obgate_memory") || strings.HasPrefix(l, "obgate_client_refused") || strings.HasPrefix(l, "go_memstats_heap_inuse") {
			keep = append(keep, l)
		}
	}
	return fmt.Sprint(strings.Join(keep, "\n"))
}
