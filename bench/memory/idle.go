package memory

import (
	"context"
	"errors"
	"fmt"
	"math"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"obgate/mysqlproto"
)

// OpenClients opens n logged-in connections to addr, at most concurrency at
// a time, and runs check (if not nil) on each right after its login. On an
// error it closes what it opened and returns the first error.
func OpenClients(ctx context.Context, addr string, login mysqlproto.ClientOptions, n, concurrency int, check func(*mysqlproto.Client) error) ([]*mysqlproto.Client, error) {
	if login.User == "" {
		login.User = "root"
	}
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	clients := make([]*mysqlproto.Client, n)
	var next atomic.Int64
	var wg sync.WaitGroup
	for range max(1, min(concurrency, n)) {
		wg.Go(func() {
			for {
				i := int(next.Add(1) - 1)
				if i >= n || ctx.Err() != nil {
					return
				}
				c, err := openOne(ctx, addr, login, check)
				if err != nil {
					cancel(fmt.Errorf("connection %d of %d: %w", i+1, n, err))
					return
				}
				clients[i] = c
			}
		})
	}
	wg.Wait()
	if err := context.Cause(ctx); err != nil {
		CloseClients(clients, concurrency)
		return nil, err
	}
	return clients, nil
}

func openOne(ctx context.Context, addr string, login mysqlproto.ClientOptions, check func(*mysqlproto.Client) error) (*mysqlproto.Client, error) {
	dctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	c, err := mysqlproto.Dial(dctx, addr, login)
	if err != nil {
		return nil, err
	}
	if check != nil {
		_ = c.Conn().SetDeadline(time.Now().Add(30 * time.Second))
		if err := check(c); err != nil {
			c.Conn().Close()
			return nil, err
		}
		_ = c.Conn().SetDeadline(time.Time{})
	}
	return c, nil
}

// CloseClients closes every non-nil client (COM_QUIT, then close), at most
// concurrency at a time.
func CloseClients(clients []*mysqlproto.Client, concurrency int) {
	var next atomic.Int64
	var wg sync.WaitGroup
	for range max(1, min(concurrency, len(clients))) {
		wg.Go(func() {
			for {
				i := int(next.Add(1) - 1)
				if i >= len(clients) {
					return
				}
				if c := clients[i]; c != nil {
					_ = c.Conn().SetDeadline(time.Now().Add(5 * time.Second))
					_ = c.Close()
				}
			}
		})
	}
	wg.Wait()
}

// SelectOne runs SELECT 1 and checks the answer.
func SelectOne(c *mysqlproto.Client) error {
	res, err := c.Query("SELECT 1")
	if err != nil {
		return err
	}
	if len(res.Rows) != 1 || len(res.Rows[0]) != 1 || string(res.Rows[0][0]) != "1" {
		return fmt.Errorf("SELECT 1 answered %q", res.Rows)
	}
	return nil
}

// IdleOptions describe an idle-connection measurement.
type IdleOptions struct {
	Addr  string                   // the proxy
	Login mysqlproto.ClientOptions // User "root" when empty
	PID   int                      // the proxy's process
	// MetricsURL is obgate's /metrics, for goroutines and the session
	// gauge; empty for a proxy without one.
	MetricsURL string
	N          int // connections to hold
	// Concurrency bounds the logins in flight.
	Concurrency int
	// Sample is how many held connections must answer SELECT 1 again
	// before they are closed.
	Sample int
	// Settle is the pause before each RSS reading, so that work in flight
	// (goroutines exiting, buffers going back to pools) is over.
	Settle time.Duration
	// HeapProfile, when not empty and MetricsURL is set, is where the heap
	// profile of the proxy holding the idle connections is saved (taken
	// from its /debug/pprof/heap right after a forced GC).
	HeapProfile string
}

