package memory

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"obgate/mysqlproto"
)

func TestParseVmRSS(t *testing.T) {
	status := "Name:\tcat\nVmHWM:\t    1760 kB\nVmRSS:\t    1764 kB\nRssAnon:\t     116 kB\n"
	got, err := parseVmRSS([]byte(status))
	if err != nil || got != 1764<<10 {
		t.Fatalf("parseVmRSS = %d, %v; want %d", got, err, 1764<<10)
	}
	for _, bad := range []string{"Name:\tx\n", "VmRSS:\t12 MB\n", "VmRSS:\tlots kB\n"} {
		if _, err := parseVmRSS([]byte(bad)); err == nil {
			t.Errorf("parseVmRSS(%q) succeeded", bad)
		}
	}
}

func TestRSSOfSelf(t *testing.T) {
	rss, err := RSS(os.Getpid())
	if err != nil {
		t.Fatal(err)
	}
	if rss < 1<<20 {
		t.Fatalf("RSS of the test process is %d bytes", rss)
	}
}

func TestSampler(t *testing.T) {
	s := StartSampler(os.Getpid(), time.Millisecond)
	if _, err := s.Now(); err != nil {
		t.Fatal(err)
	}
	samples := s.Stop()
	s.Stop() // idempotent
	if len(samples) < 2 {
		t.Fatalf("%d samples", len(samples))
	}
	if p := PeakBetween(samples, samples[0].At, time.Time{}); p < samples[0].RSS {
		t.Fatalf("peak %d below the first sample %d", p, samples[0].RSS)
	}
	if p := PeakBetween(samples, samples[len(samples)-1].At.Add(time.Hour), time.Time{}); p != 0 {
		t.Fatalf("peak of an empty window is %d", p)
	}
	if s.Err() != nil {
		t.Fatal(s.Err())
	}
}

func TestSamplerStopsOnExitedProcess(t *testing.T) {
	s := StartSampler(math.MaxInt32, time.Millisecond) // no such pid
	s.Stop()
	if s.Err() == nil {
		t.Fatal("no error for a missing process")
	}
	if _, err := s.Now(); err == nil {
		t.Fatal("Now succeeded for a missing process")
	}
}

const exposition = `# HELP go_goroutines Number of goroutines
go_goroutines 42
go_goroutines_extra 7
odp_current_session{sessionType="client"} 3
odp_current_session{sessionType="server"} 5
odp_odd{a="b"} x
`

func TestMetricValue(t *testing.T) {
	for series, want := range map[string]float64{
		"go_goroutines": 42,
		`odp_current_session{sessionType="client"}`: 3,
		`odp_current_session{sessionType="server"}`: 5,
		`go_goroutines_extra`:                       7,
	} {
		if got, err := MetricValue(exposition, series); err != nil || got != want {
			t.Errorf("MetricValue(%s) = %g, %v; want %g", series, got, err, want)
		}
	}
	for _, series := range []string{"go_gorout", "missing", `odp_odd{a="b"}`} {
		if _, err := MetricValue(exposition, series); err == nil {
			t.Errorf("MetricValue(%s) succeeded", series)
		}
	}
}

func TestWaitMetric(t *testing.T) {
	var mu sync.Mutex
	n := 3
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		mu.Lock()
		defer mu.Unlock()
		fmt.Fprintf(w, "%s %d\n", SeriesClientSession, n)
		if n > 0 {
			n--
		}
	}))
	defer ts.Close()
	v, err := WaitMetric(t.Context(), ts.URL, SeriesClientSession, func(v float64) bool { return v == 0 })
	if err != nil || v != 0 {
		t.Fatalf("WaitMetric = %g, %v", v, err)
	}
	ctx, cancel := context.WithTimeout(t.Context(), 100*time.Millisecond)
	defer cancel()
	if _, err := WaitMetric(ctx, ts.URL, SeriesClientSession, func(v float64) bool { return v > 10 }); err == nil {
		t.Fatal("WaitMetric returned for a condition that never holds")
	}
}

