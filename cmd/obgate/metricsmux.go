package main

import (
	"net/http"
	"net/http/pprof"

	"obgate/metrics"
)

// Paths of the liveness and readiness probes on the metrics port; the
// manifests under deploy/ name them (deploy_test.go checks they agree).
const (
	healthzPath = "/healthz"
	readyzPath  = "/readyz"
)

// pprofPrefix is where Go's profiler is served while enable_pprof is on.
const pprofPrefix = "/debug/pprof/"

// metricsMux is the metrics port's handler table: Prometheus metrics, the
// probes, and pprof. pprof answers 404 unless pprofOn reports true, asked
// on every request (main passes enable_pprof of the running
// configuration, so ALTER PROXYCONFIG turns it on and off at once): it
// shows every goroutine's stack and starts CPU profiles and traces that
// cost CPU, which is not for whoever reaches the port. /debug/pprof/cmdline
// is left out even then: it would print obgate's command line, which may
// hold a password given with -o.
func metricsMux(reg *metrics.Registry, pr probes, pprofOn func() bool) *http.ServeMux {
	mux := http.NewServeMux()
	mux.Handle("/metrics", reg.Handler())
	mux.HandleFunc(pprofPrefix, pprofGate(pprofOn, pprof.Index))
	mux.HandleFunc(pprofPrefix+"profile", pprofGate(pprofOn, pprof.Profile))
	mux.HandleFunc(pprofPrefix+"symbol", pprofGate(pprofOn, pprof.Symbol))
	mux.HandleFunc(pprofPrefix+"trace", pprofGate(pprofOn, pprof.Trace))
	mux.HandleFunc(healthzPath, pr.healthz)
	mux.HandleFunc(readyzPath, pr.readyz)
	return mux
}

// pprofGate serves h while on reports true, and 404 otherwise, as for a
// path that does not exist.
func pprofGate(on func() bool, h http.HandlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if !on() {
			http.NotFound(w, r)
			return
		}
		h(w, r)
	}
}
