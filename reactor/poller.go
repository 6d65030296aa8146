package reactor

import (
	"sync/atomic"
	"time"

	"obgate/mysqlproto"
	"obgate/reactor/backend"
	"obgate/reactor/connio"
	"obgate/reactor/prepared"
	"obgate/route"
)

// The statement path on the poller.
//
// A session on netpoll whose connections' reads can be hooked
// (internal/npbound) is driven by the poller itself: after each read of
// the client connection the poller looks at the buffered command
// (onClientInput), and when it is one the fast path takes (pollable: a
// whole command of at most classifyLen bytes that the command table marks
// polled, COM_QUERY, COM_STMT_EXECUTE, COM_STMT_PREPARE and
// COM_STMT_CLOSE; its server session open, in
// step and on netpoll; nothing that needs a round trip first) it runs
// serveCommand right there: the route comes from
// cached state, the request goes straight to the server's socket, and the
// command stops, awaiting its answer (pollAwaiting), without a goroutine.
// After each read of the server connection the poller relays what arrived
// (ServerInput → stepPolled → runRelay without waiting), writing it
// straight to the client's socket, and once the answer is whole it does
// the after-response bookkeeping and ends the command there too.
//
// Both routing modes take this path. In OceanBase mode the server session
// is the one the router picks from cached state (route.Request.NoWait:
// a location or tenant list not fetched yet sends the command to a
// goroutine), and only when it is open, alive and has the client's whole
// session state (obSession.readyNow); a held BEGIN, a dial or a
// variable sync goes to a goroutine. The request is framed as OB 2.0 into
// a pooled chunk and written without waiting (backend.Conn.TryRequest);
// answer frames that arrived whole are unframed from the server
// connection's input buffer into the relay's chunk (backend/io_poll.go),
// where the terminators are rewritten for the client as on a goroutine. A
// timer (armAnswerTimer) moves a command whose answer is overdue to a
// goroutine, whose read then meets the deadline relayBegin set.
//
// Whatever may wait goes to a pooled goroutine (handOff), which runs the
// same straight-line code as the net transport from where the poller
// stopped (resume): a command the fast path does not take (before it
// changed anything), the rest of a request or an answer the kernel did
// not take at once, an upload, a failed server connection, a resend, an
// ERR reply, the end of the session. The goroutine then serves the
// commands that follow until the client is quiet, and gives the session
// back.
//
// Who owns the session's statement: the one that moved it from StateIdle
// to StateCommand (the poller or a goroutine), until it stores StateIdle
// again; while a command awaits its answer on the poller nobody runs it,
// and poll says who may: the poller's server-input step or a kick
// (kickPolled: a connection of the session was closed or hung up), by
// compare-and-swap from pollAwaiting. Nobody but the owner closes the
// client connection while a command runs: other goroutines shut its
// socket down (breakTransport), which fails the owner's I/O or kicks the
// awaiting command, and the owner closes.

// pollStage says who may run a command that stopped on the poller.
const (
	pollNone     int32 = iota // no command awaits on the poller
	pollAwaiting              // a command awaits its answer; nobody runs it
	pollRunning               // the poller relays its answer now
)

// resumeStep is where a goroutine takes a command over from the poller.
type resumeStep uint8

const (
	resumeCommand resumeStep = iota // serve the command from the start
	resumeSend                      // send the rest of the request, then answer
	resumeRelay                     // relay the rest of the answer
	resumeOutcome                   // act on the relay's outcome (then.o)
	resumeEnd                       // end the command with then.err
	resumeClose                     // finish a COM_STMT_CLOSE (finishClose)
	resumePrepare                   // read the rest of a prepare the poller sent, then serve the command (finishPrepare)
	resumeReply                     // write the rest of obgate's own answer (finishReply)
	numResumeSteps
)

