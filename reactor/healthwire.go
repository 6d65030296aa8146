package reactor

import (
	"obgate/health"
	"obgate/route"
)

// health and route do not import each other; this is where the monitor
// is shown to be what the router and the clusters ask for.
var (
	_ route.Availability  = (*health.Monitor)(nil)
	_ route.Generational  = (*health.Monitor)(nil)
	_ route.TableObserver = (*health.Monitor)(nil)
)

// startHealth connects the health monitor to the server: the status
// refresh of every cluster feeds it, a server the detect task finds dead
// loses every connection obgate holds to it (idle ones at once, busy ones
// under their statement, which then fails over as a broken server does),
// and the detect task runs over the servers obgate routes to. A monitor
// given in the options is wired the same way, but its owner starts and
// closes it.
func (srv *Server) startHealth(opts Options) {
	m := srv.health
	if srv.ownHealth {
		m.SetLogger(srv.log)
		m.SetDiagnosis(srv.diag)
		m.SetMetrics(opts.Metrics)
	}
	m.OnDetectDead(func(cluster, addr string) {
		if n := srv.servers.closeAll(addr); n > 0 {
			srv.log.Warn("closed connections to a server found dead", "server", addr, "cluster", cluster, "connections", n)
		}
	})
	if srv.clusters != nil {
		srv.clusters.SetTableObserver(m)
	}
	if srv.ownHealth {
		m.Start(srv.healthTargets)
	}
}

// healthTargets lists the servers obgate routes to, for the detect task:
// every server of every loaded cluster, or the configured servers in
// mysql routing mode.
func (srv *Server) healthTargets() []health.Target {
	cfg := srv.cfg.Load()
	var out []health.Target
	if cfg.ServerRoutingMode == "mysql" {
		for _, a := range serverAddrs(cfg) {
			out = append(out, health.Target{Addr: a})
		}
		return out
	}
	if srv.clusters == nil {
		return nil
	}
	for _, c := range srv.clusters.All() {
		t := c.Table()
		if t == nil {
			continue
		}
		for _, s := range t.Servers {
			out = append(out, health.Target{Cluster: c.Name(), Addr: s.Addr})
		}
	}
	return out
}
