package reactor

import (
	"obgate/health"
	"obgate/reactor/handover"
)

// obMode is OceanBase routing mode at the Server's level (routingMode).
type obMode struct{}

func (obMode) name() string { return "oceanbase" }

func (obMode) newSide(s *Session) {
	s.ob = &obSession{s: s}
	s.side = serverSide{obIdentity{s.ob}, s.ob, s.ob, s.ob, obEvents{s.ob}, obHandover{s.ob}, columnOB}
}

// handoverShape: only the client connection moves (ob_handover.go).
func (obMode) handoverShape() (byte, int) { return handover.ModeOB, 0 }

// detectTargets: every server of every loaded cluster.
func (obMode) detectTargets(srv *Server) []health.Target {
	var out []health.Target
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

// greetsAsServers: obgate greets as ODP does, with its own greeting.
func (obMode) greetsAsServers() bool { return false }

func (obMode) markedIDs() bool { return false }
