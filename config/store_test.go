package config

import (
	"errors"
	"os"
	"strconv"
	"sync"
	"testing"
	"time"
)

func TestSetDynamicItem(t *testing.T) {
	s := NewStore(Default())
	before := s.Load()
	var calls []string
	s.Subscribe(func(old, new *Config) {
		calls = append(calls, val(old, "client_max_connections")+"->"+val(new, "client_max_connections"))
	})
	it, err := s.Set("CLIENT_MAX_CONNECTIONS", "100")
	if err != nil || it == nil || it.Name() != "client_max_connections" {
		t.Fatalf("Set = %v, %v", it, err)
	}
	if got := s.Load().ClientMaxConnections; got != 100 {
		t.Errorf("running value %d; want 100 at once", got)
	}
	if before.ClientMaxConnections != 8192 {
		t.Error("Set modified the old snapshot")
	}
	if s.Saved().ClientMaxConnections != 100 || len(s.Pending()) != 0 {
		t.Errorf("saved %d, pending %v", s.Saved().ClientMaxConnections, s.Pending())
	}
	if len(calls) != 1 || calls[0] != "8192->100" {
		t.Errorf("subscriber calls %q", calls)
	}
	// The same value again changes nothing and notifies nobody.
	if _, err := s.Set("client_max_connections", "100"); err != nil {
		t.Fatal(err)
	}
	if len(calls) != 1 {
		t.Errorf("no-op Set notified subscribers: %q", calls)
	}
}

// val is Config.Value without the ok result.
func val(c *Config, name string) string {
	v, _ := c.Value(name)
	return v
}

func TestSetRebootItem(t *testing.T) {
	s := NewStore(Default())
	notified := false
	s.Subscribe(func(old, new *Config) { notified = true })
	it, err := s.Set("listen_port", "3306")
	if err != nil {
		t.Fatal(err)
	}
	if s.Load().ListenPort != 2883 {
		t.Errorf("running listen_port changed to %d before a restart", s.Load().ListenPort)
	}
	if s.Saved().ListenPort != 3306 {
		t.Errorf("saved listen_port %d; want 3306", s.Saved().ListenPort)
	}
	if p := s.Pending(); len(p) != 1 || p[0] != it || !s.IsPending(it) {
		t.Errorf("Pending = %v", p)
	}
	if notified {
		t.Error("subscribers were told about a need_reboot change")
	}
	// Setting it back to the running value clears the pending state.
	if _, err := s.Set("listen_port", "2883"); err != nil {
		t.Fatal(err)
	}
	if len(s.Pending()) != 0 || s.IsPending(it) {
		t.Errorf("Pending = %v after restoring the running value", s.Pending())
	}
	// A dynamic change keeps the pending reboot value out of the running snapshot.
	s.Set("listen_port", "3307")
	s.Set("client_max_connections", "5")
	if c := s.Load(); c.ListenPort != 2883 || c.ClientMaxConnections != 5 {
		t.Errorf("running %d/%d; want 2883/5", c.ListenPort, c.ClientMaxConnections)
	}
	if c := s.Saved(); c.ListenPort != 3307 || c.ClientMaxConnections != 5 {
		t.Errorf("saved %d/%d; want 3307/5", c.ListenPort, c.ClientMaxConnections)
	}
}

func TestSetErrors(t *testing.T) {
	s := NewStore(Default())
	tests := []struct {
		name, value string
		want        error
	}{
		{"no_such_item", "1", ErrUnknownItem},
		{"listen_port", "80", ErrInvalidValue},
		{"connect_observer_max_retries", "9", ErrInvalidValue},
		{"short_async_task_timeout", "5x", ErrInvalidValue},
		{"proxy_id", "300", ErrInvalidValue}, // session id version 1 allows at most 255
		{"app_name", "other", ErrNotAlterable},
	}
	for _, tt := range tests {
		if _, err := s.Set(tt.name, tt.value); !errors.Is(err, tt.want) {
			t.Errorf("Set(%s, %q) = %v; want %v", tt.name, tt.value, err, tt.want)
		}
	}
	if s.Load() != s.Saved() || len(s.Pending()) != 0 {
		t.Error("a failed Set changed the store")
	}
}

func TestSetPasswordHashesAlways(t *testing.T) {
	s := NewStore(Default())
	if _, err := s.Set("obproxy_sys_password", "abc"); err != nil {
		t.Fatal(err)
	}
	if got := s.Load().ObproxySysPassword; got != "a9993e364706816aba3e25717850c26c9cd0d89d" {
		t.Errorf("stored %q", got)
	}
	// ALTER always hashes, even a value that looks like a hash (as ODP does).
	hash := "a9993e364706816aba3e25717850c26c9cd0d89d"
	s.Set("observer_sys_password", hash)
	if got := s.Load().ObserverSysPassword; got != HashPassword(hash) {
		t.Errorf("stored %q; want the hash of the hash", got)
	}
	s.Set("obproxy_sys_password", "")
	if got := s.Load().ObproxySysPassword; got != "" {
		t.Errorf("empty password stored as %q", got)
	}
}

