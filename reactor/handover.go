package reactor

import (
	"errors"
	"fmt"
	"net"
	"os"
	"time"

	"obgate/mysqlproto"
	"obgate/route"
)

// Live session hand-over: in a hot upgrade the old process gives each
// client session to the new one at its next idle point, with the
// descriptors of its client connection and its server session and the
// state the new process needs (handover_state.go), over the link the
// upgrade made (handover_link.go). The client notices nothing: its
// connection, its server session (with the server's own state: user
// variables, temporary tables, prepared statements) and its connection id
// stay as they were; only the process reading the sockets changes.
//
// Which sessions move: mysql routing mode sessions the poller drives
// (plain TCP clients on netpoll, with a plain server session on netpoll),
// outside a transaction, with nothing unread on either connection. A
// session inside a transaction moves once it ends; one with a command
// running moves at the command's end (afterCommand), before its next one
// is read. The rest drain as before: TLS clients (Go cannot export a TLS
// connection's state), client_io_mode=net, TLS or compressed server
// sessions, administrator sessions, OceanBase routing mode, and any
// session the new process refused: they finish, then close at their next
// idle point.
//
// The moment of the move: the session's owner (the goroutine that took it
// from StateIdle to StateCommand, so no command can start) stops netpoll
// from reading both connections (npbound Freeze): whatever the client
// sends from then on stays in the kernel for the new process. If netpoll
// had already read bytes of a next command, the session is not moved now
// and goes on serving; it moves at a later idle point. Once the new
// process answered ok, the old one closes its copies of the descriptors
// without a word to either peer; on a refusal it reads the connections
// again and serves on. Without an answer (the link broke, the new process
// hung) the session is closed: it may be served by the new process, and a
// session must never be served by two.

// handover is what a server hands its sessions to; nil while none.
type handover struct {
	link *handoverLink
}

// HandOverSessions makes the server hand its sessions to the process at
// the other end of conn (a unix SOCK_SEQPACKET socket; see
// AdoptSessions) from now on: each eligible session at its next idle
// point, and the idle ones when Shutdown drains. Call it before Shutdown.
func (srv *Server) HandOverSessions(conn *net.UnixConn) {
	srv.handover.Store(&handover{link: &handoverLink{conn: conn}})
}

// AdoptSessions takes the sessions the process at the other end of conn
// hands over, until conn ends; it returns the error that ended it.
func (srv *Server) AdoptSessions(conn *net.UnixConn) error {
	l := &handoverLink{conn: conn}
	return l.serve(func(state []byte, fds []int) error {
		err := srv.adopt(state, fds)
		if err != nil {
			srv.metrics.handoverRefused.Inc()
			srv.log.Warn("hot upgrade: a session handed over was refused; it drains in the old process", "err", err)
		}
		return err
	})
}

// handoverKind reports whether the session is of a kind that moves in a
// hand-over (see above); any goroutine.
func (s *Session) handoverKind() bool {
	return s.my != nil && !s.admin && s.drv.hooked && !s.handoverFailed.Load() && s.loggedIn.Load()
}

// handoverReady reports whether the session may move now; its owner
// calls it.
func (s *Session) handoverReady() bool {
	be := s.backend
	if !s.handoverKind() || s.inTrans.Load() || s.txnBroken || s.closeReq.Load() != closeNone ||
		be == nil || be.serverLost() || be.tls || be.comp != nil || be.ob20 != nil ||
		s.st.kept != nil || s.my.move.closedOnPurpose.Load() || s.drv.clientNP.rb == nil {
		return false
	}
	np, ok := be.conn.(*npServerConn)
	return ok && s.drv.clientNP.Buffered() == 0 && np.buffered() == 0
}

// handOverAtIdle is afterCommand's look at a pending hand-over, where
// the session would become idle: it reports whether the session was
// taken for one (it then stays in StateCommand, owned by a pooled
// goroutine that moves it).
func (s *Session) handOverAtIdle() bool {
	h := s.srv.handover.Load()
	if h == nil || !s.handoverReady() {
		return false
	}
	npTasks.run(nil, func() { s.handOverOwned(h) })
	return true
}

// handOverIfIdle moves an idle session now (Shutdown's drain); it reports
// whether the session is of a kind that moves, which the drain then
// leaves to a later look instead of closing it. Any goroutine.
func (s *Session) handOverIfIdle(h *handover) bool {
	if !s.handoverKind() {
		return false
	}
	if s.State() != StateIdle || s.inTrans.Load() {
		return true
	}
	if !s.state.CompareAndSwap(int32(StateIdle), int32(StateCommand)) {
		return true
	}
	if !s.handoverReady() {
		s.resumeAfterHandover()
		return true
	}
	s.handOverOwned(h)
	return true
}

