package route

// StmtKind is the kind of a SQL statement, read from its first keywords.
type StmtKind uint8

// Statement kinds.
const (
	StmtOther StmtKind = iota
	StmtSelect
	StmtInsert
	StmtUpdate
	StmtDelete
	StmtReplace
	StmtSet
	StmtUse
	StmtBegin // BEGIN, START TRANSACTION
	StmtCommit
	StmtRollback
	StmtShow
	StmtKill
	StmtAlter
	StmtCall
	StmtCreate
	StmtDrop
	StmtLoad
	StmtPing // PING PROXY (an ODP internal command, not SQL)
	StmtXA
	StmtPrepare    // text PREPARE
	StmtExecute    // text EXECUTE
	StmtDeallocate // text DEALLOCATE PREPARE / DROP PREPARE
	StmtLock
	StmtUnlock
	StmtTruncate
	StmtExplain
	StmtDesc
	stmtKinds
)

var stmtKindNames = [stmtKinds]string{
	"OTHERS", "SELECT", "INSERT", "UPDATE", "DELETE", "REPLACE", "SET", "USE",
	"BEGIN", "COMMIT", "ROLLBACK", "SHOW", "KILL", "ALTER", "CALL", "CREATE",
	"DROP", "LOAD", "PING", "XA", "PREPARE", "EXECUTE", "DEALLOCATE", "LOCK",
	"UNLOCK", "TRUNCATE", "EXPLAIN", "DESC",
}

// String is the ODP statement-type name used as the sqlType metric label.
func (k StmtKind) String() string {
	if k < stmtKinds {
		return stmtKindNames[k]
	}
	return "OTHERS"
}

// NumStmtKinds is the number of statement kinds, for arrays indexed by kind.
const NumStmtKinds = int(stmtKinds)

// StmtInfo is what the lexer reads from a statement's head.
type StmtInfo struct {
	Kind StmtKind
	// Second is the second keyword, upper-cased, when it is one obgate
	// looks at (KILL QUERY, SHOW PROXYCONFIG, SELECT PROXY_VERSION()...);
	// otherwise empty.
	Second string
}

// keywordKinds maps a first keyword (upper case) to its kind.
var keywordKinds = map[string]StmtKind{
	"SELECT": StmtSelect, "WITH": StmtSelect, "VALUES": StmtSelect, "TABLE": StmtSelect,
	"INSERT": StmtInsert, "UPDATE": StmtUpdate, "DELETE": StmtDelete,
	"REPLACE": StmtReplace, "SET": StmtSet, "USE": StmtUse, "BEGIN": StmtBegin,
	"START": StmtBegin, "COMMIT": StmtCommit, "ROLLBACK": StmtRollback,
	"SHOW": StmtShow, "KILL": StmtKill, "ALTER": StmtAlter, "CALL": StmtCall,
	"CREATE": StmtCreate, "DROP": StmtDrop, "LOAD": StmtLoad, "PING": StmtPing,
	"XA": StmtXA, "PREPARE": StmtPrepare, "EXECUTE": StmtExecute,
	"DEALLOCATE": StmtDeallocate, "LOCK": StmtLock, "UNLOCK": StmtUnlock,
	"TRUNCATE": StmtTruncate, "EXPLAIN": StmtExplain, "DESC": StmtDesc,
	"DESCRIBE": StmtDesc,
}

// secondKeywords are the second words Classify reports.
var secondKeywords = map[string]string{
	"QUERY": "QUERY", "CONNECTION": "CONNECTION", "PROXYSESSION": "PROXYSESSION",
	"PROXYCONFIG": "PROXYCONFIG", "PROXYCONGESTION": "PROXYCONGESTION",
	"PROXYROUTE": "PROXYROUTE", "PROXYSTAT": "PROXYSTAT", "PROXY": "PROXY",
	"PROXY_VERSION": "PROXY_VERSION", "PROXY_STATUS": "PROXY_STATUS",
	"PROCESSLIST": "PROCESSLIST", "TRANSACTION": "TRANSACTION", "WORK": "WORK",
	"PROXYINFO": "PROXYINFO", "PROXYCLUSTER": "PROXYCLUSTER", "PROXYRESOURCE": "PROXYRESOURCE",
	"PROXYNET": "PROXYNET", "PROXYSM": "PROXYSM", "PROXYTRACE": "PROXYTRACE",
	"PROXYVIP": "PROXYVIP", "PROXYMEMORY": "PROXYMEMORY", "PROXYOBJPOOL": "PROXYOBJPOOL",
	"FULL": "FULL", "DATA": "DATA", "TABLES": "TABLES",
}

