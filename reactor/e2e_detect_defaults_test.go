package reactor_test

import (
	"context"
	"database/sql"
	"fmt"
	"sync"
	"testing"
	"time"

	"obgate/internal/testkit"
)

// TestDefaultDetectionHasNoFalsePositive runs with obgate's default
// detection (server_detect_mode 1 probes a busy server every second, each
// probe waiting detect_server_timeout = 1 s for the handshake) in front of
// a server that is both running a long statement (SLEEP(5), longer than
// three probe timeouts) and saturated: every core busy with statements
// that burn CPU. The probes keep succeeding, the server is never listed,
// and the long statement ends as it should, not cut off by a detect kill.
func TestDefaultDetectionHasNoFalsePositive(t *testing.T) {
	testkit.CheckLeaks(t)
	p := startProxy(t, "netpoll")
	db := openDB(t, driverConfig(p, "root", "", testDB))
	direct, err := sql.Open("mysql", maria(t).DSN("root", "", ""))
	if err != nil {
		t.Fatal(err)
	}
	defer direct.Close()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()

	// Saturate the server: CPU-bound statements, more than there are
	// cores, until the long statement is over.
	burnCtx, stopBurn := context.WithCancel(ctx)
	var burners sync.WaitGroup
	burnMark := newMarker("burn")
	for range 6 {
		burners.Add(1)
		go func() {
			defer burners.Done()
			for burnCtx.Err() == nil {
				_, _ = direct.ExecContext(burnCtx, "SELECT BENCHMARK(20000000, SHA2('obgate', 512)) /* "+burnMark+" */")
			}
		}()
	}
	defer func() {
		stopBurn()
		rows, err := direct.Query("SELECT ID FROM information_schema.PROCESSLIST WHERE INFO LIKE CONCAT('%', ?, '%') AND INFO NOT LIKE '%PROCESSLIST%'", burnMark)
		if err == nil {
			for rows.Next() {
				var id int64
				if rows.Scan(&id) == nil {
					_, _ = direct.Exec(fmt.Sprintf("KILL QUERY %d", id))
				}
			}
			rows.Close()
		}
		burners.Wait()
	}()
	if err := waitRunning(ctx, maria(t).DSN("root", "", ""), burnMark); err != nil {
		t.Fatal(err)
	}

	probes := func(result string) float64 {
		n, _ := testkit.MetricSum(p.MetricsText(), "obgate_detect_probes_total", "result", result)
		return n
	}
	okBefore := probes("ok")
	slept := make(chan error, 1)
	go func() {
		var v int
		err := db.QueryRowContext(ctx, "SELECT SLEEP(5)").Scan(&v)
		if err == nil && v != 0 {
			err = fmt.Errorf("SLEEP(5) returned %d: interrupted", v)
		}
		slept <- err
	}()
	var listed []string
	for done := false; !done; {
		select {
		case err := <-slept:
			if err != nil {
				t.Errorf("the long statement: %v", err)
			}
			done = true
		case <-time.After(50 * time.Millisecond):
			if v, ok := viewOf(p, maria(t).Addr()); ok && (v.DetectCongested || v.Congested) {
				listed = append(listed, fmt.Sprintf("%+v", v))
			}
		}
	}
	if len(listed) > 0 {
		t.Errorf("a busy, saturated server was listed %d times, first: %s", len(listed), listed[0])
	}
	if n := probes("ok") - okBefore; n < 3 {
		t.Errorf("%v successful probes during the long statement; want at least 3, or the test proves nothing", n)
	}
	if n := probes("fail"); n != 0 {
		t.Errorf("%v probes failed", n)
	}
}

// TestDefaultDetectionSlowServerNotListed slows one obsim node by 300 ms
// per answer, with default detection: statements on it take longer and
// all succeed, and the node is never listed.
func TestDefaultDetectionSlowServerNotListed(t *testing.T) {
	testkit.CheckLeaks(t)
	c := startOBSim(t)
	resetOBSim(t, c)
	p := startOBProxy(t, c, "netpoll")
	_, conn := obConn(t, p)
	mk := newMarker("slowdefault")
	rowStrings(t, conn, "SELECT 1 /* "+mk+"-probe */")
	node := c.Node(entryFor(t, c, mk+"-probe").Node)
	node.Slow(300 * time.Millisecond)
	defer node.Slow(0)
	deadline := time.Now().Add(5 * time.Second)
	for i := 0; time.Now().Before(deadline); i++ {
		rowStrings(t, conn, fmt.Sprintf("SELECT %d /* %s-%d */", i, mk, i))
		if v, ok := viewOf(p, node.Addr()); ok && (v.DetectCongested || v.Congested) {
			t.Fatalf("a server slowed by 300 ms was listed: %+v", v)
		}
	}
	if n, _ := testkit.MetricSum(p.MetricsText(), "obgate_detect_probes_total", "result", "ok"); n < 3 {
		t.Errorf("%v successful probes of the slowed node; want at least 3, or the test proves nothing", n)
	}
}
