package health

import (
	"testing"
	"time"

	"obgate/config"
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

func TestConnectFailureMakesServerUnavailableForRetryInterval(t *testing.T) {
	m := NewMonitor(testStore(t, "congestion_retry_interval", "20s"))
	now := time.Unix(1000, 0)
	m.now = func() time.Time { return now }
	if !m.Available(nil, "a:1") {
		t.Fatal("unknown server should be available")
	}
	m.ConnectFailed(nil, "a:1")
	if m.Available(nil, "a:1") {
		t.Fatal("server that failed a connect just now is available")
	}
	if !m.Available(nil, "b:1") {
		t.Fatal("another server became unavailable")
	}
	now = now.Add(19 * time.Second)
	if m.Available(nil, "a:1") {
		t.Fatal("available before congestion_retry_interval passed")
	}
	now = now.Add(time.Second)
	if !m.Available(nil, "a:1") {
		t.Fatal("still unavailable after congestion_retry_interval")
	}
	m.ConnectFailed(nil, "a:1")
	m.ConnectSucceeded(nil, "a:1")
	if !m.Available(nil, "a:1") {
		t.Fatal("a successful connect does not clear the failure")
	}
}

func TestEnableCongestionOffIgnoresFailures(t *testing.T) {
	m := NewMonitor(testStore(t, "enable_congestion", "false"))
	m.ConnectFailed(nil, "a:1")
	if !m.Available(nil, "a:1") {
		t.Fatal("enable_congestion=false still blocks a server")
	}
}

func TestAvailableDoesNotAllocate(t *testing.T) {
	m := NewMonitor(testStore(t))
	m.ConnectFailed(nil, "a:1")
	allocs := testing.AllocsPerRun(1000, func() {
		_ = m.Available(nil, "a:1")
		_ = m.Available(nil, "b:1")
	})
	if allocs != 0 {
		t.Fatalf("Available allocates %.1f times per call pair", allocs)
	}
}
