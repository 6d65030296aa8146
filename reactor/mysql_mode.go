package reactor

import (
	"obgate/health"
	"obgate/reactor/handover"
)

// mysqlMode is mysql routing mode at the Server's level (routingMode).
type mysqlMode struct{}

func (mysqlMode) name() string { return "mysql" }

func (mysqlMode) newSide(s *Session) {
	s.my = &mysqlSide{s: s}
	s.side = serverSide{mysqlLogin{s.my}, s.my, s.my, s.my, mysqlEvents{s.my}, mysqlHandover{s.my}, columnMySQL}
}

// handoverShape: the one server connection moves with the client
// (mysql_handover.go).
func (mysqlMode) handoverShape() (byte, int) { return handover.ModeMySQL, 1 }

// detectTargets: the configured servers.
func (mysqlMode) detectTargets(srv *Server) []health.Target {
	var out []health.Target
	for _, a := range serverAddrs(srv.cfg.Load()) {
		out = append(out, health.Target{Addr: a})
	}
	return out
}

// greetsAsServers: clients are greeted in the image of the servers'
// greeting, learned from them (mysqlgreeting.go).
func (mysqlMode) greetsAsServers() bool { return true }

// markedIDs: client ids are told from server thread ids by their mark,
// since a client may name either in KILL.
func (mysqlMode) markedIDs() bool { return true }
