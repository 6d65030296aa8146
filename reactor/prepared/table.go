package prepared

import (
	"obgate/config"
	"obgate/mysqlproto"
	"obgate/reactor/backend"
	"obgate/route"
)

// Stmt is a statement prepared by the client.
type Stmt struct {
	SQL     []byte // the COM_STMT_PREPARE payload after the command byte
	Params  uint16
	Columns uint16
	Types   []byte        // parameter types from the last execute that sent them
	Home    *backend.Conn // where long data or an open cursor lives
	Kind    route.StmtKind
	Facts   route.Facts // of sql, which it borrows: executes are routed by it
	// answer is the answer the client got to its prepare, while capture
	// says it is being kept whole; gen is the Table.gen it was
	// prepared at (kept.go).
	Answer  []byte
	Capture bool
	gen     uint64
}

// Table is the client's prepared statements under obgate's ids. Only
// the owner of the session's command (the poller or a goroutine that
// runs it) uses it.
type Table struct {
	ByID    map[uint32]*Stmt
	Last    uint32 // the id given last
	Pending *Stmt  // the COM_STMT_PREPARE in progress
	// free are closed statements whose memory the next prepares reuse;
	// request holds the COM_STMT_PREPARE being served. Applications
	// that prepare, execute and close each statement (go-sql-driver with
	// parameters) so allocate nothing per statement.
	free    []*Stmt
	Request []byte
	// closing is the COM_STMT_CLOSE obgate sends a server session.
	Closing [mysqlproto.HeaderLen + 5]byte
	// kept are statements the client closed that stay prepared on the
	// server sessions, oldest first; gen counts the client's changes of
	// state that make them stale (kept.go).
	Kept []Kept
	gen  uint64
}

// maxFreeStmts bounds Table.free.
const maxFreeStmts = 8

// New returns an empty statement, reused when one was closed.
func (t *Table) New() *Stmt {
	if n := len(t.free); n > 0 {
		p := t.free[n-1]
		t.free = t.free[:n-1]
		return p
	}
	return &Stmt{}
}

// Close forgets statement id and keeps its memory for a later prepare.
func (t *Table) Close(id uint32) {
	p := t.ByID[id]
	delete(t.ByID, id)
	t.Recycle(p)
}

// Recycle keeps the memory of a statement nobody refers to any more (one
// closed, or one whose prepare did not go out) for a later prepare.
func (t *Table) Recycle(p *Stmt) {
	if p == nil || len(t.free) >= maxFreeStmts {
		return
	}
	*p = Stmt{SQL: p.SQL[:0], Types: p.Types[:0], Answer: p.Answer[:0]}
	t.free = append(t.free, p)
}

// Add records p under a new id and returns the id (never 0).
func (t *Table) Add(p *Stmt) uint32 {
	t.Last++
	if t.Last == 0 {
		t.Last = 1
	}
	if t.ByID == nil {
		t.ByID = make(map[uint32]*Stmt)
	}
	t.ByID[t.Last] = p
	return t.Last
}

// Admit returns why a session may not prepare one more statement of
// textLen bytes: at most client_max_prepared_stmt_count statements, and
// client_max_memory_size bytes of their text together (a server's
// max_prepared_stmt_count answer, ERR 1461); nil when it may.
func (t *Table) Admit(textLen int, cfg *config.Config) *mysqlproto.SQLError {
	if int64(len(t.ByID)) >= cfg.ClientMaxPreparedStmtCount {
		return mysqlproto.NewSQLError(mysqlproto.ERMaxPreparedStmtCount,
			"Can't create more than max_prepared_stmt_count statements (current value: %d)", cfg.ClientMaxPreparedStmtCount)
	}
	total := int64(textLen)
	if total > cfg.ClientMaxMemorySize {
		return nil // too large to hold at all: reading it refuses it (ERR 1153)
	}
	for _, p := range t.ByID {
		total += int64(len(p.SQL))
	}
	if total > cfg.ClientMaxMemorySize {
		return mysqlproto.NewSQLError(mysqlproto.ERMaxPreparedStmtCount,
			"Can't create more prepared statements: their text would take more than client_max_memory_size (%d bytes) in this session", cfg.ClientMaxMemorySize)
	}
	return nil
}

// Reset forgets every statement, the kept ones too: the client's reset or
// change of user closed them on the server.
func (t *Table) Reset() {
	clear(t.ByID)
	for _, k := range t.Kept {
		t.Recycle(k.Stmt)
	}
	t.Kept = t.Kept[:0]
	t.gen++
}

// LeftHome forgets be as the home of any statement: be is gone.
func (t *Table) LeftHome(be *backend.Conn) {
	for _, p := range t.ByID {
		if p.Home == be {
			p.Home = nil
		}
	}
}

// EndPrepare ends the COM_STMT_PREPARE in progress: later answers are
// not a prepare's.
func (t *Table) EndPrepare() { t.Pending = nil }
