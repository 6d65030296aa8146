package main_test

import (
	"context"
	"database/sql"
	"os"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	_ "github.com/go-sql-driver/mysql"
	"obgate/internal/testkit"
	"obgate/mysqlproto"
)

// TestGoMaxProcs: go_max_procs sets the CPUs obgate runs Go code on, at
// start and when changed with ALTER PROXYCONFIG; /metrics reports it
// (go_gomaxprocs). With 0 obgate chooses by load: one CPU while idle or
// while its statements only wait on servers, Go's default while its own
// work needs more than one CPU, and one again once that stops.
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

	// Eight clients, each with a statement in flight nearly all the time,
	// that costs obgate almost nothing: it stays on one CPU. Watched over
	// at least 400 statements (over a second, ten governor ticks).
	db, err := sql.Open("mysql", "root@tcp("+p.addr()+")/")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var done atomic.Int64
	stopSleepers := loop(t, 8, func(ctx context.Context) {
		if _, err := db.ExecContext(ctx, "DO SLEEP(0.02)"); err == nil {
			done.Add(1)
		}
	})
	// Scraped once a governor tick (100 ms): /metrics is obgate's own work too.
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	for deadline := time.Now().Add(60 * time.Second); done.Load() < 400; <-tick.C {
		if n := scrape(t, p, "go_gomaxprocs"); n != 1 {
			t.Fatalf("go_gomaxprocs %v after %d statements that only wait on the server, want 1", n, done.Load())
		}
		if time.Now().After(deadline) {
			t.Fatalf("the sleeping clients ran %d statements in 60 s", done.Load())
		}
	}
	stopSleepers()

	// Eight admin sessions asking for every parameter back to back: that
	// is obgate's own work, more than one CPU's worth (or queued behind
	// it on a machine whose other processes take that CPU).
	stopAdmins := loop(t, 8, func(ctx context.Context) {
		c, err := mysqlproto.Dial(ctx, p.addr(), mysqlproto.ClientOptions{User: "root@proxysys"})
		if err != nil {
			return
		}
		defer c.Close()
		for range 50 {
			if _, err := c.Query("SHOW PROXYCONFIG"); err != nil {
				return
			}
		}
	})
	testkit.Eventually(t, 30*time.Second, procs(wide), "eight admin sessions busy, and go_gomaxprocs is not Go's default %v", wide)
	stopAdmins()
	testkit.Eventually(t, 60*time.Second, procs(1), "the admin sessions stopped, and obgate did not go back to one CPU")
}

// loop runs body in n goroutines over and over until the returned stop
// is called (or the test ends); stop waits for them.
func loop(t *testing.T, n int, body func(ctx context.Context)) (stop func()) {
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	for range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for ctx.Err() == nil {
				body(ctx)
			}
		}()
	}
	var once sync.Once
	stop = func() { once.Do(func() { cancel(); wg.Wait() }) }
	t.Cleanup(stop)
	return stop
}