// handOverOwned moves the session, which the calling goroutine owns
// (StateCommand, no command running).
func (s *Session) handOverOwned(h *handover) {
	defer s.containPanic(panicHandover)
	err := s.sendTo(h.link)
	switch {
	case err == nil:
		s.srv.metrics.handoverSent.Inc()
		s.noteEnd(QuitShutdown, nil, "handed_over")
		s.srv.log.Debug("session handed over to the new process", "session", s.id)
		s.drv.endTransport()
	case errors.Is(err, errHandoverNotNow):
		s.resumeAfterHandover()
	case errors.Is(err, errHandoverRefused):
		s.handoverFailed.Store(true)
		s.srv.log.Warn("hot upgrade: session not handed over; it drains here", "session", s.id, "err", err)
		s.resumeAfterHandover()
	default:
		s.srv.log.Warn("hot upgrade: hand-over of a session failed; closing it here", "session", s.id, "err", err)
		s.noteEnd(QuitShutdown, err, "handover_failed")
		s.drv.endTransport()
	}
}

// errHandoverNotNow says the session was not at an idle point after all
// (netpoll had read more of the client, or a connection is closing); it
// moves later.
var errHandoverNotNow = errors.New("session not at an idle point")

// sendTo offers the session on link. Both connections are frozen for the
// offer and thawed again unless it was taken; the session's owner calls
// it.
func (s *Session) sendTo(link *handoverLink) error {
	be := s.backend
	client := s.drv.clientNP
	server := be.conn.(*npServerConn)
	if !client.rb.Freeze() {
		return errHandoverNotNow
	}
	if !server.rb.Freeze() {
		client.rb.Thaw()
		return errHandoverNotNow
	}
	thaw := func() {
		server.rb.Thaw()
		client.rb.Thaw()
	}
	if client.Buffered() > 0 || server.buffered() > 0 || !client.conn.IsActive() || !server.IsActive() || be.serverLost() {
		thaw()
		return errHandoverNotNow
	}
	state := s.handoverState().encode()
	if len(state) > maxHandoverState {
		thaw()
		return fmt.Errorf("%w: its state takes %d bytes, more than %d", errHandoverRefused, len(state), maxHandoverState)
	}
	err := link.offer(state, []int{client.rb.FD(), server.fd})
	if errors.Is(err, errHandoverRefused) {
		thaw()
	}
	return err
}

// resumeAfterHandover makes a session its owner took for a hand-over that
// did not happen idle again, as afterCommand would have, and serves what
// the client sent meanwhile.
func (s *Session) resumeAfterHandover() {
	d := &s.drv
	if d.closeDue() {
		d.endTransport()
		return
	}
	s.state.Store(int32(StateIdle))
	if d.closeDue() && s.state.CompareAndSwap(int32(StateIdle), int32(StateCommand)) {
		d.endTransport()
		return
	}
	// The poller's read hook saw StateCommand and left the bytes alone.
	d.servePolled()
}

// handoverState is the session's state for the new process; its owner
// calls it.
func (s *Session) handoverState() *handoverState {
	s.mu.Lock()
	user, db := s.user, s.db
	s.mu.Unlock()
	h := &handoverState{
		Mode: handoverModeMySQL, SessionID: s.id, Caps: uint64(s.caps), Status: uint16(s.status),
		User: user, DB: db, ConnectedAt: s.connectedAt.UnixNano(), LastActive: s.lastActive.Load(),
		TransCount: s.transCount.Load(), StmtCount: s.stmtCount.Load(),
		BytesIn: uint64(s.bytesIn), BytesOut: uint64(s.bytesOut), StmtLast: s.stmts.last,
	}
	be := s.backend
	for id, p := range s.stmts.byID {
		h.Stmts = append(h.Stmts, handoverStmt{ID: id, SQL: p.sql, Params: p.params, Columns: p.columns,
			Types: p.types, Home: p.home != nil && p.home == be})
	}
	sv := handoverServer{Addr: be.addr, ThreadID: be.threadID, Status: uint16(be.status), LastUsed: be.lastUsed.Load()}
	for client, st := range be.stmts {
		sv.Stmts = append(sv.Stmts, handoverServerStmt{Client: client, Server: st.id, Bound: st.bound})
	}
	h.Servers = []handoverServer{sv}
	if mv := &s.my.move; mv.stage1 != nil && mv.resp != nil {
		h.Move = &handoverMove{Scramble: mv.scramble, Login: mv.resp.Append(nil), Stage1: mv.stage1,
			Caps: uint64(mv.caps), Stateful: mv.stateful}
	}
	return h
}