// handOffLabels name the hand-offs in obgate_poller_handoffs_total: the
// step a goroutine resumes at, and for a command from its start, why it
// left the poller (handOffNotFast).
var handOffLabels = [numResumeSteps + 1]string{
	resumeCommand:  "command",
	resumeSend:     "send",
	resumeRelay:    "relay",
	resumeOutcome:  "outcome",
	resumeEnd:      "end",
	resumeClose:    "close",
	resumePrepare:  "prepare",
	resumeReply:    "reply",
	handOffNotFast: "command_not_fast",
}

// handOffNotFast is the label index of a command the poller began and
// gave up before it sent anything (errWouldWait: it needs a dial, a login,
// a round trip first, or a server session not in step).
const handOffNotFast = int(numResumeSteps)

// driver runs a session's command phase on its transport: it moves the
// logged-in session onto netpoll or a net loop (transport.go), and on
// netpoll it is the statement path on the poller (this file): the read
// hooks, where each command runs, the hand-off to a goroutine and the
// close callbacks. clientNP and resumeFn are set once when the
// session joins netpoll; polled belongs to the command's owner; poll,
// kicked and clientClosed any goroutine may touch.
type driver struct {
	s        *Session              // the session it drives; set with the session
	hooked   atomic.Bool           // the poller drives the session (no netpoll OnRequest); stored after clientNP
	clientNP *connio.NetpollClient // the client transport, for direct writes
	resumeFn func()                // resumeOffPoller as a value made once
	polled   bool                  // the command in progress runs on the poller (owner)
	// rePrepared says the command in progress was served again on the
	// poller after its statement was prepared there (prepare_polled.go);
	// it is not prepared again on the poller (owner).
	rePrepared bool
	poll       atomic.Int32 // a pollStage
	kicked     atomic.Bool  // the command awaiting on the poller must go off it
	// clientClosed says the client connection's close callback ran while
	// a command had an owner, which then tears the session down.
	clientClosed atomic.Bool
	// clientGone says the client hung up while a command had an owner
	// (onClientGone), which closed that command's server connection to
	// cut it short: the owner's failed read is then no fault of the
	// server's (clientLeft).
	clientGone atomic.Bool
	// answerTimer moves a command whose answer is overdue (the server
	// side's answerTimeout) off the poller, where the read deadline
	// relayBegin set ends it; armed by the command's owner, made on first
	// use. A late fire finds nothing awaiting, or a later command, which
	// then goes on on a goroutine: harmless.
	answerTimer *time.Timer
}

// answerWait is what a command that stopped on the poller needs to go on:
// how its answer is accounted for, the rest of its request, the
// prepared statement an execute ran, an outcome or error to act on.
type answerWait struct {
	resume resumeStep
	cmd    mysqlproto.Command
	kind   route.StmtKind
	start  time.Time
	after  bool
	// unsent is the part of the request the server's socket did not take
	// (partial: some of it went out, and unsent are the bytes that follow
	// on the wire, framed; unsentChunk, when set, is the pooled chunk
	// they are in).
	unsent      []byte
	partial     bool
	unsentChunk []byte
	// ps and psServer are the prepared statement of an execute and its
	// server session (ranStatement).
	ps       *prepared.Stmt
	psServer *backend.Conn
	// closeID and closeAt are the client's statement id of a
	// COM_STMT_CLOSE and the index, in the side's server sessions, of the
	// one whose socket did not take it whole.
	closeID uint32
	closeAt int
	// reply is the rest of an answer obgate wrote itself on the poller
	// (a kept statement's prepare) that the client's socket did not take.
	reply []byte
	o     outcome
	err   error
}

// Counters of the poller path (tests read them).
var (
	polledFinished atomic.Uint64 // commands that started and ended on the poller
	pollerHandOffs atomic.Uint64 // commands handed to a goroutine
	// followedOffPoller counts commands a goroutine served because they
	// arrived while it still owned the session after one handed to it.
	followedOffPoller atomic.Uint64
)

