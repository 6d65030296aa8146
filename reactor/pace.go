package reactor

import (
	"errors"
	"time"

	"obgate/mysqlproto"
	"obgate/reactor/backend"
	"obgate/reactor/prepared"
	"obgate/route"
)

// A pace is how the command in progress may spend time. The driver picks
// it for each command (driver.pace): on a goroutine anything may wait
// (offPoller); on the poller nothing may (onPoller, pace_poller.go). The
// statement path is written once against it and never asks where it
// runs:
//
//   - An operation that may wait (a dial, a login, a round trip with a
//     server before the statement, an answer obgate writes itself) calls
//     mayWait first, before it changes anything. On the poller that stops
//     the command with errWouldWait, and the driver serves it again from
//     its start on a goroutine (runPolled). These calls are the
//     statement's resume points.
//   - Where the two differ in how they do the same step (send the
//     request, wait for the answer, write obgate's own reply), the pace
//     does the step.
//   - Choosing a server session, readyOnly is a parameter of the route:
//     only a server session that needs nothing before the statement.
//
// Only the command's owner calls a pace.
type pace interface {
	// mayWait is called before anything that may wait; it returns nil
	// where the command may wait, else errWouldWait.
	mayWait() error
	// readyOnly reports whether the statement may only take a server
	// session that is ready now, planned from cached routing state
	// (route.Request.NoWait).
	readyOnly() bool
	// sendOnePiece writes a one-piece request p, borrowed from the client
	// buffer, to the current server session. held reports that p must
	// stay the statement's kept request until the command ends whatever
	// its size (the rest is sent from it later).
	sendOnePiece(st *statement, p []byte) (held bool, err error)
	// sendHeld writes a request obgate holds whole (sendRequest) to be.
	sendHeld(st *statement, be *backend.Conn, pkt []byte) error
	// answer streams the answer to cmd and accounts for it (statement.answer).
	answer(st *statement, cmd mysqlproto.Command, kind route.StmtKind, start time.Time, after bool) (bool, error)
	// answerDue is told that the answer the relay begins is due after d.
	answerDue(st *statement, d time.Duration)
	// prepareOn prepares ps on be, where the client's statement id is id,
	// and returns the server's statement id (statement.prepareOn).
	prepareOn(st *statement, be *backend.Conn, ps *prepared.Stmt, id uint32) (uint32, error)
	// closeOn sends the COM_STMT_CLOSE pkt (the client's statement id,
	// at index at of the server sessions) to be; an error stops the walk
	// over the server sessions.
	closeOn(st *statement, be *backend.Conn, pkt []byte, id uint32, at int) error
	// reply writes an answer obgate made itself (a kept statement's
	// prepare) to the client.
	reply(st *statement, answer []byte) error
}

// errWouldWait stops a command before it changed anything, at an
// operation that would wait where nothing may (mayWait, or no server
// session ready now): the driver serves it again from its start where it
// may wait. errAwaiting stops it once its request is out: its answer is
// relayed as it arrives (pace_poller.go).
var (
	errWouldWait = errors.New("command would wait")
	errAwaiting  = errors.New("command awaits its answer on the poller")
)

// stopped reports whether err stopped the command to go on later (the
// driver's business), rather than failed it.
func stopped(err error) bool { return err == errWouldWait || err == errAwaiting }

// offPoller is the pace of a command on a goroutine: each step is done
// whole, waiting as long as it takes.
type offPoller struct{}

func (offPoller) mayWait() error  { return nil }
func (offPoller) readyOnly() bool { return false }

func (offPoller) sendOnePiece(st *statement, p []byte) (bool, error) {
	return false, st.writeWhole(p)
}

func (offPoller) sendHeld(st *statement, be *backend.Conn, pkt []byte) error {
	return st.sendRequest(be, pkt)
}

func (offPoller) answer(st *statement, cmd mysqlproto.Command, kind route.StmtKind, start time.Time, after bool) (bool, error) {
	return st.answerFrom(st.relay(cmd), cmd, kind, start, after)
}

func (offPoller) answerDue(*statement, time.Duration) {} // the read deadline ends the wait

func (offPoller) prepareOn(st *statement, be *backend.Conn, ps *prepared.Stmt, _ uint32) (uint32, error) {
	return preparedRun{st}.prepareOn(be, ps)
}

func (offPoller) closeOn(st *statement, be *backend.Conn, pkt []byte, _ uint32, _ int) error {
	if err := be.WriteRequest(pkt, true, true); err != nil {
		st.s.side.dropBroken(be)
	}
	return nil
}

func (offPoller) reply(st *statement, answer []byte) error {
	s := st.s
	if err := s.client.io.Write(answer); err != nil {
		return quit(QuitClientNetwork, err)
	}
	return wrapClient(s.client.io.Flush())
}

// pace is the pace of the command in progress. The command's owner.
func (d *driver) pace() pace {
	if d.polled {
		return onPoller{}
	}
	return offPoller{}
}

// pace is the pace of the statement's command.
func (st *statement) pace() pace { return st.s.drv.pace() }
