package obsim

import (
	"sort"
	"sync"
	"sync/atomic"
	"time"
)

// LogEntry records one statement (or login) handled by a node.
type LogEntry struct {
	// Seq orders entries across the whole cluster.
	Seq     uint64    `json:"seq"`
	Time    time.Time `json:"time"`
	Node    string    `json:"node"`
	Session uint32    `json:"session"`
	// Client is "proxy" for a session that logged in with
	// __mysql_client_type=__ob_proxy, "direct" otherwise.
	Client   string `json:"client"`
	User     string `json:"user"`
	Tenant   string `json:"tenant"`
	Database string `json:"database,omitempty"`
	// ClientIP is, on a login entry, the client address the login named
	// (__client_ip, which an OBServer takes as the session's client
	// address for its IP allow list); empty when it named none.
	ClientIP string `json:"client_ip,omitempty"`
	// TLS is, on a login entry, whether the login came over TLS.
	TLS bool `json:"tls,omitempty"`
	// Command is "login", "query", "prepare", "execute", "init_db",
	// "change_user", "reset_connection", "set_option" or the command name.
	Command string `json:"command"`
	// SQL is the statement text, truncated to MaxLogSQL bytes.
	SQL string `json:"sql,omitempty"`
	// Table is the first table the statement names, as db.table.
	Table string `json:"table,omitempty"`
	// Partitions are the partitions of a topology table the statement can
	// touch, when they could be computed.
	Partitions []string `json:"partitions,omitempty"`
	// Local is true when the statement's partitions have their leader on
	// this node (for a weak read: a replica), which is what
	// ob_proxy_partition_hit reports; false means it ran as a remote plan.
	// Statements without a table are local.
	Local bool `json:"local"`
	Weak  bool `json:"weak,omitempty"`
	// Result is "ok" or "error"; Code is the error code.
	Result   string `json:"result"`
	Code     uint16 `json:"code,omitempty"`
	Injected bool   `json:"injected,omitempty"`
	// Protocol is "mysql", "ob20" or "compressed".
	Protocol string        `json:"protocol"`
	Duration time.Duration `json:"duration_ns"`
}

// Remote is the opposite of Local.
func (e LogEntry) Remote() bool { return !e.Local }

// MaxLogSQL bounds the SQL text kept per entry.
const MaxLogSQL = 1024

// stmtLog is a bounded ring of entries.
type stmtLog struct {
	seq  *atomic.Uint64 // shared by the nodes of a cluster
	mu   sync.Mutex     // guards the fields below
	buf  []LogEntry
	next int
	full bool
}

func newStmtLog(capacity int, seq *atomic.Uint64) *stmtLog {
	return &stmtLog{buf: make([]LogEntry, capacity), seq: seq}
}

func (l *stmtLog) add(e LogEntry) {
	if len(e.SQL) > MaxLogSQL {
		e.SQL = e.SQL[:MaxLogSQL]
	}
	e.Seq = l.seq.Add(1)
	l.mu.Lock()
	l.buf[l.next] = e
	l.next++
	if l.next == len(l.buf) {
		l.next, l.full = 0, true
	}
	l.mu.Unlock()
}

func (l *stmtLog) entries() []LogEntry {
	l.mu.Lock()
	defer l.mu.Unlock()
	if !l.full {
		return append([]LogEntry(nil), l.buf[:l.next]...)
	}
	out := make([]LogEntry, 0, len(l.buf))
	out = append(out, l.buf[l.next:]...)
	return append(out, l.buf[:l.next]...)
}

func (l *stmtLog) clear() {
	l.mu.Lock()
	defer l.mu.Unlock()
	clear(l.buf)
	l.next, l.full = 0, false
}

func sortLog(entries []LogEntry) {
	sort.Slice(entries, func(i, j int) bool { return entries[i].Seq < entries[j].Seq })
}
