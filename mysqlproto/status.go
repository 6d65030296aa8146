package mysqlproto

// ServerStatus is the status-flags field of OK and EOF packets.
type ServerStatus uint16

// Server status flags.
const (
	StatusInTrans            ServerStatus = 0x0001
	StatusAutocommit         ServerStatus = 0x0002
	StatusMoreResultsExists  ServerStatus = 0x0008
	StatusNoGoodIndexUsed    ServerStatus = 0x0010
	StatusNoIndexUsed        ServerStatus = 0x0020
	StatusCursorExists       ServerStatus = 0x0040
	StatusLastRowSent        ServerStatus = 0x0080
	StatusDBDropped          ServerStatus = 0x0100
	StatusNoBackslashEscapes ServerStatus = 0x0200
	StatusMetadataChanged    ServerStatus = 0x0400
	StatusQueryWasSlow       ServerStatus = 0x0800
	StatusPSOutParams        ServerStatus = 0x1000
	StatusInTransReadonly    ServerStatus = 0x2000
	StatusSessionStateChange ServerStatus = 0x4000
)

var statusNames = [...]string{
	"IN_TRANS", "AUTOCOMMIT", "0x4", "MORE_RESULTS_EXISTS", "NO_GOOD_INDEX_USED",
	"NO_INDEX_USED", "CURSOR_EXISTS", "LAST_ROW_SENT", "DB_DROPPED",
	"NO_BACKSLASH_ESCAPES", "METADATA_CHANGED", "QUERY_WAS_SLOW",
	"PS_OUT_PARAMS", "IN_TRANS_READONLY", "SESSION_STATE_CHANGED", "0x8000",
}

// Has reports whether every flag of f is set in s.
func (s ServerStatus) Has(f ServerStatus) bool { return s&f == f }

// String lists the set flags, e.g. "IN_TRANS|AUTOCOMMIT".
func (s ServerStatus) String() string { return flagNames(uint64(s), statusNames[:]) }
