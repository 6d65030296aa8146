package route

// kw identifies a word the statement-facts lexer looks at: keywords and
// the names of built-in functions that matter. Every other word is kwNone.
type kw uint8

const (
	kwNone kw = iota

	// Statement heads.
	kwSelect
	kwWith
	kwValues
	kwTable
	kwInsert
	kwUpdate
	kwDelete
	kwReplace
	kwSet
	kwBegin
	kwStart
	kwCommit
	kwRollback
	kwShow
	kwKill
	kwCreate
	kwDrop
	kwLoad
	kwXA
	kwPrepare
	kwExecute
	kwDeallocate
	kwLock
	kwUnlock
	kwTruncate
	kwExplain
	kwDesc
	kwDescribe
	kwSavepoint
	kwRelease
	kwHandler
	kwGet

	// Transaction control and KILL.
	kwWork
	kwTransaction
	kwAnd
	kwNo
	kwChain
	kwTo
	kwOnly
	kwRead
	kwWrite
	kwConsistent
	kwSnapshot
	kwNot
	kwJoin
	kwResume
	kwEnd
	kwSuspend
	kwFor
	kwMigrate
	kwOne
	kwPhase
	kwQuery
	kwConnection

	// Pins.
	kwTemporary
	kwTables
	kwWarnings
	kwErrors
	kwCount
	kwDiagnostics
	kwCurrent
	kwStacked
	kwOpen
	kwFrom
	kwOr
	kwGlobal

	// Built-in functions and sequence words.
	kwLastInsertID
	kwFoundRows
	kwRowCount
	kwConnectionID
	kwGetLock
	kwReleaseLock
	kwReleaseAllLocks
	kwIsUsedLock
	kwIsFreeLock
	kwNextval
	kwSetval
	kwLastval
	kwCurrval
	kwNext
	kwPrevious
	kwValue

	// Locking reads and writes.
	kwInto
	kwShare
	kwIn

	// Table names and the clauses around them.
	kwStraightJoin
	kwLowPriority
	kwHighPriority
	kwDelayed
	kwIgnore
	kwIf
	kwExists
	kwLateral
	kwExtended
	kwPartitions
	kwAnalyze
	kwDual
	kwOutfile
	kwDumpfile
	kwFormat
	kwAs
	kwWhere
	kwOn
	kwUsing
	kwOrder
	kwGroup
	kwHaving
	kwLimit
	kwUnion
	kwExcept
	kwIntersect
	kwWindow
	kwPartition
	kwReturning
	kwLeft
	kwRight
	kwInner
	kwCross
	kwNatural
	kwOuter

	// Words before a '(' that opens a subquery or a list, not a call.
	kwAll
	kwAny
	kwSome
	kwXor
	kwWhen
	kwThen
	kwElse
	kwCase
	kwReturn
	kwLike
	kwIs
	kwBetween
	kwDistinct
	kwBy

	kwSentinel // number of keywords
)

// numKW is the number of keywords, for tables indexed by kw.
const numKW = int(kwSentinel)

