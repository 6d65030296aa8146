package route

// Pin is a set of reasons why a statement is bound to a server. There are
// two families:
//
//   - Hold pins (PinsHold): the statement leaves state on the server it
//     ran on, so the session must stay on that server afterwards.
//   - Last pins (PinsLast): the statement reads state the previous
//     statement left, so it must run where the previous statement ran.
//
// Functions count where a name is followed, after optional blanks and
// comments, by '(' in code: not in strings, comments or hints, but inside
// executable comments (/*! ... */, /*M! ... */), which servers run. A
// backquoted name followed by '(' counts too (`found_rows`() calls the
// built-in), a name after '.' does not (db.found_rows() is a stored
// function), and neither does a table name (INSERT INTO get_lock (a) ...).
//
// SET TRANSACTION (no scope) holds, because it shapes only the next
// transaction of that server session. SET SESSION TRANSACTION and SET
// GLOBAL TRANSACTION do not: they change a session default that is synced
// like any session variable, or the server's global default.
type Pin uint16

// Hold pins.
const (
	PinTempTable  Pin = 1 << iota // CREATE [OR REPLACE] [GLOBAL] TEMPORARY ..., DROP TEMPORARY TABLE
	PinUserLock                   // GET_LOCK(...)
	PinPrepare                    // PREPARE name FROM ... (SQL-level prepared statement)
	PinLockTables                 // LOCK TABLE(S) ...
	PinNextTxn                    // SET TRANSACTION ...
	PinXA                         // XA START|BEGIN ...
	PinHandler                    // HANDLER name OPEN

	// Last pins.
	PinLastResult  // LAST_INSERT_ID(), FOUND_ROWS(), ROW_COUNT()
	PinDiagnostics // SHOW WARNINGS|ERRORS|COUNT(*) ..., @@warning_count, @@error_count, GET DIAGNOSTICS
	PinConnID      // CONNECTION_ID()
	PinExecute     // EXECUTE name, DEALLOCATE|DROP PREPARE name
	PinUnlock      // UNLOCK TABLE(S)
	PinLockInfo    // RELEASE_LOCK, RELEASE_ALL_LOCKS, IS_USED_LOCK, IS_FREE_LOCK
	PinSequence    // LASTVAL(seq), PREVIOUS VALUE FOR seq, seq.CURRVAL
)

// Pin families.
const (
	PinsHold = PinTempTable | PinUserLock | PinPrepare | PinLockTables | PinNextTxn | PinXA | PinHandler
	PinsLast = PinLastResult | PinDiagnostics | PinConnID | PinExecute | PinUnlock | PinLockInfo | PinSequence
)

// Holds reports whether p has a hold pin: stay on this server afterwards.
func (p Pin) Holds() bool { return p&PinsHold != 0 }

// NeedsLast reports whether p has a last pin: run where the previous
// statement ran.
func (p Pin) NeedsLast() bool { return p&PinsLast != 0 }

var pinNames = [...]string{
	"TEMP_TABLE", "USER_LOCK", "PREPARE", "LOCK_TABLES", "NEXT_TXN", "XA", "HANDLER",
	"LAST_RESULT", "DIAGNOSTICS", "CONNECTION_ID", "EXECUTE", "UNLOCK", "LOCK_INFO", "SEQUENCE",
}

// String lists the pins in p separated by '|', for logs and tests.
func (p Pin) String() string {
	if p == 0 {
		return "NONE"
	}
	var buf [128]byte
	b := buf[:0]
	for i, name := range pinNames {
		if p&(1<<i) != 0 {
			if len(b) > 0 {
				b = append(b, '|')
			}
			b = append(b, name...)
		}
	}
	if p>>len(pinNames) != 0 {
		if len(b) > 0 {
			b = append(b, '|')
		}
		b = append(b, '?')
	}
	return string(b)
}

// callEffect is what calling a built-in function does to a session, as
// its pin and whether it writes (so the statement is not read-only).
type callEffect struct {
	pin    Pin
	writes bool
}

// callEffects maps the built-in functions that matter to their effect.
// LAST_INSERT_ID is handled apart: with an argument it sets the value
// (writes), without one it reads it (PinLastResult).
var callEffects = [numKW]callEffect{
	kwFoundRows:       {pin: PinLastResult},
	kwRowCount:        {pin: PinLastResult},
	kwConnectionID:    {pin: PinConnID},
	kwGetLock:         {pin: PinUserLock, writes: true},
	kwReleaseLock:     {pin: PinLockInfo, writes: true},
	kwReleaseAllLocks: {pin: PinLockInfo, writes: true},
	kwIsUsedLock:      {pin: PinLockInfo},
	kwIsFreeLock:      {pin: PinLockInfo},
	kwNextval:         {writes: true},
	kwSetval:          {writes: true},
	kwLastval:         {pin: PinSequence},
}
