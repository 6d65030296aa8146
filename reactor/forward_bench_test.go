package reactor_test

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"log/slog"
	"net"
	"runtime"
	"runtime/debug"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"obgate/config"
	"obgate/internal/assemble"
	"obgate/metrics"
	"obgate/mysqlproto"
	"obgate/reactor"
)

// These benchmarks measure obgate's per-statement path in process: a
// client sends a small COM_QUERY through a reactor.Server to a fake server
// that answers with a canned one-row result: a MySQL server in mysql
// routing mode, an OceanBase one speaking OB 2.0 (fakeob_test.go) in
// OceanBase mode. The fake servers and the client work on precomputed
// bytes and fixed buffers and allocate nothing per statement, so every
// allocation counted is obgate's.

var forwardModes = []string{"netpoll", "net"}

// fwdCaps are the capabilities of the fake server: a plain MySQL 5.7
// server, without DEPRECATE_EOF so that the result ends with an EOF.
const fwdCaps = mysqlproto.ClientLongPassword | mysqlproto.ClientFoundRows | mysqlproto.ClientLongFlag |
	mysqlproto.ClientConnectWithDB | mysqlproto.ClientProtocol41 | mysqlproto.ClientTransactions |
	mysqlproto.ClientSecureConnection | mysqlproto.ClientMultiStatements | mysqlproto.ClientMultiResults |
	mysqlproto.ClientPSMultiResults | mysqlproto.ClientPluginAuth | mysqlproto.ClientPluginAuthLenEncData |
	mysqlproto.ClientConnectAttrs | mysqlproto.ClientSessionTrack

// fakeMySQL accepts any login and answers every COM_QUERY with the same
// precomputed result set.
type fakeMySQL struct {
	fakeListener
	greeting []byte // framed handshake
	okPacket []byte // framed OK after the login
	response []byte // framed result set answering any COM_QUERY
}

func startFakeMySQL(tb testing.TB) *fakeMySQL {
	tb.Helper()
	f := &fakeMySQL{}
	f.greeting, f.okPacket = fakeLogin()
	rs := mysqlproto.ResultSet{Columns: []mysqlproto.Column{mysqlproto.BigintColumn("1")}, Rows: [][]any{{1}}}
	f.response, _ = rs.AppendPackets(nil, 1, fwdCaps, mysqlproto.StatusAutocommit)
	listenFake(tb, &f.fakeListener, f.serve)
	return f
}

// fakeLogin is a fake server's framed greeting and the framed OK that
// accepts any login.
func fakeLogin() (greeting, ok []byte) {
	h := mysqlproto.Handshake{ServerVersion: "5.7.44-fake", ConnectionID: 1, Capability: fwdCaps,
		Charset: byte(mysqlproto.CharsetUTF8MB4), Status: mysqlproto.StatusAutocommit,
		AuthData: []byte("abcdefghijklmnopqrst"), AuthPlugin: mysqlproto.AuthNativePassword}
	greeting, _ = mysqlproto.AppendPacket(nil, 0, h.Append(nil))
	ok, _ = mysqlproto.AppendPacket(nil, 2, mysqlproto.AppendOK(nil, mysqlproto.OK{Status: mysqlproto.StatusAutocommit}, fwdCaps))
	return greeting, ok
}

// serveFakePackets greets c, accepts any login with ok, then writes, for
// each request packet, what answer gives for its payload (nothing when it
// gives nil), until answer says stop or the connection ends. After the
// login it allocates nothing (if answer does not): the header and payload
// buffers are made once.
func serveFakePackets(c net.Conn, greeting, ok []byte, answer func(payload []byte) (reply []byte, goOn bool)) {
	if _, err := c.Write(greeting); err != nil {
		return
	}
	hdr := make([]byte, mysqlproto.HeaderLen)
	buf := make([]byte, 64<<10)
	for login := true; ; login = false {
		if _, err := io.ReadFull(c, hdr); err != nil {
			return
		}
		n, _ := mysqlproto.ParseHeader(hdr)
		if n > len(buf) {
			return
		}
		if _, err := io.ReadFull(c, buf[:n]); err != nil {
			return
		}
		out := ok
		if !login {
			var goOn bool
			if out, goOn = answer(buf[:n]); !goOn {
				return
			}
		}
		if len(out) == 0 {
			continue
		}
		if _, err := c.Write(out); err != nil {
			return
		}
	}
}

