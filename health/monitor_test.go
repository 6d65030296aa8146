package health

import (
	"errors"
	"io"
	"log/slog"
	"testing"
	"time"

	"obgate/config"
	"obgate/internal/topology"
)

func testStore(t *testing.T, kv ...string) *config.Store {
	t.Helper()
	st := config.NewStore(nil)
	for i := 0; i+1 < len(kv); i += 2 {
		if _, err := st.Set(kv[i], kv[i+1]); err != nil {
			t.Fatal(err)
		}
	}
	return st
}

// testMonitor returns a monitor on a settable clock.
func testMonitor(t *testing.T, kv ...string) (*Monitor, *time.Time) {
	t.Helper()
	m := NewMonitor(testStore(t, kv...))
	m.SetLogger(slog.New(slog.NewTextHandler(io.Discard, nil)))
	now := time.Unix(1_000_000, 0)
	m.now = func() time.Time { return now }
	t.Cleanup(m.Close)
	return m, &now
}

func TestConnectFailureBlocksUntilRetryIntervalWithoutProbes(t *testing.T) {
	m, now := testMonitor(t, "congestion_retry_interval", "20s")
	if !m.Available("", "a:1") {
		t.Fatal("unknown server should be available")
	}
	m.ConnectFailed("", "a:1")
	if m.Available("", "a:1") {
		t.Fatal("server that failed a connect just now is available")
	}
	if !m.Available("", "b:1") {
		t.Fatal("another server became unavailable")
	}
	*now = now.Add(19 * time.Second)
	if m.Available("", "a:1") {
		t.Fatal("available before congestion_retry_interval passed")
	}
	*now = now.Add(time.Second)
	if !m.Available("", "a:1") {
		t.Fatal("still unavailable after congestion_retry_interval")
	}
	m.ConnectFailed("", "a:1")
	m.ConnectSucceeded("", "a:1")
	if !m.Available("", "a:1") {
		t.Fatal("a successful connect does not clear the failure")
	}
}

func TestConnectFailureWaitsForAProbeOnceStarted(t *testing.T) {
	m, now := testMonitor(t)
	m.started.Store(true) // the detect task owns recovery
	m.ConnectFailed("", "a:1")
	*now = now.Add(time.Hour)
	if m.Available("", "a:1") {
		t.Fatal("time alone cleared a connect failure while probes run")
	}
	m.probeSucceeded(m.Entry("", "a:1"), m.cfg.Load())
	if !m.Available("", "a:1") {
		t.Fatal("a successful probe did not clear the connect failure")
	}
}

func TestEnableCongestionOffIgnoresFailures(t *testing.T) {
	m, _ := testMonitor(t, "enable_congestion", "false")
	m.ConnectFailed("", "a:1")
	if !m.Available("", "a:1") {
		t.Fatal("enable_congestion=false still blocks a server")
	}
}

func TestAvailableDoesNotAllocate(t *testing.T) {
	m, _ := testMonitor(t)
	m.ConnectFailed("", "a:1")
	allocs := testing.AllocsPerRun(1000, func() {
		_ = m.Available("", "a:1")
		_ = m.Available("", "b:1")
	})
	if allocs != 0 {
		t.Fatalf("Available allocates %.1f times per call pair", allocs)
	}
}

func TestAliveListAfterThresholdWithinWindow(t *testing.T) {
	m, now := testMonitor(t, "congestion_failure_threshold", "5", "congestion_fail_window", "120s")
	m.started.Store(true)
	e := m.Entry("", "a:1")
	for i := range 4 {
		e.AliveFailed("err_8001")
		*now = now.Add(10 * time.Second)
		if !m.Available("", "a:1") {
			t.Fatalf("listed after %d failures", i+1)
		}
	}
	e.AliveFailed("err_8001")
	if m.Available("", "a:1") {
		t.Fatal("not listed after 5 failures within the window")
	}
	v := m.Views("", false)
	if len(v) != 1 || !v[0].AliveCongested || v[0].AliveFailureEvents != 5 || v[0].StatAliveFailures != 5 {
		t.Fatalf("view = %+v", v)
	}
}

func TestFailuresOutsideTheWindowDoNotList(t *testing.T) {
	m, now := testMonitor(t, "congestion_failure_threshold", "3", "congestion_fail_window", "17s")
	e := m.Entry("", "a:1")
	for range 10 {
		e.AliveFailed("timeout")
		*now = now.Add(10 * time.Second) // bins of 2 s, window of 34 s: at most 3-4 events
		if e.aliveHist.count(m.nowNanos()) > 4 {
			t.Fatalf("window holds %d events", e.aliveHist.count(m.nowNanos()))
		}
	}
	m2, now2 := testMonitor(t, "congestion_failure_threshold", "3", "congestion_fail_window", "10s")
	e2 := m2.Entry("", "a:1")
	for range 10 {
		e2.AliveFailed("timeout")
		*now2 = now2.Add(20 * time.Second)
	}
	if e2.alive.Load() != 0 {
		t.Fatal("failures 20 s apart listed a server with a 10 s window")
	}
}

