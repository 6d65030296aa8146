package reactor_test

import (
	"strings"
	"testing"

	"obgate/config"
	"obgate/internal/assemble"
	"obgate/internal/testkit"
	"obgate/internal/testproxy"
	"obgate/metrics"
	"obgate/reactor"
)

// TestNewServerRefusesOceanBaseWithoutClusters: OceanBase routing mode
// needs the clusters to route in. NewServer says so before it starts
// anything, so a refused start leaves no goroutine behind (the server
// watch used to be running by then).
func TestNewServerRefusesOceanBaseWithoutClusters(t *testing.T) {
	testkit.CheckLeaks(t)
	cfg, err := testproxy.Config("127.0.0.1:1", "netpoll")
	if err != nil {
		t.Fatal(err)
	}
	log := testkit.NewLogger(t)
	reg := metrics.New()
	parts, err := assemble.Build(config.NewStore(cfg), log, nil, reg)
	if err != nil {
		t.Fatal(err)
	}
	defer parts.Close()
	obCfg, err := cfg.With("server_routing_mode", "oceanbase")
	if err != nil {
		t.Fatal(err)
	}
	srv, err := reactor.NewServer(reactor.Options{Config: config.NewStore(obCfg), Metrics: reg, Logger: log,
		Health: parts.Health, Router: parts.Router, ServerTLS: parts.ServerTLS})
	if err == nil {
		srv.Close()
		t.Fatal("NewServer started OceanBase mode without clusters")
	}
	if !strings.Contains(err.Error(), "Options.Clusters") {
		t.Errorf("NewServer: %v, want it to name Options.Clusters", err)
	}
}