// IdleReport is what holding N idle connections cost a proxy.
type IdleReport struct {
	Connections int           `json:"connections"`
	Concurrency int           `json:"concurrency"`
	OpenTime    time.Duration `json:"open_ns"`
	RSSBefore   int64         `json:"rss_before"`
	RSSAfter    int64         `json:"rss_after"` // all N held and idle
	// Goroutines is go_goroutines before and after. These and the session
	// counts are -1 without metrics.
	GoroutinesBefore float64 `json:"goroutines_before"`
	GoroutinesAfter  float64 `json:"goroutines_after"`
	// SessionsHeld is odp_current_session{sessionType="client"} while the
	// connections are held; SessionsAfterClose once they were closed.
	SessionsHeld float64 `json:"sessions_held"`
	// HeapBefore and HeapAfter are go_memstats_heap_alloc_bytes right
	// after a garbage collection that the measurement forced (through
	// /debug/pprof/heap?gc=1, after the RSS was read): the live heap,
	// without the garbage and the free pages an RSS reading includes. -1
	// without metrics.
	HeapBefore         int64   `json:"heap_before"`
	HeapAfter          int64   `json:"heap_after"`
	SessionsAfterClose float64 `json:"sessions_after_close"`
	// GoroutinesAfterClose is go_goroutines once the sessions are gone and
	// the goroutine count is back at GoroutinesBefore, or after 30 s.
	GoroutinesAfterClose float64 `json:"goroutines_after_close"`
	SampleAsked          int     `json:"sample_asked"`
	SampleOK             int     `json:"sample_ok"`
}

// RSSPerConn is the RSS growth per held connection, in bytes.
func (r IdleReport) RSSPerConn() float64 {
	if r.Connections == 0 {
		return math.NaN()
	}
	return float64(r.RSSAfter-r.RSSBefore) / float64(r.Connections)
}

// HeapPerConn is the live-heap growth per held connection, in bytes; NaN
// without metrics.
func (r IdleReport) HeapPerConn() float64 {
	if r.Connections == 0 || r.HeapBefore < 0 || r.HeapAfter < 0 {
		return math.NaN()
	}
	return float64(r.HeapAfter-r.HeapBefore) / float64(r.Connections)
}

// GoroutinesPerConn is the goroutine growth per held connection; NaN
// without metrics.
func (r IdleReport) GoroutinesPerConn() float64 {
	if r.Connections == 0 || r.GoroutinesBefore < 0 {
		return math.NaN()
	}
	return (r.GoroutinesAfter - r.GoroutinesBefore) / float64(r.Connections)
}

