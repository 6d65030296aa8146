package route

// Facts is what one lexer pass over a statement's text tells a session and
// the router. Lex and LexPrefix fill it without allocating; the byte
// slices in Tables are borrowed from the input and are valid only while
// the input is.
//
// Where the text does not settle a fact, the zero value is reported, and
// every zero value is the careful answer: not read-only, no transaction
// control, no KILL to run locally. Pins found are always reported, even in
// an incomplete text, because a pin that is there is there.
type Facts struct {
	// Kind and Second are exactly what Classify reports for the same text.
	// Classify reads executable comments (/*! ... */) as comments; the
	// other facts read them as code. When code inside such a comment comes
	// before the statement's first visible keyword, the statement-level
	// facts (Txn, Kill, PlainBegin, ReadOnly) stay at their zero values.
	Kind   StmtKind
	Second string

	// Tables are the first tables named after FROM, JOIN, INTO, UPDATE,
	// TABLE(S), INSERT, REPLACE, TRUNCATE, DESC/DESCRIBE/EXPLAIN and
	// HANDLER, in the order they appear (subqueries included), without
	// repeats. NumTables of them are set; MoreTables says that more were
	// named than Tables holds. SHOW statements report none.
	Tables     [4]TableRef
	NumTables  int
	MoreTables bool

	// ReadConsistency and QueryTimeout come from OceanBase hints in a
	// /*+ ... */ comment before the statement's first keyword or right
	// after it: read_consistency(weak|strong|frozen) and query_timeout(N),
	// N in microseconds. The first of each counts; QueryTimeout is 0 when
	// absent or not a positive number that fits an int64.
	ReadConsistency Consistency
	QueryTimeout    int64

	// TargetDBServer is the value of ODP's routing comment
	// /* TARGET_DB_SERVER = '127.0.0.1:2881' */ (the addresses, as
	// written: "ip:port[,ip:port...]"), read from a plain comment (not a
	// /*+ ... */ hint) in the same place as the hints; nil when there is
	// none. It is borrowed from the input; the first one counts.
	TargetDBServer []byte

	// Txn is the transaction control the first statement performs. Chain
	// and Release are COMMIT/ROLLBACK ... AND CHAIN and ... RELEASE (false
	// for AND NO CHAIN and NO RELEASE). OnePhase is XA COMMIT ... ONE PHASE.
	// PlainBegin says the text is a transaction start and nothing else:
	// BEGIN [WORK] or START TRANSACTION [characteristics], not MariaDB's
	// BEGIN NOT ATOMIC block and not followed by another statement.
	// TxnReadOnly is START TRANSACTION READ ONLY.
	Txn         TxnOp
	Chain       bool
	Release     bool
	OnePhase    bool
	PlainBegin  bool
	TxnReadOnly bool

	// Pins are the server-bound effects of every statement in the text;
	// see Pin.
	Pins Pin

	// MultiStatement says that a ';' outside quotes and comments is
	// followed by more code (anything but blanks, comments and ';').
	MultiStatement bool

	// ReadOnly says the statement may run again on another server if
	// nothing of its answer reached the client: a SELECT (WITH ... SELECT,
	// VALUES, TABLE), SHOW, DESC/DESCRIBE or EXPLAIN that takes no locks
	// (FOR UPDATE, FOR SHARE, LOCK IN SHARE MODE), writes nothing (INTO,
	// DML, := assignments, GET_LOCK and the other lock functions, sequence
	// NEXTVAL/SETVAL/NEXT VALUE FOR, LAST_INSERT_ID(expr)), has no pin,
	// and is alone and complete. Stored functions are not known: a SELECT
	// calling one that writes is reported read-only.
	ReadOnly bool

	// Kill is KILL [CONNECTION | QUERY] id as obgate runs it itself.
	Kill KillInfo

	// Incomplete says that the text is not all of the statement (LexPrefix)
	// or ends inside a string, quoted name or comment. The statement-level
	// facts then keep their careful zero values; Pins, Tables, hints and
	// MultiStatement report what the text shows.
	Incomplete bool
}

// TableRef names a table. DB is empty when the name is not qualified.
// Both are borrowed sub-slices of the lexed text with the enclosing
// backquotes stripped. A backquote written twice inside a quoted name
// stays written twice; an unquoted name never holds a backquote, so
// turning each such pair into one backquote gives the name.
type TableRef struct {
	DB   []byte
	Name []byte
}

// Consistency is the read consistency a statement asks for in a hint.
type Consistency uint8

// Read consistencies.
const (
	ConsistencyDefault Consistency = iota // no hint
	ConsistencyStrong
	ConsistencyWeak
	ConsistencyFrozen
)

var consistencyNames = [...]string{"DEFAULT", "STRONG", "WEAK", "FROZEN"}

func (c Consistency) String() string { return enumName(c, consistencyNames[:]) }

// TxnOp is the transaction control a statement performs.
type TxnOp uint8

// Transaction controls.
const (
	TxnNone                TxnOp = iota
	TxnBegin                     // BEGIN [WORK], START TRANSACTION ...
	TxnCommit                    // COMMIT [WORK] ...
	TxnRollback                  // ROLLBACK [WORK] ...
	TxnSavepoint                 // SAVEPOINT name
	TxnRollbackToSavepoint       // ROLLBACK [WORK] TO [SAVEPOINT] name
	TxnReleaseSavepoint          // RELEASE SAVEPOINT name
	TxnXAStart                   // XA START|BEGIN xid [JOIN|RESUME]
	TxnXAEnd                     // XA END xid [SUSPEND [FOR MIGRATE]]
	TxnXAPrepare                 // XA PREPARE xid
	TxnXACommit                  // XA COMMIT xid [ONE PHASE]
	TxnXARollback                // XA ROLLBACK xid
)

var txnOpNames = [...]string{
	"NONE", "BEGIN", "COMMIT", "ROLLBACK", "SAVEPOINT", "ROLLBACK TO SAVEPOINT",
	"RELEASE SAVEPOINT", "XA START", "XA END", "XA PREPARE", "XA COMMIT", "XA ROLLBACK",
}

func (t TxnOp) String() string { return enumName(t, txnOpNames[:]) }

// KillInfo is a KILL [CONNECTION | QUERY] id statement: OK is true only
// when the text is exactly that (trailing ';' allowed) and id fits 32
// bits. Anything else (KILL PROXYSESSION, KILL USER, KILL QUERY ID ...)
// has OK false and is forwarded or handled elsewhere.
type KillInfo struct {
	ID    uint32
	Query bool
	OK    bool
}

// Lex reads the facts of sql, the whole text of one COM_QUERY (the payload
// after the command byte). It does not allocate and does not panic on any
// input.
func Lex(sql []byte) Facts { return lex(sql, false) }

// LexPrefix is Lex for the first bytes of a longer statement: the facts it
// reports hold for the whole statement, and Incomplete is set.
func LexPrefix(sql []byte) Facts { return lex(sql, true) }
