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

// metricsMux is the metrics port's handler table: Prometheus metrics,
// pprof, and the probes.
func metricsMux(reg *metrics.Registry, pr probes) *http.ServeMux {
	mux := http.NewServeMux()
	mux.Handle("/metrics", reg.Handler())
	mux.HandleFunc("/debug/pprof/", pprof.Index)
	mux.HandleFunc("/debug/pprof/profile", pprof.Profile)
	mux.HandleFunc("/debug/pprof/symbol", pprof.Symbol)
	mux.HandleFunc("/debug/pprof/trace", pprof.Trace)
	mux.HandleFunc(healthzPath, pr.healthz)
	mux.HandleFunc(readyzPath, pr.readyz)
	return mux
}