// onClientInput runs on the poller after each read of the client
// connection.
func (d *driver) onClientInput() {
	s := d.s
	defer d.containPanic(panicPoller)
	if s.State() == StateIdle {
		d.servePolled()
	}
}

// ServerInput runs on the poller after each read of one of the
// session's server connections.
func (d *driver) ServerInput() {
	defer d.containPanic(panicPoller)
	if d.poll.Load() == pollAwaiting && d.stepPolled() {
		d.servePolled()
	}
}

// servePolled serves the buffered commands of an idle session on the
// poller, as long as the fast path takes them and they end there. It
// looks at the raw connection's backlog (atomic) before it owns the
// session; what an OB 2.0 layer holds is looked at by its owner
// (serveOffPoller).
func (d *driver) servePolled() {
	s := d.s
	for d.clientNP.Buffered() > 0 {
		if !s.lifecycle.state.CompareAndSwap(int32(StateIdle), int32(StateCommand)) {
			return
		}
		seen := d.clientNP.Buffered()
		switch d.pollable() {
		case pollWait:
			if d.closeDue() {
				d.handOffEnd(nil) // the goroutine's afterCommand closes it
				return
			}
			s.lifecycle.state.Store(int32(StateIdle))
			// A close requested meanwhile saw StateCommand and left it to
			// the owner.
			if d.closeDue() && s.lifecycle.state.CompareAndSwap(int32(StateIdle), int32(StateCommand)) {
				d.handOffEnd(nil)
				return
			}
			// Off the poller (the login goroutine's first look, or that of
			// the goroutine adopting a session, handover.go), the poller
			// may have read the rest of the packet meanwhile, seen
			// StateCommand and left it: look again. The poller appends
			// before it looks at the state, so a count that did not change
			// means it will look after us.
			if d.clientNP.Buffered() != seen {
				continue
			}
			return
		case pollSlow:
			d.handOff(resumeCommand)
			return
		}
		d.rePrepared = false
		if !d.runPolled() {
			return
		}
	}
}

// runPolled serves the buffered command on the poller, which owns the
// session. It reports whether the command ended there and the session is
// idle again; else the command awaits its answer or went to a goroutine.
func (d *driver) runPolled() bool {
	s := d.s
	d.kicked.Store(false)
	d.polled = true
	err := d.serveCommandContained()
	d.polled = false
	switch err {
	case errWouldWait:
		s.activity.stmtCount.Add(^uint64(0)) // less one: counted again when it is served
		d.handOffCounted(resumeCommand, handOffNotFast)
		return false
	case nil:
		// A command without an answer (COM_STMT_CLOSE) ended here.
		if d.closeDue() {
			d.handOffEnd(nil)
			return false
		}
		polledFinished.Add(1)
		s.srv.metrics.polledFinished.Inc()
		return d.afterCommand(nil)
	case errCloseRest:
		d.handOff(resumeClose)
		return false
	case errReplyRest:
		d.handOff(resumeReply)
		return false
	case errAwaiting:
		if s.st.then.unsent != nil {
			d.handOff(resumeSend)
			return false
		}
		d.poll.Store(pollAwaiting)
		return d.stepPolled()
	default:
		d.handOffEnd(err)
		return false
	}
}

// closeDue reports whether the session must close once its command
// ended: a close was asked for, its server session is gone for good, or
// the client hung up or closed while the command ran (netpoll closes a
// connection without OnRequest only when asked to).
func (d *driver) closeDue() bool {
	s := d.s
	return d.shouldClose() || s.side.closedIdle() || d.clientClosed.Load() ||
		(d.hooked.Load() && !d.clientNP.Conn().IsActive())
}

// pollResult says what the poller does with the buffered command.
type pollResult uint8

const (
	pollGo   pollResult = iota // serve it on the poller
	pollWait                   // the rest of its packet is not here yet
	pollSlow                   // serve it on a goroutine
)