// fakeServer speaks just enough MySQL for these tests: any login is
// accepted; SELECT 1 and the streaming query of StreamQuery are answered.
type fakeServer struct {
	ln net.Listener
	wg sync.WaitGroup
	// corruptRow, when > 0, makes that row of a streamed result wrong;
	// dropRows leaves that many rows out.
	corruptRow, dropRows int

	mu    sync.Mutex
	conns map[net.Conn]bool
}

func startFakeServer(t *testing.T) *fakeServer {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	fs := &fakeServer{ln: ln, conns: map[net.Conn]bool{}}
	fs.wg.Go(func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			fs.mu.Lock()
			fs.conns[c] = true
			fs.mu.Unlock()
			fs.wg.Go(func() {
				fs.serve(c)
				fs.mu.Lock()
				delete(fs.conns, c)
				fs.mu.Unlock()
			})
		}
	})
	t.Cleanup(func() {
		ln.Close()
		fs.mu.Lock()
		for c := range fs.conns {
			c.Close()
		}
		fs.mu.Unlock()
		fs.wg.Wait()
	})
	return fs
}

func (fs *fakeServer) addr() string { return fs.ln.Addr().String() }

func (fs *fakeServer) serve(c net.Conn) {
	defer c.Close()
	const caps = mysqlproto.DefaultClientCapability | mysqlproto.ClientConnectWithDB
	h := mysqlproto.Handshake{ServerVersion: "5.7.99-fake", ConnectionID: 7, Capability: caps,
		Charset: byte(mysqlproto.CharsetUTF8MB4), Status: mysqlproto.StatusAutocommit,
		AuthData: []byte("01234567890123456789"), AuthPlugin: mysqlproto.AuthNativePassword}
	pio := mysqlproto.NewPacketIO(bufio.NewReader(c), c)
	if err := pio.WritePacketFlush(h.Append(nil)); err != nil {
		return
	}
	if _, err := pio.ReadPacket(); err != nil {
		return
	}
	if err := pio.WritePacketFlush(mysqlproto.AppendOK(nil, mysqlproto.OK{Status: mysqlproto.StatusAutocommit}, caps)); err != nil {
		return
	}
	for {
		pio.ResetSequence()
		p, err := pio.ReadPacket()
		if err != nil || len(p) == 0 || p[0] != byte(mysqlproto.ComQuery) {
			return
		}
		var rowLen, rows int
		q := string(p[1:])
		switch {
		case q == "SELECT 1":
			rs := mysqlproto.ResultSet{Columns: []mysqlproto.Column{mysqlproto.BigintColumn("1")}, Rows: [][]any{{1}}}
			out, _ := rs.AppendPackets(nil, 1, caps, mysqlproto.StatusAutocommit)
			pio.WriteRaw(out)
		case scan(q, "SELECT REPEAT('x', %d) FROM seq_1_to_%d", &rowLen, &rows) && rows < 0:
			pio.WritePacket(mysqlproto.AppendERR(nil, 1146, "42S02", "Table 'test.seq_1_to_-1' doesn't exist"))
		case scan(q, "SELECT REPEAT('x', %d) FROM seq_1_to_%d", &rowLen, &rows):
			pio.WritePacket(mysqlproto.AppendLenEncInt(nil, 1))
			col := mysqlproto.VarcharColumn("x")
			pio.WritePacket(col.Append(nil))
			pio.WritePacket(mysqlproto.AppendEOF(nil, 0, mysqlproto.StatusAutocommit))
			row := mysqlproto.AppendLenEncBytes(nil, []byte(strings.Repeat("x", rowLen)))
			for i := 1; i <= rows-fs.dropRows; i++ {
				if i == fs.corruptRow {
					bad := append([]byte(nil), row...)
					bad[len(bad)-1] = 'y'
					pio.WritePacket(bad)
				} else {
					pio.WritePacket(row)
				}
				if i%64 == 0 {
					if err := pio.Flush(); err != nil {
						return
					}
				}
			}
			pio.WritePacket(mysqlproto.AppendEOF(nil, 0, mysqlproto.StatusAutocommit))
		default:
			pio.WritePacket(mysqlproto.AppendERR(nil, 1064, "42000", "fake server: unknown query"))
		}
		if err := pio.Flush(); err != nil {
			return
		}
	}
}

