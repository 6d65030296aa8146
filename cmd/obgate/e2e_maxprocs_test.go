package main_test

import (
	"context"
	"database/sql"
	"os"
	"runtime"
	"sync"
	"testing"
	"time"

	_ "github.com/go-sql-driver/mysql"
	"obgate/internal/testkit"
)

// TestGoMaxProcs: go_max_procs sets the CPUs obgate runs Go code on, at
// start and when changed with ALTER PROXYCONFIG; /metrics reports it
// (go_gomaxprocs). With 0 obgate chooses by load: one CPU while idle or
// serving one statement at a time, Go's default while clients run
// statements side by side, and one again once they stop.
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
	wide := float64(runtime.GOMAXPROCS(0))
	if _, env := os.LookupEnv("GOMAXPROCS"); env || wide < 2 {
		if n := scrape(t, p, "go_gomaxprocs"); n != wide {
			t.Errorf("go_gomaxprocs %v after go_max_procs = 0, want Go's default %v", n, wide)
		}
		return // nothing for the load to choose
	}
	procs := func(want float64) func() bool {
		return func() bool { return scrape(t, p, "go_gomaxprocs") == want }
	}
	testkit.Eventually(t, 30*time.Second, procs(1), "an idle obgate with go_max_procs=0 never went down to one CPU")

	// Eight clients, each with a statement in flight nearly all the time.
	db, err := sql.Open("mysql", "root@tcp("+p.addr()+")/")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	ctx, stop := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for ctx.Err() == nil {
				_, _ = db.ExecContext(ctx, "DO SLEEP(0.02)")
			}
		}()
	}
	testkit.Eventually(t, 30*time.Second, procs(wide), "eight clients with statements in flight, and go_gomaxprocs is not Go's default %v", wide)
	stop()
	wg.Wait()
	testkit.Eventually(t, 30*time.Second, procs(1), "the clients stopped, and obgate did not go back to one CPU")
}
