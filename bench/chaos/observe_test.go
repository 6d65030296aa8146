package chaos

import (
	"database/sql"
	"os"
	"path/filepath"
	"testing"
	"time"

	"obgate/tools/obsim"
)

func TestLogWatchGaps(t *testing.T) {
	w := newLogWatch(nil, time.Now(), "root")
	e := func(seq uint64, node string) obsim.LogEntry {
		return obsim.LogEntry{Seq: seq, Node: node, Client: "proxy", Tenant: Tenant, User: "root", Time: time.Now()}
	}
	w.ingest([]obsim.LogEntry{e(10, "n1"), e(11, "n2"), e(13, "n1")})
	if w.contig != 11 || !w.seen[13] {
		t.Fatalf("contig %d, seen %v: want 11 with 13 pending", w.contig, w.seen)
	}
	// 12 arrives late (its entry was being stored): nothing is lost.
	w.ingest([]obsim.LogEntry{e(12, "n3"), e(13, "n1")})
	if w.contig != 13 || w.lost != 0 || len(w.times["n1"]) != 2 {
		t.Fatalf("contig %d lost %d n1 %d: want 13, 0, 2 (13 once)", w.contig, w.lost, len(w.times["n1"]))
	}
	// 14..16 never come (dropped by the ring): given up after a few polls.
	w.ingest([]obsim.LogEntry{e(17, "n1")})
	for range 4 {
		w.ingest(nil)
	}
	if w.contig != 17 || w.lost != 3 {
		t.Errorf("contig %d lost %d, want 17 and 3", w.contig, w.lost)
	}
	// Other users and obgate's own sessions do not count.
	other := e(18, "n2")
	other.User = "proxyro"
	w.ingest([]obsim.LogEntry{other})
	if len(w.times["n2"]) != 1 {
		t.Errorf("n2 has %d request times, want 1", len(w.times["n2"]))
	}
}

func TestTimes(t *testing.T) {
	ts := []float64{1, 2, 3, 5, 8}
	if v, ok := lastIn(ts, 2, 5); !ok || v != 3 {
		t.Errorf("lastIn(2,5) = %v %v", v, ok)
	}
	if _, ok := lastIn(ts, 5.5, 7); ok {
		t.Error("lastIn found a time in an empty range")
	}
	if v, ok := firstIn(ts, 4, 100); !ok || v != 5 {
		t.Errorf("firstIn(4,100) = %v %v", v, ok)
	}
	if n := countIn(ts, 2, 8); n != 3 {
		t.Errorf("countIn(2,8) = %d", n)
	}
}

func TestCongestion(t *testing.T) {
	cols := []string{"cluster_name", "zone_name", "region_name", "zone_state", "server_ip", "cr_version", "server_state",
		"alive_congested", "last_alive_congested", "dead_congested", "last_dead_congested", "stat_alive_failures",
		"stat_conn_failures", "conn_last_fail_time", "conn_failure_events", "alive_last_fail_time",
		"alive_failure_events", "ref_count", "detect_congested", "last_detect_congested"}
	vals := make([]sql.NullString, len(cols))
	for i := range vals {
		vals[i] = sql.NullString{String: "0", Valid: true}
	}
	vals[4].String, vals[6].String, vals[3].String = "127.0.0.1:2881", "ACTIVE", "ACTIVE"
	vals[7].String = "1"
	r := congestionRow(cols, vals)
	if r.Server != "127.0.0.1:2881" || !r.Alive || r.Dead || r.Detect || !r.Listed() || r.ServerState != "ACTIVE" {
		t.Errorf("row = %+v", r)
	}
	rep := CongestionReport{Available: true, Samples: []CongestionSample{
		{T: 1}, {T: 2, Listed: true}, {T: 3, Listed: true}, {T: 4}, {T: 5, Listed: true}, {T: 6}, {T: 7},
	}}
	if at, ok := rep.firstListed(0, 10); !ok || at != 2 {
		t.Errorf("firstListed = %v %v", at, ok)
	}
	if at, ok := rep.clearedAt(3); !ok || at != 6 {
		t.Errorf("clearedAt(3) = %v %v, want 6 (listed again at 5)", at, ok)
	}
	if l, n := rep.listedCount(0, 4); l != 2 || n != 3 {
		t.Errorf("listedCount = %d of %d", l, n)
	}
}

func TestServerRequests(t *testing.T) {
	text := `# HELP obgate_server_requests_total statements sent
# TYPE obgate_server_requests_total counter
obgate_server_requests_total{server="127.0.0.1:2881"} 10
obgate_server_requests_total{cluster="c",server="127.0.0.1:2882"} 7
go_goroutines 12
`
	got, ok := serverRequests(text)
	if !ok || got["127.0.0.1:2881"] != 10 || got["127.0.0.1:2882"] != 7 || len(got) != 2 {
		t.Errorf("serverRequests = %v %v", got, ok)
	}
	if _, ok := serverRequests("go_goroutines 3\n"); ok {
		t.Error("found the family in a text without it")
	}
}

func TestLeakJudge(t *testing.T) {
	l := LeakReport{Before: Snapshot{Goroutines: 20, OpenFDs: 15, ClientSessions: 0, ServerSessions: 0, BackendSessions: 1},
		After: Snapshot{Goroutines: 25, OpenFDs: 40, ClientSessions: 0, ServerSessions: -1, BackendSessions: 1}}
	l.judge()
	if l.OK || len(l.Problems) != 1 {
		t.Errorf("judge: ok %v problems %v, want the fds only", l.OK, l.Problems)
	}
}

func TestWritePlot(t *testing.T) {
	res := &Result{Scenario: "stop", Target: "obgate", Title: "test", Server: "zone2-1", DurationS: 5.5,
		Events: []Event{{Kind: "fault", What: "stop zone2-1", At: 1}, {Kind: "recover", What: "start zone2-1", At: 3}}}
	for i := range 6 {
		res.Series = append(res.Series, Second{T: i, ReadOK: 100, ReadFail: int64(i % 2), WriteOK: 30, NodeRequests: 33})
	}
	path := filepath.Join(t.TempDir(), "p.png")
	if err := WritePlot(res, path); err != nil {
		t.Fatal(err)
	}
	if st, err := os.Stat(path); err != nil || st.Size() < 1000 {
		t.Fatalf("plot: %v, %v", st, err)
	}
}
