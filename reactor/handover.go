package reactor

import (
	"errors"
	"fmt"
	"net"
	"os"
	"time"

	"obgate/mysqlproto"
	"obgate/reactor/backend"
	"obgate/reactor/connio"
	"obgate/reactor/handover"
	"obgate/reactor/prepared"
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
// Which sessions move: sessions the poller drives (plain TCP clients on
// netpoll), outside a transaction, with nothing unread from the client.
// In mysql routing mode the server session moves with the client (a
// plain one on netpoll, nothing unread on it). In OceanBase mode only the
// client connection moves, with the login and the session variables
// obgate keeps for every server session it opens: the new process opens
// its own server sessions and replays the variables and the database on
// them, as it does when a statement goes to another server; so a session
// that holds state obgate cannot replay (temporary tables, user locks, a
// SET TRANSACTION, long data or an open cursor) or speaks OB 2.0 with the
// client does not move. A session inside a transaction moves once it
// ends; one with a command running moves at the command's end
// (afterCommand), before its next one is read. The rest drain as before:
// TLS clients (Go cannot export a TLS connection's state),
// client_io_mode=net, TLS or compressed server sessions in mysql mode,
// administrator sessions, and any session the new process refused: they
// finish, then close at their next idle point.
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

// HandoverStateVersion is the version of the session state this obgate
// writes and reads (handover_state.go). A new process announces it to its
// parent, which hands sessions over only to a process that reads its
// version; an obgate that announces none (older than the hand-over)
// gets none, and the sessions drain.
const HandoverStateVersion = handover.Version

// HandOverSessions makes the server hand its sessions to the process at
// the other end of conn (a unix SOCK_SEQPACKET socket; see
// AdoptSessions) from now on: each eligible session at its next idle
// point, and the idle ones when Shutdown drains. Call it before Shutdown.
func (srv *Server) HandOverSessions(conn *net.UnixConn) {
	srv.handover.Store(handover.NewLink(conn))
}

// AdoptSessions takes the sessions the process at the other end of conn
// hands over, until conn ends; it returns the error that ended it.
func (srv *Server) AdoptSessions(conn *net.UnixConn) error {
	return handover.NewLink(conn).Serve(func(state []byte, fds []int) error {
		// A panic costs this session (adopt closes its descriptors on
		// the way out), never the link: the next sessions still come.
		err := errAdoptionPanicked
		srv.panics.guarded(panicAdoption, 0, func() { err = srv.adopt(state, fds) })
		if err != nil {
			srv.metrics.handoverRefused.Inc()
			srv.log.Warn("hot upgrade: a session handed over was refused; it drains in the old process", "err", err)
		}
		return err
	})
}

// errAdoptionPanicked: adopting a session handed over panicked (a bug,
// counted in obgate_panic_total{where="adoption"}).
var errAdoptionPanicked = errors.New("adopting the session failed on an internal error")

// handoverKind reports whether the session is of a kind that moves in a
// hand-over (see above); its owner calls it, or another goroutine that
// saw it idle (what it reads is written during the login).
func (d *driver) handoverKind() bool {
	s := d.s
	return !s.admin && d.hooked.Load() && !s.lifecycle.handoverFailed.Load() && s.lifecycle.loggedIn.Load() && s.client.obCaps == 0
}

// handoverReady reports whether the session may move now; its owner
// calls it.
func (d *driver) handoverReady() bool {
	s := d.s
	if !d.handoverKind() || s.activity.inTrans.Load() || s.txnBroken || s.lifecycle.closeReq.Load() != closeNone ||
		(s.st != nil && s.st.kept != nil) || d.clientNP.Bound() == nil || d.clientNP.Buffered() != 0 {
		return false
	}
	return s.side.handoverReady()
}

// handOverAtIdle is afterCommand's look at a pending hand-over, where
// the session would become idle: it reports whether the session was
// taken for one (it then stays in StateCommand, owned by a pooled
// goroutine that moves it).
func (d *driver) handOverAtIdle() bool {
	s := d.s
	h := s.srv.handover.Load()
	if h == nil || !d.handoverReady() {
		return false
	}
	connio.Tasks.Run(nil, func() { d.handOverOwned(h) })
	return true
}

// handOverIfIdle moves an idle session now (Shutdown's drain); it reports
// whether the drain should leave the session to a later look instead of
// closing it when quiet: true while it may still move (a command runs, a
// transaction is open). A session that cannot move now for another
// reason (its server connection runs TLS or is gone, it is pinned) is
// left to closeIfQuiet. Any goroutine.
func (d *driver) handOverIfIdle(link *handover.Link) bool {
	s := d.s
	if s.State() != StateIdle {
		return true // closeIfQuiet would do nothing either
	}
	// What handoverKind reads was written before the session first
	// became idle.
	if !d.handoverKind() {
		return false
	}
	if s.activity.inTrans.Load() {
		return true
	}
	if !s.lifecycle.state.CompareAndSwap(int32(StateIdle), int32(StateCommand)) {
		return true
	}
	if !d.handoverReady() {
		// Bytes of a next command are served first (the session is busy
		// then, and closeIfQuiet leaves it alone).
		d.resumeAfterHandover()
		return false
	}
	d.handOverOwned(link)
	return true
}

// handOverOwned moves the session, which the calling goroutine owns
// (StateCommand, no command running).
func (d *driver) handOverOwned(link *handover.Link) {
	s := d.s
	defer d.containPanic(panicHandover)
	err := d.sendTo(link)
	switch {
	case err == nil:
		s.srv.metrics.handoverSent.Inc()
		s.lifecycle.noteEnd(QuitShutdown, nil, "handed_over")
		s.srv.log.Debug("session handed over to the new process", "session", s.id)
		d.endTransport()
	case errors.Is(err, errHandoverNotNow):
		d.resumeAfterHandover()
	case errors.Is(err, handover.ErrRefused):
		s.lifecycle.handoverFailed.Store(true)
		s.srv.log.Warn("hot upgrade: session not handed over; it drains here", "session", s.id, "err", err)
		d.resumeAfterHandover()
	default:
		s.srv.log.Warn("hot upgrade: hand-over of a session failed; closing it here", "session", s.id, "err", err)
		s.lifecycle.noteEnd(QuitShutdown, err, "handover_failed")
		d.endTransport()
	}
}

// errHandoverNotNow says the session was not at an idle point after all
// (netpoll had read more of the client, or a connection is closing); it
// moves later.
var errHandoverNotNow = errors.New("session not at an idle point")

// sendTo offers the session on link. The connections that move are
// frozen for the offer and thawed again unless it was taken; the
// session's owner calls it.
func (d *driver) sendTo(link *handover.Link) error {
	s := d.s
	client := d.clientNP
	if !client.Bound().Freeze() {
		return errHandoverNotNow
	}
	serverFDs, thawServers, ok := s.side.handoverFreeze()
	if !ok {
		client.Bound().Thaw()
		return errHandoverNotNow
	}
	fds := append([]int{client.Bound().FD()}, serverFDs...)
	thaw := func() {
		thawServers()
		client.Bound().Thaw()
	}
	if idle := client.Buffered() == 0 && client.Conn().IsActive(); !idle {
		thaw()
		return errHandoverNotNow
	}
	state := s.handoverState().Encode()
	if len(state) > handover.MaxState {
		thaw()
		return fmt.Errorf("%w: its state takes %d bytes, more than %d", handover.ErrRefused, len(state), handover.MaxState)
	}
	err := link.Offer(state, fds)
	if errors.Is(err, handover.ErrRefused) {
		thaw()
	}
	return err
}

// resumeAfterHandover makes a session its owner took for a hand-over that
// did not happen idle again, as afterCommand would have, and serves what
// the client sent meanwhile.
func (d *driver) resumeAfterHandover() {
	s := d.s
	if d.closeDue() {
		d.endTransport()
		return
	}
	d.giveBackStatement()
	s.lifecycle.state.Store(int32(StateIdle))
	if d.closeDue() && s.lifecycle.state.CompareAndSwap(int32(StateIdle), int32(StateCommand)) {
		d.endTransport()
		return
	}
	// The poller's read hook saw StateCommand and left the bytes alone.
	d.servePolled()
}

// handoverState is the session's state for the new process; its owner
// calls it.
func (s *Session) handoverState() *handover.State {
	s.published.mu.Lock()
	user, db := s.published.user, s.published.db
	s.published.mu.Unlock()
	h := &handover.State{
		SessionID: s.id, Caps: uint64(s.caps), Status: uint16(s.status),
		User: user, DB: db, ConnectedAt: s.client.connectedAt.UnixNano(), LastActive: s.activity.lastActive.Load(),
		TransCount: s.activity.transCount.Load(), StmtCount: s.activity.stmtCount.Load(),
		BytesIn: uint64(s.activity.bytesIn), BytesOut: uint64(s.activity.bytesOut), StmtLast: s.stmts.Last,
	}
	be := s.servers.Current()
	for id, p := range s.stmts.ByID {
		h.Stmts = append(h.Stmts, handover.Stmt{ID: id, SQL: p.SQL, Params: p.Params, Columns: p.Columns,
			Types: p.Types, Home: p.Home != nil && p.Home == be})
	}
	s.side.handoverRecord(h)
	return h
}

// adopt makes a session of this process from a hand-over: the state and
// the descriptors of its client connection and (mysql mode) its server
// session, which it owns whatever it returns. On success the session
// serves here.
func (srv *Server) adopt(raw []byte, fds []int) error {
	files := make([]*os.File, len(fds))
	for i, fd := range fds {
		files[i] = os.NewFile(uintptr(fd), "handover")
	}
	defer func() {
		for _, f := range files {
			f.Close() // net.FileConn made duplicates
		}
	}()
	h, err := handover.Decode(raw)
	if err != nil {
		return err
	}
	// What a session of this process's routing mode brings (the mode's
	// handoverShape); the records are the sides' (adoptRecord).
	cfg := srv.cfg.Load()
	wantMode, servers := srv.mode.handoverShape()
	switch {
	case srv.draining.Load():
		return errors.New("this process is shutting down")
	case h.Mode != wantMode:
		return fmt.Errorf("a session of another routing mode (%q); this process runs %s", h.Mode, srv.mode.name())
	case len(h.Servers) != servers || len(fds) != 1+servers:
		return fmt.Errorf("%d server sessions and %d descriptors; want %d and %d", len(h.Servers), len(fds), servers, 1+servers)
	case srv.poller == nil || !srv.poller.serverConns:
		return errors.New("this process does not run sessions on netpoll")
	}
	ctc, err := tcpFromFile(files[0])
	if err != nil {
		return fmt.Errorf("client descriptor: %w", err)
	}
	var np *backend.PolledConn
	if servers == 1 {
		stc, err := tcpFromFile(files[1])
		if err == nil {
			if np, err = backend.AttachNetpoll(stc); err != nil {
				stc.Close()
			}
		}
		if err != nil {
			ctc.Close()
			return fmt.Errorf("server descriptor: %w", err)
		}
	}

	if _, taken := srv.sessions.Load(h.SessionID); taken {
		ctc.Close()
		if np != nil {
			np.Close()
		}
		return fmt.Errorf("connection id %d is in use here", h.SessionID)
	}
	// Built before other goroutines can see it (the registration last).
	s := &Session{srv: srv, id: h.SessionID}
	s.client.connectedAt, s.client.rawConn = time.Unix(0, h.ConnectedAt), ctc
	srv.mode.newSide(s)
	s.drv.s = s
	s.client.addr = ctc.RemoteAddr().String()
	s.activity.lastActive.Store(h.LastActive)
	s.activity.curCmd.Store(-1)
	s.client.closer.Store(&closerRef{ctc})
	s.cfg = cfg
	s.caps, s.status = mysqlproto.Capability(h.Caps), mysqlproto.ServerStatus(h.Status)
	s.identity = route.ParseUsername(h.User, cfg.UsernameSeparators())
	s.published.user, s.published.db = h.User, h.DB
	s.activity.transCount.Store(h.TransCount)
	s.activity.stmtCount.Store(h.StmtCount)
	s.activity.bytesIn, s.activity.bytesOut = int64(h.BytesIn), int64(h.BytesOut)

	// The mode's records: mysql mode's server session (np) and move
	// login, OceanBase mode's login and variables.
	err = s.side.adoptRecord(h, np)
	be := s.servers.Current()
	s.stmts.Last = h.StmtLast
	for _, st := range h.Stmts {
		p := &prepared.Stmt{SQL: st.SQL, Params: st.Params, Columns: st.Columns, Types: st.Types}
		p.Facts = route.Lex(p.SQL)
		p.Kind = p.Facts.Kind
		if st.Home && be != nil {
			p.Home = be
		}
		if s.stmts.ByID == nil {
			s.stmts.ByID = make(map[uint32]*prepared.Stmt)
		}
		s.stmts.ByID[st.ID] = p
	}
	s.side.commandDone() // publishes what the server watch reads
	s.lifecycle.loggedIn.Store(true)
	if err == nil {
		if _, taken := srv.sessions.LoadOrStore(s.id, s); taken {
			err = fmt.Errorf("connection id %d is in use here", s.id)
		}
	}
	if err != nil {
		if be != nil {
			be.Close()
		}
		ctc.Close()
		return err
	}
	srv.active.Add(1)
	srv.clients.Add(1)
	srv.metrics.handoverAdopted.Inc()
	srv.log.Debug("session adopted from the old process", "session", s.id, "client", s.client.addr)
	srv.wg.Add(1)
	go func() {
		defer srv.wg.Done()
		defer s.drv.containPanic(panicLogin)
		s.drv.serveTransport()
	}()
	return nil
}

// tcpFromFile makes a TCP connection of a descriptor (a duplicate; f
// stays open).
func tcpFromFile(f *os.File) (*net.TCPConn, error) {
	c, err := net.FileConn(f)
	if err != nil {
		return nil, err
	}
	tc, ok := c.(*net.TCPConn)
	if !ok {
		c.Close()
		return nil, errors.New("not a TCP socket")
	}
	return tc, nil
}
