package main

import (
	"fmt"
	"math"
	"net/http"
	"strconv"
	"time"
)

// httpLimits bounds what one client of the metrics port may hold: the
// port answers small GETs (a scrape, a probe) and pprof, so a client
// that sends its request slowly, never reads the answer, or keeps an idle
// connection open is cut off instead of holding a goroutine and a
// descriptor for as long as it likes.
type httpLimits struct {
	readHeader time.Duration // the request line and headers must arrive within this
	read       time.Duration // the whole request, body included
	write      time.Duration // a handler's answer, from the handler's start
	idle       time.Duration // an idle keep-alive connection is closed after this
	maxHeader  int           // bytes of request line and headers
	// maxProfile is the longest CPU profile or trace (?seconds=N) pprof
	// may be asked for; its answer gets that long plus write (pprof moves
	// its own write deadline).
	maxProfile time.Duration
}

// metricsLimits are the metrics port's limits. Prometheus, the probes and
// a person's curl send a request at once and read the answer at once; a
// scrape of a busy obgate takes well under a second.
var metricsLimits = httpLimits{
	readHeader: 5 * time.Second,
	read:       10 * time.Second,
	write:      30 * time.Second,
	idle:       30 * time.Second,
	maxHeader:  16 << 10,
	maxProfile: 10 * time.Minute,
}

// newMetricsServer returns the metrics port's HTTP server for h under
// lim. pprof's CPU profile and trace move their own write deadline by
// their ?seconds= (Go 1.23 on), and net/http lifts the read deadline while
// a handler runs, so WriteTimeout and ReadTimeout fit ordinary requests
// and still let a profile run; profileLimits caps how long it may ask for.
func newMetricsServer(h http.Handler, lim httpLimits) *http.Server {
	return &http.Server{
		Handler:           profileLimits(h, lim),
		ReadHeaderTimeout: lim.readHeader,
		ReadTimeout:       lim.read,
		WriteTimeout:      lim.write,
		IdleTimeout:       lim.idle,
		MaxHeaderBytes:    lim.maxHeader,
	}
}

// profileLimits refuses a pprof CPU profile or trace that asks for more
// than lim.maxProfile (400): pprof itself would run it for as long as it
// is asked, holding the CPU profiler (one at a time) and the connection.
// Other requests pass as they are.
func profileLimits(h http.Handler, lim httpLimits) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if d, long := profileDuration(r); long && d > lim.maxProfile {
			http.Error(w, fmt.Sprintf("seconds: at most %d", int64(lim.maxProfile/time.Second)), http.StatusBadRequest)
			return
		}
		h.ServeHTTP(w, r)
	})
}

// profileDuration returns how long a pprof request runs by design: its
// ?seconds=, or pprof's default when that is missing or not a positive
// number. long is false for every other request.
func profileDuration(r *http.Request) (d time.Duration, long bool) {
	var sec float64
	switch r.URL.Path {
	case pprofPrefix + "profile":
		sec = 30
	case pprofPrefix + "trace":
		sec = 1
	default:
		return 0, false
	}
	// The query only: reading a body to find the parameter would be the
	// slow read the limits are there to stop.
	if v, err := strconv.ParseFloat(r.URL.Query().Get("seconds"), 64); err == nil && v > 0 {
		sec = v
	}
	if sec >= math.MaxInt64/float64(time.Second) {
		return math.MaxInt64, true
	}
	return time.Duration(math.Ceil(sec * float64(time.Second))), true
}
