package suite

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
)

// Bucket is one line of sysbench's latency histogram: the bucket's value in
// milliseconds and how many events fell into it.
type Bucket struct {
	Ms    float64 `json:"ms"`
	Count uint64  `json:"count"`
}

// Stats is what one `sysbench ... run` printed.
type Stats struct {
	Queries          uint64  `json:"queries"`
	QPS              float64 `json:"qps"`
	Transactions     uint64  `json:"transactions"`
	TPS              float64 `json:"tps"`
	ReadQueries      uint64  `json:"read_queries"`
	WriteQueries     uint64  `json:"write_queries"`
	OtherQueries     uint64  `json:"other_queries"`
	IgnoredErrors    uint64  `json:"ignored_errors"`
	Reconnects       uint64  `json:"reconnects"`
	TotalTimeSeconds float64 `json:"total_time_s"`
	Events           uint64  `json:"events"`
	LatencyMinMs     float64 `json:"latency_min_ms"`
	LatencyAvgMs     float64 `json:"latency_avg_ms"`
	LatencyMaxMs     float64 `json:"latency_max_ms"`
	// PercentileMs is the percentile line sysbench printed ("95th
	// percentile:"), with two decimals; Percentile says which one.
	Percentile   int `json:"percentile"`
	PercentileMs Num `json:"percentile_ms"`
	// P95Ms and P99Ms come from the histogram when it was printed (three
	// significant decimals, computed the way sysbench computes its own
	// percentile); without a histogram P95Ms falls back to the printed 95th
	// percentile and P99Ms is NaN.
	P95Ms     Num      `json:"p95_ms"`
	P99Ms     Num      `json:"p99_ms"`
	Histogram []Bucket `json:"histogram,omitempty"`
}

// ParseSysbench reads the output of sysbench 1.0.x running an oltp_* test.
// It fails if the run did not finish (no "SQL statistics" block), quoting
// sysbench's FATAL lines when there are any.
func ParseSysbench(out []byte) (Stats, error) {
	st := Stats{P95Ms: NaN, P99Ms: NaN, PercentileMs: NaN}
	var fatal []string
	var sawSQL, sawQueries, sawLatency bool
	inHist := false
	sc := bufio.NewScanner(bytes.NewReader(out))
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if inHist {
			if b, ok := parseBucket(line); ok {
				st.Histogram = append(st.Histogram, b)
				continue
			}
			if strings.HasPrefix(line, "value") { // the header line
				continue
			}
			inHist = false
		}
		if strings.HasPrefix(line, "Latency histogram") {
			inHist = true
			continue
		}
		key, val, ok := strings.Cut(line, ":")
		if !ok {
			continue
		}
		val = strings.TrimSpace(val)
		var err error
		switch key = strings.TrimSpace(key); {
		case strings.HasPrefix(line, "FATAL"):
			fatal = append(fatal, line)
		case key == "SQL statistics":
			sawSQL = true
		case key == "read":
			st.ReadQueries, err = firstUint(val)
		case key == "write":
			st.WriteQueries, err = firstUint(val)
		case key == "other":
			st.OtherQueries, err = firstUint(val)
		case key == "transactions":
			st.Transactions, st.TPS, err = countAndRate(val)
		case key == "queries":
			st.Queries, st.QPS, err = countAndRate(val)
			sawQueries = err == nil
		case key == "ignored errors":
			st.IgnoredErrors, _, err = countAndRate(val)
		case key == "reconnects":
			st.Reconnects, _, err = countAndRate(val)
		case key == "total time":
			st.TotalTimeSeconds, err = strconv.ParseFloat(strings.TrimSuffix(val, "s"), 64)
		case key == "total number of events":
			st.Events, err = firstUint(val)
		case key == "Latency (ms)":
			sawLatency = true
		case key == "min" && sawLatency:
			st.LatencyMinMs, err = strconv.ParseFloat(val, 64)
		case key == "avg" && sawLatency:
			st.LatencyAvgMs, err = strconv.ParseFloat(val, 64)
		case key == "max" && sawLatency:
			st.LatencyMaxMs, err = strconv.ParseFloat(val, 64)
		case strings.HasSuffix(key, "percentile") && sawLatency:
			// "95th percentile"
			digits := strings.TrimRight(strings.Fields(key)[0], "thsndr")
			if st.Percentile, err = strconv.Atoi(digits); err == nil {
				var v float64
				v, err = strconv.ParseFloat(val, 64)
				st.PercentileMs = Num(v)
			}
		}
		if err != nil {
			return st, fmt.Errorf("sysbench output: %q: %w", line, err)
		}
	}
	if err := sc.Err(); err != nil {
		return st, err
	}
	if !sawSQL || !sawQueries {
		if len(fatal) > 0 {
			return st, fmt.Errorf("sysbench failed: %s", strings.Join(fatal, "; "))
		}
		return st, errors.New("sysbench output has no SQL statistics (the run did not finish)")
	}
	if len(st.Histogram) > 0 {
		st.P95Ms = HistogramPercentile(st.Histogram, 95)
		st.P99Ms = HistogramPercentile(st.Histogram, 99)
	} else if st.Percentile == 95 {
		st.P95Ms = st.PercentileMs
	}
	return st, nil
}

// parseBucket reads "       0.728 |***          9".
func parseBucket(line string) (Bucket, bool) {
	v, rest, ok := strings.Cut(line, "|")
	if !ok {
		return Bucket{}, false
	}
	ms, err := strconv.ParseFloat(strings.TrimSpace(v), 64)
	if err != nil {
		return Bucket{}, false
	}
	f := strings.Fields(strings.TrimLeft(rest, "*"))
	if len(f) != 1 {
		return Bucket{}, false
	}
	n, err := strconv.ParseUint(f[0], 10, 64)
	if err != nil {
		return Bucket{}, false
	}
	return Bucket{Ms: ms, Count: n}, true
}

// HistogramPercentile returns the value of the bucket holding the pct-th
// percentile event, as sysbench does for its own percentile: the first bucket
// where the running count reaches round(total*pct/100). It is NaN for an
// empty histogram.
func HistogramPercentile(h []Bucket, pct float64) Num {
	var total uint64
	for _, b := range h {
		total += b.Count
	}
	want := uint64(math.Floor(float64(total)*pct/100 + 0.5))
	if total == 0 {
		return NaN
	}
	if want == 0 {
		return Num(h[0].Ms)
	}
	var seen uint64
	for _, b := range h {
		seen += b.Count
		if seen >= want {
			return Num(b.Ms)
		}
	}
	return Num(h[len(h)-1].Ms)
}

// countAndRate reads "86420  (43144.39 per sec.)".
func countAndRate(s string) (uint64, float64, error) {
	f := strings.Fields(s)
	if len(f) == 0 {
		return 0, 0, errors.New("no value")
	}
	n, err := strconv.ParseUint(f[0], 10, 64)
	if err != nil {
		return 0, 0, err
	}
	if len(f) < 2 {
		return n, 0, nil
	}
	r, err := strconv.ParseFloat(strings.TrimPrefix(f[1], "("), 64)
	if err != nil {
		return 0, 0, fmt.Errorf("rate: %w", err)
	}
	return n, r, nil
}

func firstUint(s string) (uint64, error) {
	f := strings.Fields(s)
	if len(f) == 0 {
		return 0, errors.New("no value")
	}
	return strconv.ParseUint(f[0], 10, 64)
}
