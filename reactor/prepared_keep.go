package reactor

import (
	"errors"
	"obgate/reactor/prepared"
	"sync/atomic"
	"time"
)

// preparesReused counts the prepares answered from a kept statement
// (tests read it).
var preparesReused atomic.Uint64

// reuseKept answers the client's COM_STMT_PREPARE of n bytes with the
// kept statement at index i of the kept list: the statement is the
// client's again under its id, and its answer goes to the client with the
// session's current status. The request is still in the
// client buffer when inBuffer (it is taken out now); else it was read.
func (st preparedRun) reuseKept(n, i int, inBuffer bool, start time.Time) error {
	s := st.s
	if inBuffer {
		if err := s.client.skipPacket(n); err != nil {
			return err
		}
	}
	t := &s.stmts
	k := t.Kept[i]
	t.Kept = append(t.Kept[:i], t.Kept[i+1:]...)
	if t.ByID == nil {
		t.ByID = make(map[uint32]*prepared.Stmt)
	}
	t.ByID[k.ID] = k.Stmt
	answer := k.Stmt.Answer
	prepared.PatchEOFStatus(answer, s.status)
	preparesReused.Add(1)
	s.srv.metrics.preparesReused.Inc()
	s.countOut(len(answer))
	s.countStatement(k.Stmt.Kind, false, start)
	return st.pace().reply(st.statement, answer)
}

// errReplyRest stops a command on the poller whose answer obgate wrote
// itself where the client's socket did not take it whole: a goroutine
// writes the rest (finishReply).
var errReplyRest = errors.New("reply goes on off the poller")

// finishReply writes, on a goroutine, the rest of the answer the poller
// began (then.reply, which the statement it answers owns).
func (st preparedRun) finishReply() error {
	s := st.s
	rest := st.then.reply
	st.then.reply = nil
	if err := s.client.io.Write(rest); err != nil {
		return quit(QuitClientNetwork, err)
	}
	return wrapClient(s.client.io.Flush())
}
