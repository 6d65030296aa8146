package reactor_test

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"obgate/internal/testkit"
)

// TestE2EFirstCommandInPieces: a client sends a statement longer than
// netpoll's first read (512 bytes) right after its login. The login
// goroutine looks at the input once the session joins netpoll, while the
// poller reads the rest of the packet; whichever sees it whole serves it.
// A look that saw part of it, then left the session idle after the poller
// had read the rest and seen the session busy, left the statement unserved
// until the client gave up. Many short sessions make that interleaving
// likely, though not certain: without the fix, at least 3 of 40 runs of
// this test (at 480 or 2000 sessions) had a statement hang here, and make
// test's TestTunnelRequestSizeThreshold hung once the same way; with it,
// none of 51. Each statement must be answered within its deadline.
//
// A client-side "invalid connection" that obgate does not see (every
// session counted as a client quit, no error) also shows about once in 30
// runs, with or without the fix; its cause is not found yet, so it is
// logged, not failed, while a statement left unanswered fails the test.
func TestE2EFirstCommandInPieces(t *testing.T) {
	testkit.CheckLeaks(t)
	p := startProxy(t, "netpoll")
	cfg := driverConfig(p, "root", "", testDB)
	db := openDB(t, cfg)
	db.SetMaxIdleConns(0) // every statement on a new session
	db.SetMaxOpenConns(8)
	q := "SELECT 1 /* " + strings.Repeat("x", 3000) + " */"
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	for range 8 {
		wg.Go(func() {
			for range 250 {
				ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
				var one int
				err := db.QueryRowContext(ctx, q).Scan(&one)
				cancel()
				if err != nil {
					errs <- err
					return
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if errors.Is(err, context.DeadlineExceeded) {
			t.Errorf("a first statement of 3 KB was not answered: %v", err)
		} else {
			t.Logf("a first statement of 3 KB failed (not yet explained, see the comment): %v", err)
		}
	}
}