func TestSubscribeCancel(t *testing.T) {
	s := NewStore(Default())
	var a, b int
	cancelA := s.Subscribe(func(_, _ *Config) { a++ })
	s.Subscribe(func(_, _ *Config) { b++ })
	s.Set("client_max_connections", "1")
	cancelA()
	cancelA()
	s.Set("client_max_connections", "2")
	if a != 1 || b != 2 {
		t.Errorf("calls a=%d b=%d; want 1 and 2", a, b)
	}
}

func TestSetPersists(t *testing.T) {
	dir := t.TempDir()
	s, err := Load(&Options{ConfigDir: dir})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Set("congestion_fail_window", "30s"); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Set("rootservice_list", "10.0.0.1:2881"); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Set("obproxy_sys_password", "abc"); err != nil {
		t.Fatal(err)
	}
	// A new start sees every saved value, the need_reboot one included, and does not hash the
	// stored password again.
	s2, err := Load(&Options{ConfigDir: dir})
	if err != nil {
		t.Fatal(err)
	}
	c := s2.Load()
	if c.CongestionFailWindow != 30*time.Second || c.RootserviceList != "10.0.0.1:2881" ||
		c.ObproxySysPassword != "a9993e364706816aba3e25717850c26c9cd0d89d" {
		t.Errorf("after restart: window %v, rslist %q, password %q", c.CongestionFailWindow, c.RootserviceList,
			c.ObproxySysPassword)
	}
	if len(s2.Pending()) != 0 {
		t.Errorf("pending after restart: %v", s2.Pending())
	}
}

func TestSetFailsWhenFileCannotBeWritten(t *testing.T) {
	if os.Geteuid() == 0 {
		t.Skip("root can write anywhere")
	}
	dir := t.TempDir()
	s, err := Load(&Options{ConfigDir: dir})
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(dir, 0o500); err != nil {
		t.Fatal(err)
	}
	defer os.Chmod(dir, 0o700)
	if _, err := s.Set("client_max_connections", "10"); err == nil {
		t.Fatal("Set succeeded although the file could not be written")
	}
	if s.Load().ClientMaxConnections != 8192 || s.Saved().ClientMaxConnections != 8192 {
		t.Error("a Set that could not be persisted was published")
	}
	if ents, _ := os.ReadDir(dir); len(ents) != 1 {
		t.Errorf("dir holds %d entries; want only %s", len(ents), FileName)
	}
}

// TestConcurrentLoadSet runs readers against writers of dynamic and need_reboot items; it is
// meant for -race, which reports any unsynchronised access to a snapshot or the store.
func TestConcurrentLoadSet(t *testing.T) {
	s := NewStore(Default())
	s.Subscribe(func(old, new *Config) {
		if new.ClientMaxConnections == old.ClientMaxConnections && new.ShortAsyncTaskTimeout == old.ShortAsyncTaskTimeout {
			t.Error("subscriber called without a change")
		}
	})
	var wg sync.WaitGroup
	stop := make(chan struct{})
	for r := 0; r < 4; r++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				select {
				case <-stop:
					return
				default:
				}
				c := s.Load()
				if c.ClientMaxConnections < 0 || c.ShortAsyncTaskTimeout < time.Second {
					t.Errorf("torn snapshot %d %v", c.ClientMaxConnections, c.ShortAsyncTaskTimeout)
				}
				_ = s.Pending()
				_, _ = c.Value("client_max_connections")
			}
		}()
	}
	var writers sync.WaitGroup
	for w := 0; w < 4; w++ {
		writers.Add(1)
		go func() {
			defer writers.Done()
			for i := 1; i <= 200; i++ {
				if _, err := s.Set("client_max_connections", strconv.Itoa(w*1000+i)); err != nil {
					t.Error(err)
				}
				if _, err := s.Set("short_async_task_timeout", strconv.Itoa(1+i%60)+"s"); err != nil {
					t.Error(err)
				}
				if _, err := s.Set("listen_port", strconv.Itoa(2000+i)); err != nil {
					t.Error(err)
				}
			}
		}()
	}
	writers.Wait()
	close(stop)
	wg.Wait()
	if s.Load().ListenPort != 2883 {
		t.Error("need_reboot item reached the running snapshot")
	}
}