// adopt makes a session of this process from a hand-over: the state and
// the descriptors of its client connection and server session, which it
// owns whatever it returns. On success the session serves here.
func (srv *Server) adopt(raw []byte, fds []int) (err error) {
	files := make([]*os.File, len(fds))
	for i, fd := range fds {
		files[i] = os.NewFile(uintptr(fd), "handover")
	}
	defer func() {
		for _, f := range files {
			f.Close() // net.FileConn made duplicates
		}
	}()
	h, err := decodeHandoverState(raw)
	if err != nil {
		return err
	}
	cfg := srv.cfg.Load()
	switch {
	case srv.draining.Load():
		return errors.New("this process is shutting down")
	case h.Mode != handoverModeMySQL || cfg.ServerRoutingMode != "mysql":
		return fmt.Errorf("a session of routing mode %q; this process runs %s", h.Mode, cfg.ServerRoutingMode)
	case len(h.Servers) != 1 || len(fds) != 2:
		return fmt.Errorf("%d server sessions and %d descriptors; want 1 and 2", len(h.Servers), len(fds))
	case srv.poller == nil || !srv.poller.serverConns:
		return errors.New("this process does not run sessions on netpoll")
	}
	clientConn, err := net.FileConn(files[0])
	if err != nil {
		return fmt.Errorf("client descriptor: %w", err)
	}
	ctc, ok := clientConn.(*net.TCPConn)
	if !ok {
		clientConn.Close()
		return errors.New("the client descriptor is not a TCP socket")
	}
	srvConn, err := net.FileConn(files[1])
	if err != nil {
		ctc.Close()
		return fmt.Errorf("server descriptor: %w", err)
	}
	stc, ok := srvConn.(*net.TCPConn)
	if !ok {
		ctc.Close()
		srvConn.Close()
		return errors.New("the server descriptor is not a TCP socket")
	}
	np, err := attachServerNetpoll(stc)
	if err != nil {
		ctc.Close()
		stc.Close()
		return fmt.Errorf("server connection onto netpoll: %w", err)
	}

	s := &Session{srv: srv, id: h.SessionID}
	if _, taken := srv.sessions.LoadOrStore(s.id, s); taken {
		ctc.Close()
		np.Close()
		return fmt.Errorf("connection id %d is in use here", s.id)
	}
	srv.active.Add(1)
	srv.clients.Add(1)
	s.connectedAt, s.rawConn = time.Unix(0, h.ConnectedAt), ctc
	s.setSide(cfg)
	s.st.s, s.drv.s = s, s
	s.clientAddr = ctc.RemoteAddr().String()
	s.lastActive.Store(h.LastActive)
	s.curCmd.Store(-1)
	s.clientCloser.Store(&closerRef{ctc})
	s.cfg = cfg
	s.caps, s.status = mysqlproto.Capability(h.Caps), mysqlproto.ServerStatus(h.Status)
	s.identity = route.ParseUsername(h.User, cfg.UsernameSeparators())
	s.user, s.db = h.User, h.DB
	s.transCount.Store(h.TransCount)
	s.stmtCount.Store(h.StmtCount)
	s.bytesIn, s.bytesOut = int64(h.BytesIn), int64(h.BytesOut)

	sv := h.Servers[0]
	be := &serverConn{conn: np, sock: np, addr: sv.Addr, threadID: sv.ThreadID, status: mysqlproto.ServerStatus(sv.Status)}
	be.lastUsed.Store(sv.LastUsed)
	be.health = srv.health.Entry(nil, sv.Addr)
	for _, m := range sv.Stmts {
		be.stmtSet(m.Client, m.Server)
		if m.Bound {
			be.stmtBound(m.Client)
		}
	}
	srv.servers.add(be, s)
	s.sharedBackend.Store(be)
	s.backend = be
	s.backendAddr, s.backendID = be.addr, be.threadID

	s.stmts.last = h.StmtLast
	for _, st := range h.Stmts {
		p := &prepared{sql: st.SQL, params: st.Params, columns: st.Columns, types: st.Types}
		p.facts = route.Lex(p.sql)
		p.kind = p.facts.Kind
		if st.Home {
			p.home = be
		}
		if s.stmts.byID == nil {
			s.stmts.byID = make(map[uint32]*prepared)
		}
		s.stmts.byID[st.ID] = p
	}
	if mv := h.Move; mv != nil {
		resp, perr := mysqlproto.ParseHandshakeResponse(mv.Login)
		if perr == nil {
			s.my.move.scramble, s.my.move.resp, s.my.move.stage1 = mv.Scramble, resp, mv.Stage1
			s.my.move.caps, s.my.move.stateful = mysqlproto.Capability(mv.Caps), mv.Stateful
		}
	}
	s.side.commandDone() // publishes whether it may move
	s.loggedIn.Store(true)
	srv.metrics.handoverAdopted.Inc()
	srv.log.Debug("session adopted from the old process", "session", s.id, "client", s.clientAddr, "server", be.addr)
	srv.wg.Add(1)
	go func() {
		defer srv.wg.Done()
		defer s.containPanic(panicLogin)
		s.drv.serveTransport()
	}()
	return nil
}
