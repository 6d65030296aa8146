package reactor

import (
	"time"

	"obgate/mysqlproto"
	"obgate/reactor/backend"
	"obgate/reactor/prepared"
	"obgate/route"
)

// onPoller is the pace of a command the poller runs (poller.go): nothing
// waits. A request goes out as far as the server's socket takes it now,
// the rest by a goroutine (sendUnsent); the answer is relayed as it
// arrives (stepPolled); obgate's own reply goes as far as the client's
// socket takes it (finishReply).
type onPoller struct{}

func (onPoller) mayWait() error  { return errWouldWait }
func (onPoller) readyOnly() bool { return true }

// sendOnePiece: the request stays in the client buffer either way.
func (onPoller) sendOnePiece(st *statement, p []byte) (bool, error) {
	st.tryRequest(p)
	st.noteTunnel(p)
	return true, nil
}

func (onPoller) sendHeld(st *statement, _ *backend.Conn, pkt []byte) error {
	st.sendPolled(pkt)
	return nil
}

// answer stops the command: the answer is relayed as it arrives
// (stepPolled), and the rest of statement.answer runs then (answerFrom).
func (onPoller) answer(st *statement, cmd mysqlproto.Command, kind route.StmtKind, start time.Time, after bool) (bool, error) {
	w := &st.then
	w.cmd, w.kind, w.start, w.after = cmd, kind, start, after
	if w.unsent == nil {
		st.relayBegin(cmd)
	}
	return false, errAwaiting
}

// answerDue arms the timer that moves the command off the poller, where
// the read deadline ends it: nobody reads with the deadline here.
func (onPoller) answerDue(st *statement, d time.Duration) { st.s.drv.armAnswerTimer(d) }

// prepareOn: preparing takes a round trip, which on the poller is a
// state of the command (prepare_polled.go).
func (onPoller) prepareOn(st *statement, be *backend.Conn, ps *prepared.Stmt, id uint32) (uint32, error) {
	return 0, preparedRun{st}.preparePolled(be, ps, id)
}

func (onPoller) closeOn(st *statement, be *backend.Conn, pkt []byte, id uint32, at int) error {
	// The client's next command is here already (go-sql-driver sends a
	// close with the next prepare): it goes out with the close, most
	// likely to the same server, in one segment. Where it does not, the
	// kernel sends the close within 200 ms, and a close has no answer.
	more := st.s.drv.clientNP.Buffered() > 0
	rest, owned, raw := be.TryRequest(pkt, more)
	if rest == nil {
		return nil
	}
	w := &st.then
	w.unsent, w.partial, w.unsentChunk = rest, raw, owned
	w.closeID, w.closeAt = id, at
	return errCloseRest
}

func (onPoller) reply(st *statement, answer []byte) error {
	w, err := st.s.drv.clientNP.TryWrite(answer)
	if err != nil {
		return quit(QuitClientNetwork, err)
	}
	if w < len(answer) {
		st.then.reply = answer[w:]
		return errReplyRest
	}
	return nil
}
