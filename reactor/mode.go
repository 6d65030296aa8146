package reactor

import (
	"errors"

	"obgate/health"
	"obgate/route"
)

// routingMode is what the Server does per routing mode
// (server_routing_mode, which takes effect at start): the only place the
// mode is asked is modeFor. Sessions get their side from it; the rest of
// the package asks the side, or this.
type routingMode interface {
	// name is the mode as server_routing_mode names it.
	name() string
	// newSide gives s, not yet seen by other goroutines, its side.
	newSide(s *Session)
	// handoverShape is the mode byte and the number of server
	// connections a session of this mode brings in a hot upgrade.
	handoverShape() (mode byte, servers int)
	// detectTargets lists the servers the health monitor's detect task
	// watches. Any goroutine.
	detectTargets(srv *Server) []health.Target
	// greetsAsServers reports whether clients are greeted in the image
	// of the servers' greeting (mysqlgreeting.go) rather than as obgate.
	greetsAsServers() bool
	// markedIDs reports whether client session ids carry the mark that
	// tells them from a server's thread ids (sessionid.Mark).
	markedIDs() bool
}

// modeFor is the routing mode server_routing_mode names; OceanBase mode
// needs the clusters to route in.
func modeFor(name string, clusters *route.Clusters) (routingMode, error) {
	if name == "mysql" {
		return mysqlMode{}, nil
	}
	if clusters == nil {
		return nil, errors.New("reactor: server_routing_mode " + name + " needs Options.Clusters")
	}
	return obMode{}, nil
}