func TestThresholdChangeReevaluatesAndWindowChangeResets(t *testing.T) {
	m, _ := testMonitor(t, "congestion_failure_threshold", "5")
	e := m.Entry("", "a:1")
	for range 3 {
		e.AliveFailed("x")
	}
	if e.alive.Load() != 0 {
		t.Fatal("listed below threshold")
	}
	if _, err := m.cfg.Set("congestion_failure_threshold", "3"); err != nil {
		t.Fatal(err)
	}
	if e.alive.Load() == 0 {
		t.Fatal("lowering the threshold below the events did not list the server")
	}
	if _, err := m.cfg.Set("congestion_failure_threshold", "10"); err != nil {
		t.Fatal(err)
	}
	if e.alive.Load() != 0 {
		t.Fatal("raising the threshold did not clear the flag")
	}
	if _, err := m.cfg.Set("congestion_fail_window", "60s"); err != nil {
		t.Fatal(err)
	}
	if n := e.aliveHist.count(m.nowNanos()); n != 0 {
		t.Fatalf("window change kept %d events", n)
	}
}

func TestThresholdZeroDisablesAliveList(t *testing.T) {
	m, _ := testMonitor(t, "congestion_failure_threshold", "0")
	e := m.Entry("", "a:1")
	for range 20 {
		e.AliveFailed("x")
	}
	if e.alive.Load() != 0 {
		t.Fatal("congestion_failure_threshold=0 still lists")
	}
}

func testTable(zoneUpgrade bool, states ...topology.ServerState) []*topology.Server {
	z := &topology.Zone{Name: "z1", Region: "r1"}
	if zoneUpgrade {
		z.State = topology.ZoneUpgrade
	}
	var servers []*topology.Server
	for i, st := range states {
		servers = append(servers, &topology.Server{Addr: string(rune('a'+i)) + ":1", Zone: z, State: st})
	}
	return servers
}

func TestStatusListMapsStatesAsODP(t *testing.T) {
	m, now := testMonitor(t, "min_keep_congestion_interval", "20s")
	m.TableChanged("c", 0, testTable(false, topology.ServerActive, topology.ServerInactive, topology.ServerReplay,
		topology.ServerUpgrade, topology.ServerDeleting))
	// A DELETING server takes nothing new (a server being emptied).
	want := map[string]bool{"a:1": true, "b:1": false, "c:1": false, "d:1": false, "e:1": false}
	for addr, ok := range want {
		if got := m.lookup("c", addr); got == nil || !got.congested() != ok {
			t.Errorf("%s: available = %v, want %v", addr, got != nil && !got.congested(), ok)
		}
	}
	// b comes back ACTIVE 5 s after it was listed dead: as ODP's
	// check_and_set_alive, it leaves the dead list for the alive list
	// (with a failure), whose own min_keep_congestion_interval starts now.
	*now = now.Add(5 * time.Second)
	m.TableChanged("c", 0, testTable(false, topology.ServerActive, topology.ServerActive))
	b := m.lookup("c", "b:1")
	if b.dead.Load() != 0 || b.alive.Load() == 0 || b.aliveEvents.Load() != 1 {
		t.Fatalf("ACTIVE within min_keep_congestion_interval of dead: dead %d alive %d events %d, want alive-listed",
			b.dead.Load(), b.alive.Load(), b.aliveEvents.Load())
	}
	if m.lookup("c", "c:1") != nil {
		t.Fatal("a server no longer listed kept its entry")
	}
	*now = now.Add(15 * time.Second)
	m.TableChanged("c", 0, testTable(false, topology.ServerActive, topology.ServerActive))
	if !b.congested() {
		t.Fatal("alive flag cleared before min_keep_congestion_interval")
	}
	*now = now.Add(5 * time.Second)
	m.TableChanged("c", 0, testTable(false, topology.ServerActive, topology.ServerActive))
	if b.congested() {
		t.Fatal("alive flag not cleared after min_keep_congestion_interval")
	}
	// A server dead for longer than the interval leaves both lists at once.
	m.TableChanged("c", 0, testTable(false, topology.ServerActive, topology.ServerInactive))
	*now = now.Add(21 * time.Second)
	m.TableChanged("c", 0, testTable(false, topology.ServerActive, topology.ServerActive))
	if b.congested() {
		t.Fatal("dead flag not cleared after min_keep_congestion_interval")
	}
	// An alive flag from traffic failures is held for the interval by
	// the refresh too.
	for range 10 {
		b.AliveFailed("x")
	}
	if b.alive.Load() == 0 {
		t.Fatal("failures did not list the server")
	}
	*now = now.Add(10 * time.Second)
	m.TableChanged("c", 0, testTable(false, topology.ServerActive, topology.ServerActive))
	if b.alive.Load() == 0 {
		t.Fatal("alive flag cleared by the refresh before min_keep_congestion_interval")
	}
	*now = now.Add(11 * time.Second)
	m.TableChanged("c", 0, testTable(false, topology.ServerActive, topology.ServerActive))
	if b.alive.Load() != 0 {
		t.Fatal("alive flag kept by the refresh after min_keep_congestion_interval")
	}
	// A zone being upgraded force-congests its servers at once.
	m.TableChanged("c", 0, testTable(true, topology.ServerActive))
	if !m.lookup("c", "a:1").congested() {
		t.Fatal("server in an INACTIVE zone is not congested")
	}
	m.TableChanged("c", 0, testTable(false, topology.ServerActive))
	if m.lookup("c", "a:1").congested() {
		t.Fatal("zone back to ACTIVE did not clear force congestion")
	}
	// DELETING holds the server at once and lets it go when the deletion
	// is cancelled (ACTIVE again), with no minimum keep time.
	m.TableChanged("c", 0, testTable(false, topology.ServerDeleting))
	if !m.lookup("c", "a:1").congested() {
		t.Fatal("a DELETING server is available")
	}
	m.TableChanged("c", 0, testTable(false, topology.ServerActive))
	if m.lookup("c", "a:1").congested() {
		t.Fatal("a server whose deletion was cancelled stays listed")
	}
}