// serve answers every COM_QUERY with the result set.
func (f *fakeMySQL) serve(c net.Conn) {
	serveFakePackets(c, f.greeting, f.okPacket, func(p []byte) ([]byte, bool) {
		if len(p) == 0 || p[0] != byte(mysqlproto.ComQuery) {
			return nil, false // COM_QUIT, or nothing expected here
		}
		return f.response, true
	})
}

// forwardEnv is obgate in front of a fake server.
type forwardEnv struct {
	srv      *reactor.Server
	addr     string
	user     string // login name through obgate
	response []byte // what the fake answers a COM_QUERY with
}

// newForwardEnv starts obgate in mysql routing mode in front of a fake
// MySQL server.
func newForwardEnv(tb testing.TB, mode string) *forwardEnv {
	tb.Helper()
	fake := startFakeMySQL(tb)
	env := startForwardProxy(tb, [][2]string{
		{"server_routing_mode", "mysql"},
		{"rootservice_list", fake.addr()},
		{"client_io_mode", mode},
	})
	env.user, env.response = "bench", fake.response
	return env
}

// newForwardOBEnv starts obgate in OceanBase mode (OB 2.0 to the server)
// in front of a fake one-node OceanBase cluster.
func newForwardOBEnv(tb testing.TB, mode string) *forwardEnv {
	tb.Helper()
	fake := startFakeOB(tb)
	settings := [][2]string{
		{"server_routing_mode", "oceanbase"},
		{"rootservice_list", fake.addr()},
		{"rootservice_cluster_name", fakeOBCluster},
		{"client_io_mode", mode},
	}
	env := startForwardProxy(tb, settings)
	env.user, env.response = "bench@"+fakeOBTenant+"#"+fakeOBCluster, fake.response
	return env
}

// startForwardProxy starts a reactor.Server with settings on a loopback
// port, with its routing parts built as cmd/obgate builds them.
func startForwardProxy(tb testing.TB, settings [][2]string) *forwardEnv {
	tb.Helper()
	cfg := config.Default()
	for _, kv := range settings {
		var err error
		if cfg, err = cfg.With(kv[0], kv[1]); err != nil {
			tb.Fatal(err)
		}
	}
	store := config.NewStore(cfg)
	log := slog.New(slog.DiscardHandler)
	parts, err := assemble.Build(store, log, nil, metrics.New())
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(parts.Close)
	srv, err := reactor.NewServer(reactor.Options{Config: store, Logger: log, Version: "bench",
		Clusters: parts.Clusters, Health: parts.Health, Router: parts.Router, ServerTLS: parts.ServerTLS})
	if err != nil {
		tb.Fatal(err)
	}
	parts.StartDetect(srv.DetectTargets)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		tb.Fatal(err)
	}
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ln) }()
	tb.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if err := srv.Shutdown(ctx); err != nil {
			tb.Errorf("shutdown: %v", err)
		}
		if err := <-served; err != nil {
			tb.Errorf("serve: %v", err)
		}
	})
	return &forwardEnv{srv: srv, addr: ln.Addr().String()}
}

// fwdClient sends a precomputed COM_QUERY and reads the known response
// into a fixed buffer.
type fwdClient struct {
	c     *mysqlproto.Client
	conn  net.Conn
	query []byte
	resp  []byte
	want  []byte
}

func (e *forwardEnv) dial(tb testing.TB) *fwdClient {
	tb.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	c, err := mysqlproto.Dial(ctx, e.addr, mysqlproto.ClientOptions{User: e.user})
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { c.Close() })
	if c.Reader().Buffered() != 0 {
		tb.Fatalf("%d unexpected bytes after the login", c.Reader().Buffered())
	}
	q, _ := mysqlproto.AppendPacket(nil, 0, append([]byte{byte(mysqlproto.ComQuery)}, "SELECT 1"...))
	cl := &fwdClient{c: c, conn: c.Conn(), query: q, want: e.response, resp: make([]byte, len(e.response))}
	if err := cl.roundTrip(); err != nil {
		tb.Fatal(err)
	}
	if !bytes.Equal(cl.resp, cl.want) {
		tb.Fatalf("response through obgate:\n%x\nwant the server's:\n%x", cl.resp, cl.want)
	}
	return cl
}

