package route

import "bytes"

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
	"FULL": "FULL", "DATA": "DATA", "TABLES": "TABLES", "ROUTE": "ROUTE",
}

// kindsByWord and secondsByWord are keywordKinds and secondKeywords for
// lookups that ignore case and do not allocate.
var (
	kindsByWord   = newFoldMap(keywordKinds)
	secondsByWord = newFoldMap(secondKeywords)
)

// Classify reads the kind of the statement in sql. It skips leading
// blanks, comments (/* */, -- and #, executable comments included) and
// opening parentheses. It does not allocate.
func Classify(sql []byte) StmtInfo {
	info, _, _ := classifyHead(sql)
	return info
}

// classifyHead is Classify that also returns where the first word lies
// (start == end when there is none), keyword or not.
func classifyHead(sql []byte) (info StmtInfo, start, end int) {
	pos := skipSpaceAndComments(sql, 0)
	for pos < len(sql) && sql[pos] == '(' {
		pos = skipSpaceAndComments(sql, pos+1)
	}
	word, end := readWord(sql, pos)
	kind, ok := kindsByWord.get(word)
	if !ok {
		return info, pos, end
	}
	info.Kind = kind
	next := skipSpaceAndComments(sql, end)
	word, _ = readWord(sql, next)
	if s, ok := secondsByWord.get(word); ok {
		info.Second = s
	}
	return info, pos, end
}

// skipSpaceAndComments returns the position of the next token at or after pos.
func skipSpaceAndComments(s []byte, pos int) int {
	for pos < len(s) {
		switch c := s[pos]; {
		case isBlank(c):
			pos++
		case c == '/' && pos+1 < len(s) && s[pos+1] == '*':
			end := indexFrom(s, pos+2, "*/")
			if end < 0 {
				return len(s)
			}
			pos = end + 2
		case c == '#' || isDashComment(s, pos):
			pos = skipLine(s, pos)
		default:
			return pos
		}
	}
	return pos
}

// isBlank reports whether c is a blank the SQL lexers skip.
func isBlank(c byte) bool {
	return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v'
}

// isDashComment reports whether a "-- " comment starts at pos: two dashes
// followed by a blank or control character, or by the end of the text.
func isDashComment(s []byte, pos int) bool {
	return pos+1 < len(s) && s[pos] == '-' && s[pos+1] == '-' && (pos+2 == len(s) || s[pos+2] <= ' ')
}

func skipLine(s []byte, pos int) int {
	if i := bytes.IndexByte(s[pos:], '\n'); i >= 0 {
		return pos + i
	}
	return len(s)
}

// indexFrom returns the index of the first sep (non-empty) in s at or
// after pos, or -1.
func indexFrom(s []byte, pos int, sep string) int {
	for pos >= 0 && pos+len(sep) <= len(s) {
		i := bytes.IndexByte(s[pos:len(s)-len(sep)+1], sep[0])
		if i < 0 {
			return -1
		}
		pos += i
		if string(s[pos:pos+len(sep)]) == sep {
			return pos
		}
		pos++
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