// MeasureIdle opens N connections through the proxy (each logs in and runs
// SELECT 1), leaves them idle, reads the proxy's RSS and goroutines, checks
// that a sample still answers, closes them all and, with metrics, waits
// until the proxy counts no client session.
func MeasureIdle(ctx context.Context, o IdleOptions) (IdleReport, error) {
	rep := IdleReport{Concurrency: o.Concurrency, GoroutinesBefore: -1, GoroutinesAfter: -1,
		SessionsHeld: -1, SessionsAfterClose: -1, GoroutinesAfterClose: -1, HeapBefore: -1, HeapAfter: -1}
	scrape := func(series string) (float64, error) {
		if o.MetricsURL == "" {
			return -1, nil
		}
		return ScrapeValue(ctx, o.MetricsURL, series)
	}
	// Warm-up: the first logins start pools and pollers that stay; they
	// are not per-connection costs.
	warm, err := OpenClients(ctx, o.Addr, o.Login, max(1, o.Concurrency), o.Concurrency, SelectOne)
	if err != nil {
		return rep, fmt.Errorf("warm-up: %w", err)
	}
	CloseClients(warm, o.Concurrency)
	if o.MetricsURL != "" {
		wctx, cancel := context.WithTimeout(ctx, 30*time.Second)
		_, err := WaitMetric(wctx, o.MetricsURL, SeriesClientSession, func(v float64) bool { return v == 0 })
		cancel()
		if err != nil {
			return rep, fmt.Errorf("after the warm-up: %w", err)
		}
	}
	if err := sleepCtx(ctx, o.Settle); err != nil {
		return rep, err
	}
	if rep.RSSBefore, err = RSS(o.PID); err != nil {
		return rep, err
	}
	if rep.GoroutinesBefore, err = scrape(SeriesGoroutines); err != nil {
		return rep, err
	}
	if rep.HeapBefore, err = liveHeap(ctx, o.MetricsURL, ""); err != nil {
		return rep, err
	}

	begin := time.Now()
	clients, err := OpenClients(ctx, o.Addr, o.Login, o.N, o.Concurrency, SelectOne)
	if err != nil {
		return rep, err
	}
	rep.OpenTime = time.Since(begin)
	rep.Connections = len(clients)
	defer func() { CloseClients(clients, o.Concurrency) }()

	if err := sleepCtx(ctx, o.Settle); err != nil {
		return rep, err
	}
	if rep.RSSAfter, err = RSS(o.PID); err != nil {
		return rep, err
	}
	if rep.GoroutinesAfter, err = scrape(SeriesGoroutines); err != nil {
		return rep, err
	}
	if rep.SessionsHeld, err = scrape(SeriesClientSession); err != nil {
		return rep, err
	}
	if rep.HeapAfter, err = liveHeap(ctx, o.MetricsURL, o.HeapProfile); err != nil {
		return rep, err
	}

	// Spread the sample over the connections: the oldest, the newest and
	// those in between.
	rep.SampleAsked = min(o.Sample, len(clients))
	var errs []error
	for k := range rep.SampleAsked {
		i := k * (len(clients) - 1) / max(1, rep.SampleAsked-1)
		c := clients[i]
		_ = c.Conn().SetDeadline(time.Now().Add(30 * time.Second))
		if err := SelectOne(c); err != nil {
			errs = append(errs, fmt.Errorf("connection %d: %w", i+1, err))
			continue
		}
		_ = c.Conn().SetDeadline(time.Time{})
		rep.SampleOK++
	}

	CloseClients(clients, o.Concurrency)
	clients = nil
	if o.MetricsURL != "" {
		wctx, cancel := context.WithTimeout(ctx, 30*time.Second)
		rep.SessionsAfterClose, err = WaitMetric(wctx, o.MetricsURL, SeriesClientSession, func(v float64) bool { return v == 0 })
		if err != nil {
			errs = append(errs, fmt.Errorf("after closing every connection: %w", err))
		}
		// Session goroutines may still be on their way out; a leak stays.
		rep.GoroutinesAfterClose, _ = WaitMetric(wctx, o.MetricsURL, SeriesGoroutines, func(v float64) bool { return v <= rep.GoroutinesBefore })
		cancel()
	}
	if len(errs) > 0 {
		return rep, errors.Join(errs...)
	}
	return rep, nil
}

// SeriesHeapAlloc is the Go heap's allocated bytes (live and not yet
// collected).
const SeriesHeapAlloc = "go_memstats_heap_alloc_bytes"

// liveHeap forces a garbage collection in the proxy behind metricsURL (its
// heap profile endpoint, with gc=1), saving the profile to profilePath
// when that is not empty, and then reads its allocated heap bytes. It
// returns -1 without metrics.
func liveHeap(ctx context.Context, metricsURL, profilePath string) (int64, error) {
	if metricsURL == "" {
		return -1, nil
	}
	base, ok := strings.CutSuffix(metricsURL, "/metrics")
	if !ok {
		return -1, fmt.Errorf("metrics URL %q does not end in /metrics", metricsURL)
	}
	prof, err := Scrape(ctx, base+"/debug/pprof/heap?gc=1")
	if err != nil {
		return -1, fmt.Errorf("heap profile: %w", err)
	}
	if profilePath != "" {
		if err := os.WriteFile(profilePath, []byte(prof), 0o644); err != nil {
			return -1, err
		}
	}
	v, err := ScrapeValue(ctx, metricsURL, SeriesHeapAlloc)
	return int64(v), err
}