func TestDetectStrikesListAndCloseThenProbeClears(t *testing.T) {
	m, _ := testMonitor(t, "server_detect_fail_threshold", "3")
	var closed []string
	m.OnDetectDead(func(_, addr string) { closed = append(closed, addr) })
	e := m.Entry("", "a:1")
	cfg := m.cfg.Load()
	fail := errors.New("no handshake")
	m.probeFailed(e, cfg, fail)
	m.probeFailed(e, cfg, fail)
	if e.detect.Load() != 0 || len(closed) != 0 {
		t.Fatal("listed before the third strike")
	}
	m.probeFailed(e, cfg, fail)
	if e.detect.Load() == 0 || len(closed) != 1 || closed[0] != "a:1" {
		t.Fatalf("third strike: detect=%d closed=%v", e.detect.Load(), closed)
	}
	if v := m.Views("", false); len(v) != 1 || v[0].ServerState != "DETECT_DEAD" {
		t.Fatalf("views = %+v", v)
	}
	m.probeSucceeded(e, cfg)
	if e.congested() {
		t.Fatal("a successful probe left the server listed")
	}
	if v := m.Views("", true); v[0].ServerState != "DETECT_ALIVE" {
		t.Fatalf("state after recovery = %s", v[0].ServerState)
	}
}

func TestProbeKeepsAliveFlagUntilRetryIntervalIsQuiet(t *testing.T) {
	m, now := testMonitor(t, "congestion_failure_threshold", "1", "congestion_retry_interval", "20s")
	e := m.Entry("", "a:1")
	e.AliveFailed("err_8001")
	m.probeSucceeded(e, m.cfg.Load())
	if e.alive.Load() == 0 {
		t.Fatal("a handshake probe cleared fresh traffic failures")
	}
	*now = now.Add(20 * time.Second)
	m.probeSucceeded(e, m.cfg.Load())
	if e.alive.Load() != 0 {
		t.Fatal("probe after a quiet congestion_retry_interval did not clear")
	}
}

func TestProbeReasonPerMode(t *testing.T) {
	m, now := testMonitor(t, "server_detect_mode", "1", "congestion_retry_interval", "20s", "congestion_failure_threshold", "1")
	e := m.Entry("", "a:1")
	cfg := m.cfg.Load()
	if r := m.probeReason(e, cfg, m.nowNanos()); r != noProbe {
		t.Fatalf("idle healthy server probed in mode 1: %d", r)
	}
	e.Begin()
	if r := m.probeReason(e, cfg, m.nowNanos()); r != probeDetect {
		t.Fatalf("busy server not probed in mode 1: %d", r)
	}
	e.End()
	if _, err := m.cfg.Set("server_detect_mode", "0"); err != nil {
		t.Fatal(err)
	}
	cfg = m.cfg.Load()
	e.AliveFailed("x")
	if r := m.probeReason(e, cfg, m.nowNanos()); r != noProbe {
		t.Fatalf("alive-congested server probed before congestion_retry_interval: %d", r)
	}
	*now = now.Add(21 * time.Second)
	if r := m.probeReason(e, cfg, m.nowNanos()); r != probeRecover {
		t.Fatalf("alive-congested server not probed to recover in mode 0: %d", r)
	}
}