var kwNames = [numKW]string{
	kwSelect: "SELECT", kwWith: "WITH", kwValues: "VALUES", kwTable: "TABLE",
	kwInsert: "INSERT", kwUpdate: "UPDATE", kwDelete: "DELETE", kwReplace: "REPLACE",
	kwSet: "SET", kwBegin: "BEGIN", kwStart: "START", kwCommit: "COMMIT",
	kwRollback: "ROLLBACK", kwShow: "SHOW", kwKill: "KILL", kwCreate: "CREATE",
	kwDrop: "DROP", kwLoad: "LOAD", kwXA: "XA", kwPrepare: "PREPARE",
	kwExecute: "EXECUTE", kwDeallocate: "DEALLOCATE", kwLock: "LOCK", kwUnlock: "UNLOCK",
	kwTruncate: "TRUNCATE", kwExplain: "EXPLAIN", kwDesc: "DESC", kwDescribe: "DESCRIBE",
	kwSavepoint: "SAVEPOINT", kwRelease: "RELEASE", kwHandler: "HANDLER", kwGet: "GET",

	kwWork: "WORK", kwTransaction: "TRANSACTION", kwAnd: "AND", kwNo: "NO",
	kwChain: "CHAIN", kwTo: "TO", kwOnly: "ONLY", kwRead: "READ", kwWrite: "WRITE",
	kwConsistent: "CONSISTENT", kwSnapshot: "SNAPSHOT", kwNot: "NOT", kwJoin: "JOIN",
	kwResume: "RESUME", kwEnd: "END", kwSuspend: "SUSPEND", kwFor: "FOR",
	kwMigrate: "MIGRATE", kwOne: "ONE", kwPhase: "PHASE", kwQuery: "QUERY",
	kwConnection: "CONNECTION",

	kwTemporary: "TEMPORARY", kwTables: "TABLES", kwWarnings: "WARNINGS", kwErrors: "ERRORS",
	kwCount: "COUNT", kwDiagnostics: "DIAGNOSTICS", kwCurrent: "CURRENT", kwStacked: "STACKED",
	kwOpen: "OPEN", kwFrom: "FROM", kwOr: "OR", kwGlobal: "GLOBAL",

	kwLastInsertID: "LAST_INSERT_ID", kwFoundRows: "FOUND_ROWS", kwRowCount: "ROW_COUNT",
	kwConnectionID: "CONNECTION_ID", kwGetLock: "GET_LOCK", kwReleaseLock: "RELEASE_LOCK",
	kwReleaseAllLocks: "RELEASE_ALL_LOCKS", kwIsUsedLock: "IS_USED_LOCK", kwIsFreeLock: "IS_FREE_LOCK",
	kwNextval: "NEXTVAL", kwSetval: "SETVAL", kwLastval: "LASTVAL", kwCurrval: "CURRVAL",
	kwNext: "NEXT", kwPrevious: "PREVIOUS", kwValue: "VALUE",

	kwInto: "INTO", kwShare: "SHARE", kwIn: "IN",

	kwStraightJoin: "STRAIGHT_JOIN", kwLowPriority: "LOW_PRIORITY", kwHighPriority: "HIGH_PRIORITY",
	kwDelayed: "DELAYED", kwIgnore: "IGNORE", kwIf: "IF", kwExists: "EXISTS", kwLateral: "LATERAL",
	kwExtended: "EXTENDED", kwPartitions: "PARTITIONS", kwAnalyze: "ANALYZE", kwDual: "DUAL",
	kwOutfile: "OUTFILE", kwDumpfile: "DUMPFILE", kwFormat: "FORMAT", kwAs: "AS",
	kwWhere: "WHERE", kwOn: "ON", kwUsing: "USING", kwOrder: "ORDER", kwGroup: "GROUP",
	kwHaving: "HAVING", kwLimit: "LIMIT", kwUnion: "UNION", kwExcept: "EXCEPT",
	kwIntersect: "INTERSECT", kwWindow: "WINDOW", kwPartition: "PARTITION",
	kwReturning: "RETURNING", kwLeft: "LEFT", kwRight: "RIGHT", kwInner: "INNER",
	kwCross: "CROSS", kwNatural: "NATURAL", kwOuter: "OUTER",

	kwAll: "ALL", kwAny: "ANY", kwSome: "SOME", kwXor: "XOR", kwWhen: "WHEN",
	kwThen: "THEN", kwElse: "ELSE", kwCase: "CASE", kwReturn: "RETURN", kwLike: "LIKE",
	kwIs: "IS", kwBetween: "BETWEEN", kwDistinct: "DISTINCT", kwBy: "BY",
}

// Keyword classes.
const (
	clsFunc   uint8 = 1 << iota // a built-in function name
	clsClause                   // ends a table list; never a table name when unquoted
	clsSkip                     // a modifier between a table keyword and the name
)

var kwClasses = func() (c [numKW]uint8) {
	for _, k := range []kw{kwLastInsertID, kwFoundRows, kwRowCount, kwConnectionID, kwGetLock,
		kwReleaseLock, kwReleaseAllLocks, kwIsUsedLock, kwIsFreeLock, kwNextval, kwSetval, kwLastval} {
		c[k] |= clsFunc
	}
	for _, k := range []kw{kwWhere, kwOn, kwUsing, kwSet, kwOrder, kwGroup, kwHaving, kwLimit,
		kwUnion, kwExcept, kwIntersect, kwWindow, kwFor, kwLock, kwInto, kwSelect, kwValues,
		kwValue, kwPartition, kwReturning, kwLeft, kwRight, kwInner, kwCross, kwNatural, kwOuter,
		kwJoin, kwStraightJoin, kwWith, kwDual, kwOutfile, kwDumpfile, kwFormat, kwInsert,
		kwUpdate, kwDelete, kwReplace, kwTable, kwTables} {
		c[k] |= clsClause
	}
	for _, k := range []kw{kwLowPriority, kwHighPriority, kwDelayed, kwIgnore, kwIf, kwNot,
		kwExists, kwLateral} {
		c[k] |= clsSkip
	}
	return c
}()

// kwByName finds keywords by name.
var kwByName = newFoldTable(kwNames[:])

// lookupKW returns the keyword w spells, ignoring ASCII case, or kwNone.
func lookupKW(w []byte) kw { return kw(max(kwByName.index(w), 0)) }

// lookupKWHash is lookupKW for a word whose foldHash is h.
func lookupKWHash(w []byte, h uint32) kw { return kw(max(kwByName.indexHash(w, h), 0)) }
