package main_test

import (
	"runtime"
	"testing"
)

// TestGoMaxProcs: go_max_procs sets the CPUs obgate runs Go code on, at
// start and when changed with ALTER PROXYCONFIG, and 0 gives Go's default
// back; /metrics reports it (go_gomaxprocs).
func TestGoMaxProcs(t *testing.T) {
	p := startObgate(t, "", "-o", "go_max_procs=1")
	if n := scrape(t, p, "go_gomaxprocs"); n != 1 {
		t.Fatalf("go_gomaxprocs %v at start with go_max_procs=1", n)
	}
	admin := adminSession(t, p.addr())
	defer admin.Close()
	if _, err := admin.Exec("ALTER PROXYCONFIG SET go_max_procs = 3"); err != nil {
		t.Fatal(err)
	}
	if n := scrape(t, p, "go_gomaxprocs"); n != 3 {
		t.Errorf("go_gomaxprocs %v after ALTER PROXYCONFIG SET go_max_procs = 3", n)
	}
	if _, err := admin.Exec("ALTER PROXYCONFIG SET go_max_procs = 0"); err != nil {
		t.Fatal(err)
	}
	// This test process runs with Go's default on the same machine.
	if n, want := scrape(t, p, "go_gomaxprocs"), float64(runtime.GOMAXPROCS(0)); n != want {
		t.Errorf("go_gomaxprocs %v after go_max_procs = 0, want Go's default %v", n, want)
	}
}
