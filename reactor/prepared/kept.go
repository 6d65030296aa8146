package prepared

import (
	"bytes"
	"encoding/binary"
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
// kept statement stale (Table.gen). Stale and surplus statements are
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

// Kept is a statement the client closed that is still prepared on
// server sessions under id.
type Kept struct {
	ID   uint32
	Stmt *Stmt
}

// maxKeptSQL and maxKeptAnswer bound a kept statement's text and its
// prepare's answer (the answer is held in memory).
const (
	maxKeptSQL    = 4096
	maxKeptAnswer = 8192
)

// KeepsParse reports whether a statement of kind kind leaves the state a
// text prepares in as it is.
func KeepsParse(f *route.Facts) bool {
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

// StateChanged makes every kept statement stale: the client's state may
// prepare texts differently from now on.
func (t *Table) StateChanged() { t.gen++ }

// StartCapture marks p, whose prepare is about to go to a server, to keep
// the answer the client gets (CaptureAnswer), when p could be kept later.
func (t *Table) StartCapture(p *Stmt, limit int64) {
	p.Answer = p.Answer[:0]
	p.gen = t.gen
	p.Capture = limit > 0 && len(p.SQL) <= maxKeptSQL && keepableKind(&p.Facts)
}

// CaptureAnswer appends bytes of the prepare's answer that went to the
// client. The owner of the command calls it.
func (p *Stmt) CaptureAnswer(b []byte) {
	if len(p.Answer)+len(b) > maxKeptAnswer {
		p.Capture = false
		p.Answer = p.Answer[:0]
		return
	}
	p.Answer = append(p.Answer, b...)
}

// KeptFor returns the fresh kept statement prepared from sql, if any.
func (t *Table) KeptFor(sql []byte) (int, *Stmt) {
	for i, k := range t.Kept {
		if k.Stmt.gen == t.gen && bytes.Equal(k.Stmt.SQL, sql) {
			return i, k.Stmt
		}
	}
	return -1, nil
}

// Keep keeps the statement id the client closes, when it may be kept. It
// reports whether it did, and the id of a kept statement that must now be
// closed on the servers (0 when none): a stale one, else the oldest when
// there are more than limit.
func (t *Table) Keep(id uint32, p *Stmt, limit int64) (evict uint32, kept bool) {
	if limit <= 0 || !p.Capture || len(p.Answer) == 0 || p.Home != nil || p.gen != t.gen {
		return 0, false
	}
	delete(t.ByID, id)
	t.Kept = append(t.Kept, Kept{ID: id, Stmt: p})
	victim := -1
	for i, k := range t.Kept {
		if k.Stmt.gen != t.gen {
			victim = i
			break
		}
	}
	if victim < 0 && int64(len(t.Kept)) > limit {
		victim = 0
	}
	if victim < 0 {
		return 0, true
	}
	v := t.Kept[victim]
	t.Kept = append(t.Kept[:victim], t.Kept[victim+1:]...)
	t.Recycle(v.Stmt)
	return v.ID, true
}

// PatchEOFStatus writes status into the EOF packets of a prepare's answer
// (after its parameter and column definitions, when the client did not
// ask to go without them): the answer may be replayed long after the
// server wrote it.
func PatchEOFStatus(answer []byte, status mysqlproto.ServerStatus) {
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

// KeepsStatements reports whether a command other than COM_QUERY leaves
// the state a text prepares in as it is.
func KeepsStatements(cmd mysqlproto.Command) bool {
	switch cmd {
	case mysqlproto.ComPing, mysqlproto.ComQuit, mysqlproto.ComStatistics,
		mysqlproto.ComStmtPrepare, mysqlproto.ComStmtExecute, mysqlproto.ComStmtClose,
		mysqlproto.ComStmtReset, mysqlproto.ComStmtSendLongData, mysqlproto.ComStmtFetch:
		return true
	}
	return false
}
