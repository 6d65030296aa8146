// Package assemble builds the parts of a proxy process that routing
// depends on and that the reactor is handed rather than builds: the
// OceanBase clusters (their metadata refresh), the health monitor and the
// router, sharing one TLS configuration towards servers. cmd/obgate uses
// it, and so does internal/testproxy, so that a test's proxy is wired as
// the real one.
//
// It is where route and health meet: route's router asks the monitor
// about servers (route.Availability) and its clusters tell the monitor of
// every table they read (route.TableObserver); neither package imports the
// other.
package assemble

import (
	"fmt"
	"log/slog"

	"obgate/config"
	"obgate/health"
	"obgate/internal/tlsconf"
	"obgate/metrics"
	"obgate/route"
)

// The monitor is what the router and the clusters ask for.
var (
	_ route.Availability  = (*health.Monitor)(nil)
	_ route.Generational  = (*health.Monitor)(nil)
	_ route.TableObserver = (*health.Monitor)(nil)
)

// Parts are the routing side of one proxy process. Its owner hands them
// to reactor.NewServer, starts the detect task once the server can list
// its targets (StartDetect), and closes them after the server has shut
// down (Close).
type Parts struct {
	// Clusters are the OceanBase clusters served; nil in mysql routing
	// mode.
	Clusters *route.Clusters
	Health   *health.Monitor
	Router   *route.Router
	// ServerTLS is the TLS configuration towards servers, for server
	// sessions and every side connection (metadata, probes).
	ServerTLS *tlsconf.Server
}

// Build builds the parts for the configuration in store: clusters in
// OceanBase routing mode (their refresh starts at once), a health monitor
// that logs to log, writes diagnosis lines to diag (nil for none) and
// counts into reg, and a router that asks that monitor.
func Build(store *config.Store, log, diag *slog.Logger, reg *metrics.Registry) (*Parts, error) {
	cfg := store.Load()
	p := &Parts{ServerTLS: tlsconf.NewServer(log)}
	switch cfg.ServerRoutingMode {
	case "mysql":
	case "oceanbase":
		cs, err := route.NewClusters(store, log)
		if err != nil {
			return nil, err
		}
		cs.SetServerTLS(p.ServerTLS.For)
		p.Clusters = cs
	default:
		return nil, fmt.Errorf("server_routing_mode=%s is not supported; use oceanbase or mysql", cfg.ServerRoutingMode)
	}
	m := health.NewMonitor(store)
	m.SetLogger(log)
	m.SetDiagnosis(diag)
	m.SetMetrics(reg)
	m.SetServerTLS(p.ServerTLS.For)
	p.Health = m
	p.Router = route.NewRouter(m)
	if p.Clusters != nil {
		p.Clusters.SetTableObserver(m)
	}
	return p, nil
}

// StartDetect starts the health monitor's detect task over the servers
// targets lists (reactor.Server.DetectTargets). Call it once.
func (p *Parts) StartDetect(targets health.Targets) { p.Health.Start(targets) }

// Close stops the detect task and the clusters' refresh. Call it after
// the server that used the parts has shut down.
func (p *Parts) Close() {
	p.Health.Close()
	if p.Clusters != nil {
		p.Clusters.Close()
	}
}
