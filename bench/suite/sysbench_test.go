package suite

import (
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"
)

func readTestdata(t *testing.T, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestParseSysbenchReadWriteWithHistogram(t *testing.T) {
	st, err := ParseSysbench(readTestdata(t, "oltp_read_write-histogram.txt"))
	if err != nil {
		t.Fatal(err)
	}
	want := Stats{
		Queries: 86420, QPS: 43144.39, Transactions: 4293, TPS: 2143.24,
		ReadQueries: 60578, WriteQueries: 17222, OtherQueries: 8620,
		IgnoredErrors: 34, Reconnects: 0, TotalTimeSeconds: 2.0024, Events: 4293,
		LatencyMinMs: 0.64, LatencyAvgMs: 1.86, LatencyMaxMs: 10.24,
		Percentile: 95, PercentileMs: 2.97,
	}
	got := st
	got.Histogram, got.P95Ms, got.P99Ms = nil, 0, 0
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got  %+v\nwant %+v", got, want)
	}
	if len(st.Histogram) != 135 {
		t.Errorf("histogram has %d buckets, want 135", len(st.Histogram))
	}
	var n uint64
	for _, b := range st.Histogram {
		n += b.Count
	}
	if n != st.Events {
		t.Errorf("histogram counts sum to %d, events %d", n, st.Events)
	}
	// The histogram's p95 is the value sysbench printed, with more digits.
	if math.Abs(float64(st.P95Ms)-float64(st.PercentileMs)) > 0.005 {
		t.Errorf("histogram p95 %v, sysbench printed %v", st.P95Ms, st.PercentileMs)
	}
	if !(st.P99Ms > st.P95Ms) || float64(st.P99Ms) > st.LatencyMaxMs {
		t.Errorf("p99 %v not between p95 %v and max %v", st.P99Ms, st.P95Ms, st.LatencyMaxMs)
	}
}

func TestParseSysbenchPointSelect(t *testing.T) {
	st, err := ParseSysbench(readTestdata(t, "oltp_point_select.txt"))
	if err != nil {
		t.Fatal(err)
	}
	if st.Queries != 26575 || st.QPS != 26542.33 || st.TPS != 26542.33 || st.ReadQueries != 26575 {
		t.Errorf("counts: %+v", st)
	}
	if st.P95Ms != 0.07 {
		t.Errorf("without a histogram p95 should be the printed value, got %v", st.P95Ms)
	}
	if st.P99Ms.Valid() {
		t.Errorf("without a histogram p99 should be unknown, got %v", st.P99Ms)
	}

	st, err = ParseSysbench(readTestdata(t, "oltp_point_select-histogram.txt"))
	if err != nil {
		t.Fatal(err)
	}
	if math.Round(float64(st.P95Ms)*100)/100 != float64(st.PercentileMs) {
		t.Errorf("histogram p95 %v does not round to the printed %v", st.P95Ms, st.PercentileMs)
	}
	if !st.P99Ms.Valid() {
		t.Error("no p99")
	}
}

func TestParseSysbenchFailures(t *testing.T) {
	_, err := ParseSysbench(readTestdata(t, "connect-failure.txt"))
	if err == nil || !strings.Contains(err.Error(), "unable to connect") {
		t.Errorf("connect failure: %v", err)
	}
	// A run cut short (killed) has no statistics.
	full := string(readTestdata(t, "oltp_read_write-histogram.txt"))
	cut := full[:strings.Index(full, "SQL statistics")]
	if _, err := ParseSysbench([]byte(cut)); err == nil {
		t.Error("truncated output parsed")
	}
	if _, err := ParseSysbench(nil); err == nil {
		t.Error("empty output parsed")
	}
	bad := strings.Replace(full, "queries:                             86420", "queries:                             many", 1)
	if _, err := ParseSysbench([]byte(bad)); err == nil {
		t.Error("a non-numeric query count parsed")
	}
}

// Field widths change with the numbers; the parser must not depend on them.
func TestParseSysbenchSpacing(t *testing.T) {
	out := `SQL statistics:
    queries performed:
        read: 10
        write: 0
        other: 0
        total: 10
    transactions: 10 (5.00 per sec.)
    queries: 10 (5.00 per sec.)
    ignored errors: 1 (0.50 per sec.)
    reconnects: 2 (1.00 per sec.)

General statistics:
    total time: 2.0000s
    total number of events: 10

Latency (ms):
         min: 1.00
         avg: 2.00
         max: 3.00
         99th percentile: 2.90
         sum: 20.00
`
	st, err := ParseSysbench([]byte(out))
	if err != nil {
		t.Fatal(err)
	}
	if st.Queries != 10 || st.IgnoredErrors != 1 || st.Reconnects != 2 || st.Percentile != 99 || st.PercentileMs != 2.9 {
		t.Errorf("%+v", st)
	}
	if st.P95Ms.Valid() {
		t.Errorf("p95 from a 99th percentile line: %v", st.P95Ms)
	}
}

func TestHistogramPercentile(t *testing.T) {
	h := []Bucket{{1, 50}, {2, 40}, {3, 9}, {4, 1}}
	for _, c := range []struct {
		pct  float64
		want Num
	}{{50, 1}, {51, 2}, {90, 2}, {95, 3}, {99, 3}, {100, 4}, {0, 1}} {
		if got := HistogramPercentile(h, c.pct); got != c.want {
			t.Errorf("p%v = %v, want %v", c.pct, got, c.want)
		}
	}
	if HistogramPercentile(nil, 95).Valid() {
		t.Error("empty histogram has a percentile")
	}
}

func TestParseProcStat(t *testing.T) {
	// The command name may contain spaces and parentheses.
	line := "1234 (my (odd) proc) S 1 1234 1234 0 -1 4194560 500 0 0 0 250 130 0 0 20 0 3 0 100 1000 10\n"
	d, err := parseProcStat(line)
	if err != nil {
		t.Fatal(err)
	}
	if d != 3800*time.Millisecond {
		t.Errorf("got %v, want 3.8s", d)
	}
	if _, err := parseProcStat("1234 (x) S 1"); err == nil {
		t.Error("short line parsed")
	}
	self, err := CPUTime(os.Getpid())
	if err != nil || self < 0 {
		t.Errorf("CPUTime(self) = %v, %v", self, err)
	}
}

func TestNumJSON(t *testing.T) {
	b, err := json.Marshal(struct{ A, B Num }{1.5, NaN})
	if err != nil {
		t.Fatal(err)
	}
	if string(b) != `{"A":1.5,"B":null}` {
		t.Errorf("got %s", b)
	}
	var v struct{ A, B Num }
	if err := json.Unmarshal(b, &v); err != nil {
		t.Fatal(err)
	}
	if v.A != 1.5 || v.B.Valid() {
		t.Errorf("round trip: %+v", v)
	}
}

// TestSysbenchScript: a workload with a script under bench/sysbench runs
// that script; any other name goes to sysbench as it is.
func TestSysbenchScript(t *testing.T) {
	root := t.TempDir()
	dir := filepath.Join(root, "bench", "sysbench")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	script := filepath.Join(dir, "go_args_point_select.lua")
	if err := os.WriteFile(script, []byte("-- test\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	cfg := Config{RunConfig: RunConfig{Root: root}}
	if got := cfg.sysbenchScript("go_args_point_select"); got != script {
		t.Errorf("own workload: %q, want %q", got, script)
	}
	if got := cfg.sysbenchScript("oltp_point_select"); got != "oltp_point_select" {
		t.Errorf("sysbench's workload: %q", got)
	}
}
