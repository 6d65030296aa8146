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
	// procs polls go_gomaxprocs once a governor tick (100 ms): /metrics
	// is obgate's own work too, and scraped every few milliseconds it
	// would keep obgate from being calm.
	procs := func(want float64) func() bool {
		var last time.Time
		return func() bool {
			if wait := 100*time.Millisecond - time.Since(last); wait > 0 {
				<-time.After(wait)
			}
			last = time.Now()
			return scrape(t, p, "go_gomaxprocs") == want
		}
	}
	testkit.Eventually(t, 30*time.Second, procs(1), "an idle obgate with go_max_procs=0 never went down to one CPU")

	// Eight clients, each with a statement in flight nearly all the time,
	// that costs obgate almost nothing: it stays on one CPU. Their logins
	// come first: each one is a reason for every CPU (client I/O on Go's
	// network poller), so the watch starts once obgate narrowed again.
	db, err := sql.Open("mysql", "root@tcp("+p.addr()+")/")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	db.SetMaxIdleConns(8)
	db.SetMaxOpenConns(8)
	var logins sync.WaitGroup
	for range 8 {
		logins.Go(func() { _, _ = db.Exec("DO SLEEP(0.1)") })
	}
	logins.Wait()
	testkit.Eventually(t, 60*time.Second, procs(1), "eight clients logged in, and obgate did not go back to one CPU")
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

	// A client that logs in for every statement: logins run on Go's
	// network poller, which needs a CPU the event loop does not hold.
	churn, err := sql.Open("mysql", "root@tcp("+p.addr()+")/")
	if err != nil {
		t.Fatal(err)
	}
	defer churn.Close()
	churn.SetMaxIdleConns(0)
	stopChurn := loop(t, 1, func(ctx context.Context) { _, _ = churn.ExecContext(ctx, "DO 1") })
	testkit.Eventually(t, 30*time.Second, procs(wide), "a client logging in for every statement, and go_gomaxprocs is not Go's default %v", wide)
	stopChurn()
	testkit.Eventually(t, 60*time.Second, procs(1), "the logins stopped, and obgate did not go back to one CPU")

	// Eight admin sessions asking for every parameter back to back: that
	// is obgate's own work, more than one CPU's worth (or queued behind
	// it on a machine whose other processes take that CPU). They log in
	// first, and start once obgate is on one CPU again.
	admins := make([]*mysqlproto.Client, 8)
	for i := range admins {
		admins[i] = adminSession(t, p.addr())
		defer admins[i].Close()
	}
	testkit.Eventually(t, 60*time.Second, procs(1), "eight admin sessions logged in, and obgate did not go back to one CPU")
	next := make(chan *mysqlproto.Client, len(admins))
	for _, c := range admins {
		next <- c
	}
	stopAdmins := loop(t, len(admins), func(context.Context) {
		c := <-next
		defer func() { next <- c }()
		_, _ = c.Query("SHOW PROXYCONFIG")
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
