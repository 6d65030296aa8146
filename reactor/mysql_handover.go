package reactor

import (
	"errors"

	"obgate/mysqlproto"
	"obgate/reactor/backend"
	"obgate/reactor/handover"
)

// mysqlHandover is mysql mode's part of the hand-over (sideHandover): the
// server connection moves with the client.
type mysqlHandover struct{ *mysqlSide }

// mysql routing mode's part of a hot upgrade's hand-over (handover.go):
// the server session moves with the client, descriptor and all, with what
// obgate keeps to log the client in on another server.

// handoverReady reports whether the server session can move: a plain
// netpoll connection, alive, with nothing unread, not closed on purpose
// by its server.
func (m mysqlHandover) handoverReady() bool {
	be := m.s.servers.Current()
	if be == nil || be.Lost() || be.TLS || be.Comp != nil || be.OB20 != nil || m.move.closedOnPurpose.Load() {
		return false
	}
	np, ok := be.NetConn.(*backend.PolledConn)
	return ok && np.Buffered() == 0
}

// handoverFreeze stops reading the server connection for the offer and
// returns its descriptor; ok is false when it could not be frozen or had
// bytes unread, or its server is gone (then nothing stays frozen).
func (m mysqlHandover) handoverFreeze() (fds []int, thaw func(), ok bool) {
	be := m.s.servers.Current()
	server := be.NetConn.(*backend.PolledConn)
	if !server.Bound.Freeze() {
		return nil, nil, false
	}
	if server.Buffered() != 0 || !server.IsActive() || be.Lost() {
		server.Bound.Thaw()
		return nil, nil, false
	}
	return []int{server.FD}, server.Bound.Thaw, true
}

// handoverRecord adds the server session, with the server's ids of the
// client's open statements, and the move login.
func (m mysqlHandover) handoverRecord(h *handover.State) {
	s, be := m.s, m.s.servers.Current()
	h.Mode = handover.ModeMySQL
	sv := handover.Server{Addr: be.Addr, ThreadID: be.ThreadID, Status: uint16(be.Status), LastUsed: be.LastUsed.Load()}
	for client, st := range be.Stmts {
		if _, open := s.stmts.ByID[client]; !open {
			continue // a kept statement (prepared/kept.go): the new process does not reuse it
		}
		sv.Stmts = append(sv.Stmts, handover.ServerStmt{Client: client, Server: st.ID, Bound: st.Bound})
	}
	h.Servers = []handover.Server{sv}
	if mv := &m.move; mv.stage1 != nil && mv.resp != nil {
		h.Move = &handover.Move{Scramble: mv.scramble, Login: mv.resp.Append(nil), Stage1: mv.stage1,
			Caps: uint64(mv.caps), Stateful: mv.stateful}
	}
}

// adoptRecord makes server, the handed-over server connection, the
// session's server session, and keeps the move login when it reads.
func (m mysqlHandover) adoptRecord(h *handover.State, server *backend.PolledConn) error {
	if server == nil || len(h.Servers) != 1 {
		return errors.New("a mysql-mode session comes with its one server session")
	}
	s := m.s
	sv := h.Servers[0]
	be := &backend.Conn{NetConn: server, Sock: server, Addr: sv.Addr, ThreadID: sv.ThreadID, Status: mysqlproto.ServerStatus(sv.Status)}
	be.Health = s.srv.health.Entry("", sv.Addr)
	for _, st := range sv.Stmts {
		be.StmtSet(st.Client, st.Server)
		if st.Bound {
			be.StmtBound(st.Client)
		}
	}
	s.srv.servers.Add(be, s)
	s.servers.Use(be)
	be.LastUsed.Store(sv.LastUsed) // as the old process last used it, not the adoption
	if mv := h.Move; mv != nil {
		if resp, err := mysqlproto.ParseHandshakeResponse(mv.Login); err == nil {
			m.move.scramble, m.move.resp, m.move.stage1 = mv.Scramble, resp, mv.Stage1
			m.move.caps, m.move.stateful = mysqlproto.Capability(mv.Caps), mv.Stateful
		}
	}
	return nil
}