func scan(s, format string, a ...any) bool {
	n, err := fmt.Sscanf(s, format, a...)
	return err == nil && n == len(a)
}

func TestStreamClient(t *testing.T) {
	fs := startFakeServer(t)
	stalls := 0
	q := StreamQuery{Addr: fs.addr(), Rows: 5000, RowLen: 300, ReadFirst: 64 << 10, Stall: 20 * time.Millisecond,
		RcvBuf: 16 << 10, OnStall: func() { stalls++ }}
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	sc, err := DialStream(ctx, q.Addr, q.RcvBuf, q.Login)
	if err != nil {
		t.Fatal(err)
	}
	defer sc.Close()
	res, err := sc.Run(ctx, q)
	if err != nil {
		t.Fatal(err)
	}
	if res.Rows != 5000 || stalls != 1 {
		t.Fatalf("rows %d, stalls %d", res.Rows, stalls)
	}
	wantBytes := int64(5000 * (4 + 3 + 300))
	if res.Bytes <= wantBytes {
		t.Fatalf("read %d bytes, want more than the rows' %d", res.Bytes, wantBytes)
	}
	if !res.Stalled.After(res.Sent) || res.Resumed.Sub(res.Stalled) < q.Stall || res.Done.Before(res.Resumed) {
		t.Fatalf("times out of order: %+v", res.StreamTimes)
	}
	// The connection is usable afterwards.
	q.Stall = 0
	if res, err := sc.Run(ctx, q); err != nil || res.Rows != 5000 {
		t.Fatalf("second run: %d rows, %v", res.Rows, err)
	}
}

func TestStreamClientChecksTheResult(t *testing.T) {
	for name, setup := range map[string]func(*fakeServer){
		"corrupt row":  func(fs *fakeServer) { fs.corruptRow = 77 },
		"missing rows": func(fs *fakeServer) { fs.dropRows = 3 },
	} {
		t.Run(name, func(t *testing.T) {
			fs := startFakeServer(t)
			setup(fs)
			q := StreamQuery{Addr: fs.addr(), Rows: 100, RowLen: 10}
			sc, err := DialStream(t.Context(), q.Addr, 0, q.Login)
			if err != nil {
				t.Fatal(err)
			}
			defer sc.Close()
			if _, err := sc.Run(t.Context(), q); err == nil {
				t.Fatal("a wrong result was accepted")
			}
		})
	}
}