// roundTrip runs one statement. It allocates nothing.
func (cl *fwdClient) roundTrip() error {
	if _, err := cl.conn.Write(cl.query); err != nil {
		return err
	}
	_, err := io.ReadFull(cl.conn, cl.resp)
	return err
}

// BenchmarkForward measures one small statement through obgate in mysql
// routing mode, per client I/O mode: one client, then one client per
// parallel goroutine.
func BenchmarkForward(b *testing.B) { benchForward(b, newForwardEnv) }

// BenchmarkForwardOB is BenchmarkForward in OceanBase mode: obgate speaks
// OB 2.0 to a fake one-node cluster (fakeob_test.go), so each statement
// takes the OceanBase-mode path: server choice, liveness check, OB 2.0
// framing both ways with both checksums, and the query timeout.
func BenchmarkForwardOB(b *testing.B) { benchForward(b, newForwardOBEnv) }

func benchForward(b *testing.B, newEnv func(testing.TB, string) *forwardEnv) {
	for _, mode := range forwardModes {
		b.Run(mode, func(b *testing.B) {
			env := newEnv(b, mode)
			cl := env.dial(b)
			b.ReportAllocs()
			for b.Loop() {
				if err := cl.roundTrip(); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run(mode+"-parallel", func(b *testing.B) {
			env := newEnv(b, mode)
			const perProc = 4 // b.SetParallelism
			clients := make([]*fwdClient, perProc*runtime.GOMAXPROCS(0))
			for i := range clients {
				clients[i] = env.dial(b)
			}
			var next atomic.Int64
			b.SetParallelism(perProc)
			b.ReportAllocs()
			b.ResetTimer()
			b.RunParallel(func(pb *testing.PB) {
				cl := clients[next.Add(1)-1]
				for pb.Next() {
					if err := cl.roundTrip(); err != nil {
						b.Error(err)
						return
					}
				}
			})
		})
	}
}

// forwardRoutingModes are the environments TestForwardAllocs checks:
// obgate in each routing mode in front of its fake server.
var forwardRoutingModes = []struct {
	name   string
	newEnv func(testing.TB, string) *forwardEnv
}{
	{"mysql", newForwardEnv},
	{"oceanbase", newForwardOBEnv},
}

// TestForwardAllocs fails if obgate allocates on the steady-state path of
// a small statement, in either routing mode and either client I/O mode,
// and then lists where it allocates.
func TestForwardAllocs(t *testing.T) {
	if raceEnabled() {
		t.Skip("the race detector drops sync.Pool entries on purpose, so pooled buffers allocate")
	}
	const warmup, runs = 2000, 2000
	for _, rm := range forwardRoutingModes {
		for _, mode := range forwardModes {
			t.Run(rm.name+"/"+mode, func(t *testing.T) {
				env := rm.newEnv(t, mode)
				cl := env.dial(t)
				var failed error
				roundTrip := func() {
					if err := cl.roundTrip(); err != nil && failed == nil {
						failed = err
					}
				}
				sites := profileAllocs(func() {
					for range warmup {
						roundTrip()
					}
				}, func() float64 { return testing.AllocsPerRun(runs, roundTrip) })
				if failed != nil {
					t.Fatal(failed)
				}
				// netpoll v0.7.2 builds a task closure each time a request
				// wakes a connection with an OnRequest callback
				// (connection_onevent.go, onProcess). Sessions the poller
				// drives set none, so there is none of those either.
				dispatch := float64(sites.objectsIn("cloudwego/netpoll.(*connection).onProcess")) / runs
				if own := sites.perRun - dispatch; own > 0.01 || dispatch > 0.01 {
					t.Errorf("%s/%s: %.2f allocations per statement (%.2f in netpoll's dispatch), want 0 on obgate's path and in netpoll's dispatch. Where (objects per statement over %d statements; innermost frame first):\n%s",
						rm.name, mode, sites.perRun, dispatch, runs, sites.describe(runs))
				}
			})
		}
	}
}

// allocSite is a stack that allocated while a measurement ran.
type allocSite struct {
	objects int64
	stack   []uintptr
}

// allocReport is what profileAllocs found.
type allocReport struct {
	perRun float64
	sites  []allocSite // most objects first
}

// profileAllocs runs warm, then measure (which returns allocations per
// run), with every allocation recorded, and returns the stacks that
// allocated during measure.
func profileAllocs(warm func(), measure func() float64) allocReport {
	old := runtime.MemProfileRate
	runtime.MemProfileRate = 1
	defer func() { runtime.MemProfileRate = old }()
	warm()
	before := memProfile()
	perRun := measure()
	after := memProfile()
	var r allocReport
	r.perRun = perRun
	for key, rec := range after {
		if d := rec.AllocObjects - before[key].AllocObjects; d > 0 && !ownAllocation(rec.Stack()) {
			r.sites = append(r.sites, allocSite{d, rec.Stack()})
		}
	}
	slices.SortFunc(r.sites, func(a, b allocSite) int { return int(b.objects - a.objects) })
	return r
}

// describe lists the sites that allocated at least once per 100 runs
// with their stacks (runtime frames at the top left out), and counts the
// rest: one-off allocations such as sync.Pool re-pinning its per-P arrays
// after AllocsPerRun changed GOMAXPROCS.
func (r allocReport) describe(runs int) string {
	var sb strings.Builder
	rare := 0
	for _, s := range r.sites {
		if s.objects*100 < int64(runs) {
			rare++
			continue
		}
		fmt.Fprintf(&sb, "  %.2f objects per statement (%d) at\n", float64(s.objects)/float64(runs), s.objects)
		frames := runtime.CallersFrames(s.stack)
		for depth := 0; depth < 10; {
			fr, more := frames.Next()
			if depth > 0 || !strings.HasPrefix(fr.Function, "runtime.") {
				fmt.Fprintf(&sb, "      %s\n          %s:%d\n", fr.Function, fr.File, fr.Line)
				depth++
			}
			if !more {
				break
			}
		}
	}
	if rare > 0 {
		fmt.Fprintf(&sb, "  and %d sites with fewer than %d objects in all (one-off, not per statement)\n", rare, max(1, runs/100))
	}
	return sb.String()
}

// objectsIn counts the objects allocated by sites whose allocating frame
// (the first one outside the runtime) is function fn.
func (r allocReport) objectsIn(fn string) int64 {
	var n int64
	for _, s := range r.sites {
		frames := runtime.CallersFrames(s.stack)
		for {
			fr, more := frames.Next()
			if !strings.HasPrefix(fr.Function, "runtime.") {
				if strings.HasSuffix(fr.Function, fn) {
					n += s.objects
				}
				break
			}
			if !more {
				break
			}
		}
	}
	return n
}

// memProfile returns the allocation profile by stack, after two
// collections so that it includes every allocation made so far.
func memProfile() map[[32]uintptr]runtime.MemProfileRecord {
	runtime.GC()
	runtime.GC()
	var recs []runtime.MemProfileRecord
	for {
		n, ok := runtime.MemProfile(recs, true)
		if ok {
			recs = recs[:n]
			break
		}
		recs = make([]runtime.MemProfileRecord, n+64)
	}
	m := make(map[[32]uintptr]runtime.MemProfileRecord, len(recs))
	for _, r := range recs {
		m[r.Stack0] = r
	}
	return m
}

// ownAllocation reports whether a stack is memProfile's own (the "before"
// snapshot is allocated after it was taken).
func ownAllocation(stack []uintptr) bool {
	frames := runtime.CallersFrames(stack)
	for {
		fr, more := frames.Next()
		if strings.HasSuffix(fr.Function, ".memProfile") {
			return true
		}
		if !more {
			return false
		}
	}
}

// raceEnabled reports whether the test binary was built with -race.
func raceEnabled() bool {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return false
	}
	for _, s := range bi.Settings {
		if s.Key == "-race" {
			return s.Value == "true"
		}
	}
	return false
}
