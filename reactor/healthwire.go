package reactor

import (
	"obgate/health"
)

// watchHealth makes a server the detect task finds dead lose every
// connection obgate holds to it: idle ones at once, busy ones under their
// statement, which then fails over as a broken server does. The monitor
// itself is the process's (Options.Health).
func (srv *Server) watchHealth() {
	srv.health.OnDetectDead(func(cluster, addr string) {
		if n := srv.servers.CloseAll(addr); n > 0 {
			srv.log.Warn("closed connections to a server found dead", "server", addr, "cluster", cluster, "connections", n)
		}
	})
}

// DetectTargets lists the servers obgate routes to, for the health
// monitor's detect task: every server of every loaded cluster, or the
// configured servers in mysql routing mode. Any goroutine.
func (srv *Server) DetectTargets() []health.Target { return srv.mode.detectTargets(srv) }
