package reactor

import (
	"bytes"
	"encoding/binary"
	"errors"
	"sync/atomic"
	"time"

	"obgate/mysqlproto"
	"obgate/route"
)

// Kept statements: a prepare answered without a server.
//
// Database drivers commonly prepare, execute and close a statement for
// every query with arguments (go-sql-driver's default): three server
// commands, and in OceanBase mode often a fourth and fifth, as the
// execute's partition leader must prepare the statement too and the close
// goes to both. A statement the client closes therefore stays prepared on
// its server sessions, up to client_ps_keep_count per session, with the
// answer its prepare got. The client's next prepare of the same text is
// answered with that answer under the same statement id, without a server
// round trip, and its close costs nothing; the execute runs as on any
// statement, prepared again on a server session that lacks it.
//
// A kept statement is only used while the client's state is the one it
// was prepared in: any command that may change how a text prepares (a
// change of database, SET, DDL, a multi-statement, any command other than
// the plain statements and the prepared-statement commands) makes every
// kept statement stale (stmtTable.gen). Stale and surplus statements are
// closed on the servers by later client closes, one each, so that a
// session holds at most client_ps_keep_count statements the client does
// not know of. Another session's DDL can change what a text would prepare
// to; a kept statement then answers with the old shape, as a statement the
// client kept open itself would, and the execute's own result set carries
// the new columns.
//
// Only statements whose prepare answered OK, that only read or write rows
// (SELECT, INSERT, UPDATE, DELETE, REPLACE), hold no long data or cursor
// and whose text and answer are short are kept.

// keptStmt is a statement the client closed that is still prepared on
// server sessions under id.
type keptStmt struct {
	id uint32
	p  *prepared
}

// maxKeptSQL and maxKeptAnswer bound a kept statement's text and its
// prepare's answer (the answer is held in memory).
const (
	maxKeptSQL    = 4096
	maxKeptAnswer = 8192
)

// preparesReused counts the prepares answered from a kept statement
// (tests read it).
var preparesReused atomic.Uint64

// keepsParse reports whether a statement of kind kind leaves the state a
// text prepares in as it is.
func keepsParse(f *route.Facts) bool {
	if f.MultiStatement || f.Incomplete {
		return false
	}
	switch f.Kind {
	case route.StmtSelect, route.StmtInsert, route.StmtUpdate, route.StmtDelete, route.StmtReplace,
		route.StmtBegin, route.StmtCommit, route.StmtRollback, route.StmtShow, route.StmtExplain, route.StmtDesc:
		return true
	}
	return false
}

// keepableKind reports whether a statement of these facts may be kept.
func keepableKind(f *route.Facts) bool {
	if f.MultiStatement || f.Incomplete {
		return false
	}
	switch f.Kind {
	case route.StmtSelect, route.StmtInsert, route.StmtUpdate, route.StmtDelete, route.StmtReplace:
		return true
	}
	return false
}

// stateChanged makes every kept statement stale: the client's state may
// prepare texts differently from now on.
func (t *stmtTable) stateChanged() { t.gen++ }

// startCapture marks p, whose prepare is about to go to a server, to keep
// the answer the client gets (flushDecided), when p could be kept later.
func (t *stmtTable) startCapture(p *prepared, limit int64) {
	p.answer = p.answer[:0]
	p.gen = t.gen
	p.capture = limit > 0 && len(p.sql) <= maxKeptSQL && keepableKind(&p.facts)
}

// captureAnswer appends bytes of the prepare's answer that went to the
// client. The owner of the command calls it.
func (p *prepared) captureAnswer(b []byte) {
	if len(p.answer)+len(b) > maxKeptAnswer {
		p.capture = false
		p.answer = p.answer[:0]
		return
	}
	p.answer = append(p.answer, b...)
}

// keptFor returns the fresh kept statement prepared from sql, if any.
func (t *stmtTable) keptFor(sql []byte) (int, *prepared) {
	for i, k := range t.kept {
		if k.p.gen == t.gen && bytes.Equal(k.p.sql, sql) {
			return i, k.p
		}
	}
	return -1, nil
}

// keep keeps the statement id the client closes, when it may be kept. It
// reports whether it did, and the id of a kept statement that must now be
// closed on the servers (0 when none): a stale one, else the oldest when
// there are more than limit.
func (t *stmtTable) keep(id uint32, p *prepared, limit int64) (evict uint32, kept bool) {
	if limit <= 0 || !p.capture || len(p.answer) == 0 || p.home != nil || p.gen != t.gen {
		return 0, false
	}
	delete(t.byID, id)
	t.kept = append(t.kept, keptStmt{id: id, p: p})
	victim := -1
	for i, k := range t.kept {
		if k.p.gen != t.gen {
			victim = i
			break
		}
	}
	if victim < 0 && int64(len(t.kept)) > limit {
		victim = 0
	}
	if victim < 0 {
		return 0, true
	}
	v := t.kept[victim]
	t.kept = append(t.kept[:victim], t.kept[victim+1:]...)
	t.recycle(v.p)
	return v.id, true
}

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
	k := t.kept[i]
	t.kept = append(t.kept[:i], t.kept[i+1:]...)
	if t.byID == nil {
		t.byID = make(map[uint32]*prepared)
	}
	t.byID[k.id] = k.p
	answer := k.p.answer
	patchEOFStatus(answer, s.status)
	preparesReused.Add(1)
	s.srv.metrics.preparesReused.Inc()
	s.countOut(len(answer))
	s.countStatement(k.p.kind, false, start)
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

// patchEOFStatus writes status into the EOF packets of a prepare's answer
// (after its parameter and column definitions, when the client did not
// ask to go without them): the answer may be replayed long after the
// server wrote it.
func patchEOFStatus(answer []byte, status mysqlproto.ServerStatus) {
	for at := 0; at+mysqlproto.HeaderLen <= len(answer); {
		n, _ := mysqlproto.ParseHeader(answer[at:])
		body := answer[at+mysqlproto.HeaderLen:]
		if n > len(body) {
			return
		}
		if n == 5 && body[0] == mysqlproto.EOFHeader {
			binary.LittleEndian.PutUint16(body[3:5], uint16(status))
		}
		at += mysqlproto.HeaderLen + n
	}
}

// keepsStatements reports whether a command other than COM_QUERY leaves
// the state a text prepares in as it is.
func keepsStatements(cmd mysqlproto.Command) bool {
	switch cmd {
	case mysqlproto.ComPing, mysqlproto.ComQuit, mysqlproto.ComStatistics,
		mysqlproto.ComStmtPrepare, mysqlproto.ComStmtExecute, mysqlproto.ComStmtClose,
		mysqlproto.ComStmtReset, mysqlproto.ComStmtSendLongData, mysqlproto.ComStmtFetch:
		return true
	}
	return false
}