// pollable decides where the buffered command is served, reading only
// what is buffered. The owner calls it.
func (d *driver) pollable() pollResult {
	s := d.s
	c := d.clientNP
	buffered := c.Buffered()
	if buffered < mysqlproto.HeaderLen {
		return pollWait
	}
	hdr, err := c.Peek(mysqlproto.HeaderLen)
	if err != nil {
		return pollSlow
	}
	n, seq := mysqlproto.ParseHeader(hdr)
	if seq != 0 || n == 0 || n > classifyLen {
		return pollSlow // errors and long packets are answered off the poller
	}
	if buffered < mysqlproto.HeaderLen+n {
		return pollWait
	}
	if hdr, err = c.Peek(mysqlproto.HeaderLen + 1); err != nil {
		return pollSlow
	}
	if !commands[hdr[mysqlproto.HeaderLen]].polled || s.admin || s.txnBroken || s.client.ob20Client != nil || !s.side.pollable() {
		return pollSlow
	}
	return pollGo
}

// stepPolled relays what arrived of the answer the command awaits on the
// poller, if nobody else runs it. It reports whether the command ended on
// the poller and the session is idle again.
func (d *driver) stepPolled() bool {
	s := d.s
	if !d.poll.CompareAndSwap(pollAwaiting, pollRunning) {
		return false
	}
	st := s.st
	if st.prep.be != nil {
		return d.stepPrepare()
	}
	written, err := st.runRelay(false)
	switch err {
	case backend.ErrWouldBlock:
		d.poll.Store(pollAwaiting)
		if d.kicked.Load() && d.poll.CompareAndSwap(pollAwaiting, pollNone) {
			d.handOff(resumeRelay)
		}
		return false
	case backend.ErrHandOff:
		d.poll.Store(pollNone)
		d.handOff(resumeRelay)
		return false
	}
	d.poll.Store(pollNone)
	o := st.relayEnd(written, err)
	w := &st.then
	if o.stage != stageAnswered || o.err != nil {
		w.o = o
		d.handOff(resumeOutcome)
		return false
	}
	_, err = st.answerFrom(o, w.cmd, w.kind, w.start, w.after)
	if err = st.finishAwaited(err); err != nil || d.closeDue() {
		d.handOffEnd(err)
		return false
	}
	polledFinished.Add(1)
	s.srv.metrics.polledFinished.Inc()
	return d.afterCommand(nil)
}

// kickPolled moves the command awaiting its answer on the poller, if
// any, to a goroutine, where what broke its connections is answered. Any
// goroutine.
func (d *driver) kickPolled() {
	d.kicked.Store(true)
	if d.poll.CompareAndSwap(pollAwaiting, pollNone) {
		if d.s.st.prep.be != nil {
			d.handOff(resumePrepare)
			return
		}
		d.handOff(resumeRelay)
	}
}

// ServerHungUp is kickPolled for a server connection that ended
// (backend's InputWatcher). Any goroutine.
func (d *driver) ServerHungUp() { d.kickPolled() }

// armAnswerTimer has the command awaiting its answer on the poller
// kicked off it after d. The command's owner.
func (d *driver) armAnswerTimer(after time.Duration) {
	if d.answerTimer == nil {
		d.answerTimer = time.AfterFunc(after, d.kickPolled)
		return
	}
	d.answerTimer.Reset(after)
}

// stopAnswerTimer stops the timer for good (teardown).
func (d *driver) stopAnswerTimer() {
	if d.answerTimer != nil {
		d.answerTimer.Stop()
	}
}

// handOff gives the command in progress to a pooled goroutine, which goes
// on at step.
func (d *driver) handOff(step resumeStep) { d.handOffCounted(step, int(step)) }

// handOffCounted is handOff, counted in obgate_poller_handoffs_total
// under handOffLabels[label].
func (d *driver) handOffCounted(step resumeStep, label int) {
	s := d.s
	pollerHandOffs.Add(1)
	s.srv.metrics.handOffs[label].Inc()
	if s.st == nil { // the end of a command that never began
		s.st = newStatement(s)
	}
	s.st.then.resume = step
	connio.Tasks.Run(nil, d.resumeFn)
}