func TestStreamClientServerError(t *testing.T) {
	fs := startFakeServer(t)
	sc, err := DialStream(t.Context(), fs.addr(), 0, mysqlproto.ClientOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer sc.Close()
	_, err = sc.Run(t.Context(), StreamQuery{Rows: -1, RowLen: 5})
	var se *mysqlproto.SQLError
	if !errors.As(err, &se) {
		t.Fatalf("got %v, want the server's SQL error", err)
	}
}

func TestStreamClientContext(t *testing.T) {
	fs := startFakeServer(t)
	sc, err := DialStream(t.Context(), fs.addr(), 0, mysqlproto.ClientOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer sc.Close()
	ctx, cancel := context.WithTimeout(t.Context(), 50*time.Millisecond)
	defer cancel()
	q := StreamQuery{Rows: 1000, RowLen: 10, Stall: time.Hour}
	if _, err := sc.Run(ctx, q); err == nil {
		t.Fatal("Run outlived its context")
	}
}

func TestMeasureStallOfSelf(t *testing.T) {
	fs := startFakeServer(t)
	q := StreamQuery{Addr: fs.addr(), Rows: 2000, RowLen: 100, ReadFirst: 8 << 10, Stall: 30 * time.Millisecond}
	rep, err := MeasureStall(t.Context(), StallOptions{Query: q, PID: os.Getpid(), Interval: 5 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Rows != 2000 || rep.RSSBefore <= 0 || rep.RSSPeakStall < rep.RSSBefore || rep.RSSPeak < rep.RSSPeakStall ||
		rep.RSSAfter <= 0 || len(rep.Samples) < 2 || rep.Drain <= 0 || rep.InFlight != -1 {
		t.Fatalf("implausible report: %+v", rep)
	}
}

func TestOpenClients(t *testing.T) {
	fs := startFakeServer(t)
	clients, err := OpenClients(t.Context(), fs.addr(), mysqlproto.ClientOptions{}, 20, 4, SelectOne)
	if err != nil {
		t.Fatal(err)
	}
	for i, c := range clients {
		if c == nil {
			t.Fatalf("client %d missing", i)
		}
	}
	CloseClients(clients, 4)

	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	if _, err := OpenClients(t.Context(), addr, mysqlproto.ClientOptions{}, 5, 2, nil); err == nil {
		t.Fatal("OpenClients succeeded against a closed port")
	}
}

func TestMeasureIdleOfSelf(t *testing.T) {
	fs := startFakeServer(t)
	rep, err := MeasureIdle(t.Context(), IdleOptions{Addr: fs.addr(), PID: os.Getpid(), N: 50, Concurrency: 8, Sample: 10})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Connections != 50 || rep.SampleAsked != 10 || rep.SampleOK != 10 || rep.RSSBefore <= 0 || rep.RSSAfter <= 0 {
		t.Fatalf("implausible report: %+v", rep)
	}
	if !math.IsNaN(rep.GoroutinesPerConn()) || math.IsNaN(rep.RSSPerConn()) {
		t.Fatalf("goroutines/conn %g without metrics, RSS/conn %g", rep.GoroutinesPerConn(), rep.RSSPerConn())
	}
}

var _ io.Closer = (*StreamClient)(nil)

// TestLiveHeap: the heap is read only after the profile endpoint was asked
// for a collection, and the profile is saved.
func TestLiveHeap(t *testing.T) {
	var mu sync.Mutex
	collected := false
	mux := http.NewServeMux()
	mux.HandleFunc("/debug/pprof/heap", func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		defer mu.Unlock()
		collected = r.URL.Query().Get("gc") == "1"
		fmt.Fprint(w, "profile bytes")
	})
	mux.HandleFunc("/metrics", func(w http.ResponseWriter, _ *http.Request) {
		mu.Lock()
		defer mu.Unlock()
		heap := 999
		if collected {
			heap = 123
		}
		fmt.Fprintf(w, "%s %d\n", SeriesHeapAlloc, heap)
	})
	ts := httptest.NewServer(mux)
	defer ts.Close()
	path := t.TempDir() + "/heap.pb.gz"
	v, err := liveHeap(t.Context(), ts.URL+"/metrics", path)
	if err != nil || v != 123 {
		t.Fatalf("liveHeap = %d, %v; want 123 (read after the forced collection)", v, err)
	}
	if b, err := os.ReadFile(path); err != nil || string(b) != "profile bytes" {
		t.Fatalf("saved profile %q, %v", b, err)
	}
	if v, err := liveHeap(t.Context(), "", ""); v != -1 || err != nil {
		t.Fatalf("without metrics: %d, %v", v, err)
	}
	if _, err := liveHeap(t.Context(), ts.URL+"/other", ""); err == nil {
		t.Fatal("a metrics URL not ending in /metrics was accepted")
	}
}