// Classify reads the kind of the statement in sql. It skips leading
// blanks, comments (/* */, -- and #) and opening parentheses. It does not
// allocate.
func Classify(sql []byte) StmtInfo {
	var info StmtInfo
	pos := skipSpaceAndComments(sql, 0)
	for pos < len(sql) && sql[pos] == '(' {
		pos = skipSpaceAndComments(sql, pos+1)
	}
	word, pos := readWord(sql, pos)
	kind, ok := lookupUpper(keywordKinds, word)
	if !ok {
		return info
	}
	info.Kind = kind
	pos = skipSpaceAndComments(sql, pos)
	word, _ = readWord(sql, pos)
	if s, ok := lookupUpper(secondKeywords, word); ok {
		info.Second = s
	}
	return info
}

// skipSpaceAndComments returns the position of the next token at or after pos.
func skipSpaceAndComments(s []byte, pos int) int {
	for pos < len(s) {
		switch c := s[pos]; {
		case c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v':
			pos++
		case c == '/' && pos+1 < len(s) && s[pos+1] == '*':
			end := indexFrom(s, pos+2, "*/")
			if end < 0 {
				return len(s)
			}
			pos = end + 2
		case c == '#':
			pos = skipLine(s, pos)
		case c == '-' && pos+2 < len(s) && s[pos+1] == '-' && (s[pos+2] == ' ' || s[pos+2] == '\t'):
			pos = skipLine(s, pos)
		case c == '-' && pos+2 == len(s) && s[pos+1] == '-':
			return len(s)
		default:
			return pos
		}
	}
	return pos
}

func skipLine(s []byte, pos int) int {
	for pos < len(s) && s[pos] != '\n' {
		pos++
	}
	return pos
}

func indexFrom(s []byte, pos int, sep string) int {
	for i := pos; i+len(sep) <= len(s); i++ {
		if string(s[i:i+len(sep)]) == sep {
			return i
		}
	}
	return -1
}

// readWord returns the identifier-like word at pos.
func readWord(s []byte, pos int) ([]byte, int) {
	start := pos
	for pos < len(s) && isWordByte(s[pos]) {
		pos++
	}
	return s[start:pos], pos
}

func isWordByte(c byte) bool {
	return c == '_' || c == '$' || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9')
}

// lookupUpper looks word up in m case-insensitively without allocating.
func lookupUpper[V any](m map[string]V, word []byte) (V, bool) {
	var buf [24]byte
	var zero V
	if len(word) == 0 || len(word) > len(buf) {
		return zero, false
	}
	for i, c := range word {
		if c >= 'a' && c <= 'z' {
			c -= 'a' - 'A'
		}
		buf[i] = c
	}
	v, ok := m[string(buf[:len(word)])]
	return v, ok
}

// SkipSpace returns the position of the next token at or after pos,
// skipping blanks and comments.
func SkipSpace(s []byte, pos int) int { return skipSpaceAndComments(s, pos) }

// Word returns the identifier-like word at pos and the position after it.
func Word(s []byte, pos int) ([]byte, int) { return readWord(s, pos) }

// EqualFold reports whether word equals the upper-case keyword kw, ignoring
// ASCII case.
func EqualFold(word []byte, kw string) bool {
	if len(word) != len(kw) {
		return false
	}
	for i, c := range word {
		if c >= 'a' && c <= 'z' {
			c -= 'a' - 'A'
		}
		if c != kw[i] {
			return false
		}
	}
	return true
}