// handOffEnd gives a goroutine the end of the command, with err.
func (d *driver) handOffEnd(err error) {
	s := d.s
	s.st.then.err = err
	d.handOff(resumeEnd)
}

// resumeOffPoller runs on a pooled goroutine the command the poller
// handed over, from where it stopped, then the commands that follow.
func (d *driver) resumeOffPoller() {
	s := d.s
	defer d.containPanic(panicNetpollRequest)
	st := s.st
	w := &st.then
	var err error
	switch w.resume {
	case resumeCommand:
		err = d.serveCommandContained()
	case resumeEnd:
		err = w.err
	case resumeClose:
		err = d.containCommand(preparedRun{st}.finishClose)
	case resumeReply:
		err = d.containCommand(preparedRun{st}.finishReply)
	case resumePrepare:
		preparedRun{st}.finishPrepare()
		if d.clientLeft() {
			err = errClientLeft // nobody waits for the execute's answer
			break
		}
		err = d.serveCommandContained()
	default:
		err = d.containCommand(st.resumeAnswer)
	}
	d.serveOffPoller(err)
}

// resumeAnswer goes on with a command whose request the poller sent (or
// began to send), up to its end.
func (st *statement) resumeAnswer() error {
	w := &st.then
	var err error
	switch w.resume {
	case resumeSend:
		if err = st.sendUnsent(); err != nil {
			st.releaseKept()
			err = st.answerFailure(err, w.kind, w.start)
		} else {
			_, err = st.answer(w.cmd, w.kind, w.start, w.after)
		}
	case resumeRelay:
		written, rerr := st.runRelay(true)
		_, err = st.answerFrom(st.relayEnd(written, rerr), w.cmd, w.kind, w.start, w.after)
	case resumeOutcome:
		_, err = st.answerFrom(w.o, w.cmd, w.kind, w.start, w.after)
	}
	return st.finishAwaited(err)
}

// serveOffPoller ends the command with err and serves the commands that
// follow on the current goroutine while the client sends them; then the
// session is idle and the poller serves it again.
func (d *driver) serveOffPoller(err error) {
	s := d.s
	for {
		more := err == nil && s.client.io.Buffered() > 0 // read while it owns the session
		if !d.afterCommand(err) {
			return
		}
		// afterCommand stored StateIdle before this looks at the input;
		// the poller stores the input before it looks at the state: one of
		// the two sees the other's.
		if !more && d.clientNP.Buffered() == 0 {
			return
		}
		if !s.lifecycle.state.CompareAndSwap(int32(StateIdle), int32(StateCommand)) {
			return
		}
		followedOffPoller.Add(1)
		err = d.serveCommandContained()
	}
}

// sendUnsent sends what the poller could not send of the request.
func (st *statement) sendUnsent() error {
	s := st.s
	w := &st.then
	p, chunk := w.unsent, w.unsentChunk
	w.unsent, w.unsentChunk = nil, nil
	if !w.partial {
		if err := st.writeWhole(p); err != nil {
			return brokeBeforeAnswer(s, err)
		}
		return nil
	}
	err := s.servers.Current().WriteRaw(p)
	if chunk != nil {
		connio.PutChunk(chunk)
	}
	if err != nil {
		return quitWith(QuitServerNetwork, err, lostServer(s.servers.Current().Addr))
	}
	return nil
}

// finishAwaited ends what the command began before it awaited its answer
// (an execute's prepared statement, a prepare's pending statement).
func (st *statement) finishAwaited(err error) error {
	w := &st.then
	st.s.stmts.EndPrepare()
	if ps := w.ps; ps != nil {
		st.patchOn, st.retryPS = false, nil
		if err == nil {
			preparedRun{st}.ranStatement(w.cmd, ps, w.psServer)
		}
	}
	return err
}
