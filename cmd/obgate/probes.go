package main

import (
	"fmt"
	"net/http"

	"obgate/reactor"
	"obgate/route"
)

// probes answers the metrics port's /healthz and /readyz, the liveness
// and readiness checks of a load balancer or of Kubernetes. Its handlers
// run on net/http's goroutines and only read atomics and locked state of
// the server and the clusters.
type probes struct {
	srv      *reactor.Server
	clusters *route.Clusters // nil in mysql routing mode
}

// healthz is liveness: the process is up and serves HTTP. It stays 200
// while draining after SIGTERM, so that an orchestrator does not kill a
// process that is finishing its sessions.
func (p probes) healthz(w http.ResponseWriter, _ *http.Request) {
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	fmt.Fprintln(w, "ok")
}

// readyz is readiness: 200 "ok" while obgate takes new clients, 503 with
// the reason otherwise (starting, clusters not bootstrapped, draining).
func (p probes) readyz(w http.ResponseWriter, _ *http.Request) {
	if reason := p.notReady(); reason != "" {
		http.Error(w, reason, http.StatusServiceUnavailable)
		return
	}
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	fmt.Fprintln(w, "ok")
}

// notReady returns why new clients should not be sent here, or "".
func (p probes) notReady() string {
	if p.srv.Draining() {
		return "draining"
	}
	if !p.srv.Accepting() {
		return "sql listener not serving yet"
	}
	if p.clusters != nil {
		if err := p.clusters.Bootstrapped(); err != nil {
			return "not bootstrapped: " + err.Error()
		}
	}
	return ""
}
