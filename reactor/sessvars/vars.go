// Package sessvars keeps what an OceanBase-mode client session has set on
// its servers (the current database, system and user variables, the
// multi-statement option) under versions, and what each server session
// has of it (Synced), so that "what does this server session lack" costs
// a few integer comparisons on the statement path, and the one SET that
// brings a server session up to date is built only when it lacks
// something. It also decodes the variables that steer routing (Routing).
//
// A Vars and its Synced records are owned by the goroutine running the
// session's command.
package sessvars

import (
	"strconv"
	"strings"

	"obgate/internal/sqltext"
	"obgate/mysqlproto"
)

// HotVar indexes the variables that are compared by value rather than by
// version (ODP's "hot" variables): they change often and often back, so a
// server session that already has the value needs nothing.
type HotVar uint8

const (
	HotAutocommit HotVar = iota
	HotObQueryTimeout
	HotObLogLevel
	HotObLastSchemaVersion
	NumHot
)

var HotNames = [NumHot]string{"autocommit", "ob_query_timeout", "ob_log_level", "ob_last_schema_version"}

func hotIndex(name []byte) (HotVar, bool) {
	for i, n := range HotNames {
		if string(name) == n {
			return HotVar(i), true
		}
	}
	return 0, false
}

// feedbackVars are session variables an OBServer reports to the proxy
// about itself (routing feedback, capability, tracing). They are read, not
// replayed to other servers.
var feedbackVars = map[string]bool{
	"ob_proxy_partition_hit":            true,
	"ob_capability_flag":                true,
	"ob_statement_trace_id":             true,
	"ob_proxy_global_variables_version": true,
	"ob_proxy_user_privilege":           true,
	"ob_safe_weak_read_snapshot":        true,
	"_ob_proxy_weakread_feedback":       true,
	"ob_proxy_set_trx_executed":         true,
	"ob_client_reroute_info":            true,
	"ob_trx_id":                         true,
}

// IsFeedback reports whether name is a variable an OBServer reports about
// itself rather than session state.
func IsFeedback(name []byte) bool { return feedbackVars[string(name)] }

// UserVarSeparator separates system variables from user variables in an
// OBServer's session-state report: a pair named and valued "__NULL".
const UserVarSeparator = "__NULL"

// Entry is one variable the client session has set, with the version
// at which it last changed.
type Entry struct {
	Name  string
	Value string // system variables: the value; user variables: a SQL literal
	ver   uint64
}

// Vars is the session state a client session has established on
// the servers it used: the current database, system variables and user
// variables. Every change takes a new version; a server session records
// the versions it has seen, so "what does this server session lack" is a
// few integer comparisons (and, for hot variables, a few string
// comparisons) when nothing changed.
//
// Owned by the goroutine running the session's command.
type Vars struct {
	ver     uint64
	db      string
	dbVer   uint64
	sys     []Entry
	sysVer  uint64
	user    []Entry
	userVer uint64
	hot     [NumHot]string
	hotSet  [NumHot]bool
	// multiStmt is the MULTI_STATEMENTS option as the client last set it
	// with COM_SET_OPTION, at version multiStmtVer (0: never set, server
	// sessions keep what their login asked for).
	multiStmt    bool
	multiStmtVer uint64
	// routing are the variables that steer routing, kept decoded.
	routing Routing
}

// Routing are the session and user variables routing reads for every
// statement, decoded once when they change.
type Routing struct {
	Weak          bool   // ob_read_consistency = WEAK
	OBRoutePolicy int    // ob_route_policy as a number, 1 (READONLY_ZONE_FIRST) by default
	OBRouteSet    bool   // ob_route_policy was set
	IDC           string // @proxy_idc_name
	RoutePolicy   string // @proxy_route_policy
}

// Note decodes a variable that steers routing; user says it is a
// user variable (value a SQL literal).
func (r *Routing) Note(name, value string, user bool) {
	if user {
		switch strings.ToLower(name) {
		case "proxy_idc_name":
			r.IDC = unquoteLiteral(value)
		case "proxy_route_policy":
			r.RoutePolicy = unquoteLiteral(value)
		}
		return
	}
	switch strings.ToLower(name) {
	case "ob_read_consistency":
		v := strings.ToUpper(unquoteLiteral(value))
		r.Weak = v == "WEAK" || v == "2"
	case "ob_route_policy":
		r.OBRouteSet = true
		switch strings.ToUpper(unquoteLiteral(value)) {
		case "MERGE_IDC_ORDER", "0":
			r.OBRoutePolicy = 0
		case "ONLY_READONLY_ZONE", "2":
			r.OBRoutePolicy = 2
		case "UNMERGE_ZONE_FIRST", "3":
			r.OBRoutePolicy = 3
		default:
			r.OBRoutePolicy = 1
		}
	}
}

// unquoteLiteral strips the quotes of a SQL string literal ('x', "x"); a
// NULL literal is "".
func unquoteLiteral(v string) string {
	if len(v) >= 2 && (v[0] == '\'' || v[0] == '"') && v[len(v)-1] == v[0] {
		return strings.ReplaceAll(v[1:len(v)-1], v[:1]+v[:1], v[:1])
	}
	if strings.EqualFold(v, "NULL") {
		return ""
	}
	return v
}

// Version counts every change: a snapshot of the variables that
// recorded it is current while it matches.
func (v *Vars) Version() uint64 { return v.ver }

// DB is the current database.
func (v *Vars) DB() string { return v.db }

// DBVersion is the version at which the database last changed.
func (v *Vars) DBVersion() uint64 { return v.dbVer }

// Sys and User are the system (hot ones apart) and user variables set,
// in the order first set; read-only.
func (v *Vars) Sys() []Entry  { return v.sys }
func (v *Vars) User() []Entry { return v.user }

// Hot returns a hot variable's value and whether it was set.
func (v *Vars) Hot(h HotVar) (string, bool) { return v.hot[h], v.hotSet[h] }

// MultiStatements returns the client's COM_SET_OPTION choice and whether
// it made one.
func (v *Vars) MultiStatements() (on, set bool) { return v.multiStmt, v.multiStmtVer != 0 }

// Routing is the decoded routing variables.
func (v *Vars) Routing() *Routing { return &v.routing }

// DBLacking reports whether ss lacks the current database.
func (v *Vars) DBLacking(ss *Synced) bool { return ss.dbVer != v.dbVer }

// Synced is what one server session has of the client's state.
type Synced struct {
	dbVer        uint64
	sysVer       uint64
	userVer      uint64
	multiStmtVer uint64
	hot          [NumHot]string
	hotSet       [NumHot]bool
}

// InSync reports whether ss has everything the client session set. It does
// not allocate; it runs before every statement.
func (v *Vars) InSync(ss *Synced) bool {
	if ss.dbVer != v.dbVer || ss.sysVer != v.sysVer || ss.userVer != v.userVer || ss.multiStmtVer != v.multiStmtVer {
		return false
	}
	for i := range v.hot {
		if v.hotSet[i] && (!ss.hotSet[i] || ss.hot[i] != v.hot[i]) {
			return false
		}
	}
	return true
}

// MarkSynced records that ss now has the whole client state.
func (v *Vars) MarkSynced(ss *Synced) {
	ss.dbVer, ss.sysVer, ss.userVer, ss.multiStmtVer = v.dbVer, v.sysVer, v.userVer, v.multiStmtVer
	for i := range v.hot {
		if v.hotSet[i] {
			ss.hot[i], ss.hotSet[i] = v.hot[i], true
		}
	}
}

// SetDB records a new current database.
func (v *Vars) SetDB(db string) {
	if db == v.db && v.dbVer != 0 {
		return
	}
	v.ver++
	v.db, v.dbVer = db, v.ver
}

// SetMultiStatements records the client's COM_SET_OPTION.
func (v *Vars) SetMultiStatements(on bool) {
	if v.multiStmtVer != 0 && v.multiStmt == on {
		return
	}
	v.ver++
	v.multiStmt, v.multiStmtVer = on, v.ver
}

// MultiStatementsLacking reports whether ss lacks the client's
// multi-statement option, and the option.
func (v *Vars) MultiStatementsLacking(ss *Synced) (lacking, on bool) {
	return v.multiStmtVer != 0 && ss.multiStmtVer != v.multiStmtVer, v.multiStmt
}

// AfterReset is the state a session has after COM_RESET_CONNECTION, or
// after a COM_CHANGE_USER (refused or not): no system or user variables,
// the same database and multi-statement option. The reset is a change of
// its own (what publishOB compares), and versions keep counting up, so
// that no server session's record of an older state can match the new one
// by accident.
func (v *Vars) AfterReset() Vars {
	return Vars{ver: v.ver + 1, db: v.db, dbVer: v.dbVer, multiStmt: v.multiStmt, multiStmtVer: v.multiStmtVer}
}

// Learn applies a server's session-state report (the raw session-state
// entries of an OK packet, whose status flags are status): the database,
// system variables before the "__NULL" separator, user variables after it.
// feedback receives the variables that are server feedback rather than
// state.
func (v *Vars) Learn(raw []byte, status mysqlproto.ServerStatus, feedback func(name, value []byte)) {
	noBackslash := status.Has(mysqlproto.StatusNoBackslashEscapes)
	it := mysqlproto.SessionStates(raw)
	for {
		typ, data, more := it.Next()
		if !more {
			return
		}
		switch typ {
		case mysqlproto.SessionTrackSchema:
			if db, _, ok := mysqlproto.ReadLenEncString(data, 0); ok {
				v.SetDB(string(db))
			}
		case mysqlproto.SessionTrackSystemVariables:
			user := false
			for pos := 0; pos < len(data); {
				name, value, next, ok := mysqlproto.ParseSystemVariable(data, pos)
				if !ok {
					break
				}
				pos = next
				if string(name) == UserVarSeparator && string(value) == UserVarSeparator {
					user = true
					continue
				}
				if user {
					v.SetUser(string(name), portableLiteral(string(value), noBackslash))
					continue
				}
				if feedbackVars[string(name)] {
					if feedback != nil {
						feedback(name, value)
					}
					continue
				}
				v.SetSys(name, value)
			}
		}
	}
}

// SetSys records a system variable; hot ones are kept by value.
func (v *Vars) SetSys(name, value []byte) {
	if h, ok := hotIndex(name); ok {
		if !v.hotSet[h] || v.hot[h] != string(value) {
			v.hot[h], v.hotSet[h] = string(value), true
		}
		return
	}
	v.sys, v.sysVer = v.upsert(v.sys, string(name), string(value), v.sysVer)
	if len(name) > 3 && (name[0] == 'o' || name[0] == 'O') {
		v.routing.Note(string(name), string(value), false)
	}
}

func (v *Vars) SetUser(name, literal string) {
	name = strings.TrimPrefix(name, "@")
	if strings.HasPrefix(strings.ToLower(name), "proxy_") {
		v.routing.Note(name, literal, true)
	}
	v.user, v.userVer = v.upsert(v.user, name, literal, v.userVer)
}

func (v *Vars) upsert(list []Entry, name, value string, cur uint64) ([]Entry, uint64) {
	for i := range list {
		if strings.EqualFold(list[i].Name, name) {
			if list[i].Value == value {
				return list, cur
			}
			v.ver++
			list[i].Value, list[i].ver = value, v.ver
			return list, v.ver
		}
	}
	v.ver++
	return append(list, Entry{Name: name, Value: value, ver: v.ver}), v.ver
}

// ResetSQL builds the one SET statement that brings ss up to date with the
// client's variables (database changes go separately, as COM_INIT_DB). It
// returns nil when no variable is missing.
//
// Names come from servers' session-state reports, so they are text, but
// not necessarily plain words: a user variable may be named @`a b` (or
// anything a client quoted), and goes back as a backquoted identifier
// (sqltext.Ident); one Ident refuses (empty, or holding NUL) is skipped,
// as no server could have set it. A system variable's name is replayed
// as it is, so it must be a plain identifier; one that is not is skipped,
// since a server reports only variables of its own, whose names are
// plain, and anything else in a report is not a variable any server would
// accept.
func (v *Vars) ResetSQL(ss *Synced) []byte {
	var b []byte
	add := func(target, literal string) {
		if b == nil {
			b = append(b, "SET "...)
		} else {
			b = append(b, ", "...)
		}
		b = append(b, target...)
		b = append(b, " = "...)
		b = append(b, literal...)
	}
	for i := range v.hot {
		if v.hotSet[i] && (!ss.hotSet[i] || ss.hot[i] != v.hot[i]) {
			add("@@session."+HotNames[i], sysLiteral(v.hot[i]))
		}
	}
	for _, e := range v.sys {
		if e.ver > ss.sysVer && plainName(e.Name) {
			add("@@session."+e.Name, sysLiteral(e.Value))
		}
	}
	for _, e := range v.user {
		if e.ver > ss.userVer {
			if id, err := sqltext.Ident(e.Name); err == nil {
				add("@"+id, userLiteral(e.Value))
			}
		}
	}
	return b
}

// plainName reports whether name is a bare identifier of [A-Za-z0-9_$],
// which may follow @@session. as it is.
func plainName(name string) bool {
	if name == "" {
		return false
	}
	for i := 0; i < len(name); i++ {
		c := name[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '$') {
			return false
		}
	}
	return true
}

// sysLiteral renders a system variable's reported value as a SQL literal:
// numbers bare (integer variables refuse quoted values), anything else a
// string that reads the same whatever the target's sql_mode
// (sqltext.String).
func sysLiteral(v string) string {
	if isNumber(v) {
		return v
	}
	return sqltext.String(v)
}

// userLiteral renders a user variable's stored literal (see
// portableLiteral). Only literals whose meaning cannot depend on the
// target session go as they are: NULL, a number, a hex literal, or what
// sqltext.String writes; anything else is quoted as text, so that no
// stored value, whatever a report held, can add to the SET statement.
func userLiteral(v string) string {
	if v == "NULL" || isNumber(v) || isHexLiteral(v) || isPortableString(v) {
		return v
	}
	return sqltext.String(v)
}

// isHexLiteral reports whether v is X'…' with an even number of hex
// digits or 0x followed by hex digits.
func isHexLiteral(v string) bool {
	if len(v) >= 3 && (v[0] == 'X' || v[0] == 'x') && v[1] == '\'' && v[len(v)-1] == '\'' {
		return len(v)%2 == 1 && isHexDigits(v[2:len(v)-1])
	}
	return len(v) > 2 && v[0] == '0' && v[1] == 'x' && isHexDigits(v[2:])
}

func isHexDigits(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F') {
			return false
		}
	}
	return true
}

// isPortableString reports whether v is a string literal of one of the
// forms sqltext.String writes: CONVERT(X'…' USING utf8mb4), or '…' with
// every inner quote doubled and no backslash (which the target's sql_mode
// would decide the meaning of).
func isPortableString(v string) bool {
	const head, tail = "CONVERT(X'", "' USING utf8mb4)"
	if strings.HasPrefix(v, head) && strings.HasSuffix(v, tail) && len(v) >= len(head)+len(tail) {
		hexs := v[len(head) : len(v)-len(tail)]
		return len(hexs)%2 == 0 && isHexDigits(hexs)
	}
	if len(v) < 2 || v[0] != '\'' || v[len(v)-1] != '\'' {
		return false
	}
	body := v[1 : len(v)-1]
	for i := 0; i < len(body); i++ {
		switch body[i] {
		case '\\':
			return false
		case '\'':
			if i+1 == len(body) || body[i+1] != '\'' {
				return false
			}
			i++
		}
	}
	return true
}

// portableLiteral rewrites a user variable's literal as an OBServer reported
// it (written for the reporting session's sql_mode: with
// NO_BACKSLASH_ESCAPES a backslash is an ordinary character) into one that
// means the same under any sql_mode, since it is replayed on sessions whose
// mode may differ. Literals other than quoted strings are kept.
func portableLiteral(lit string, noBackslash bool) string {
	if !isQuoted(lit) {
		return lit
	}
	q := lit[0]
	body := lit[1 : len(lit)-1]
	var sb strings.Builder
	for i := 0; i < len(body); i++ {
		c := body[i]
		switch {
		case c == q && i+1 < len(body) && body[i+1] == q:
			sb.WriteByte(q)
			i++
		case c == '\\' && !noBackslash && i+1 < len(body):
			i++
			switch e := body[i]; e {
			case '0':
				sb.WriteByte(0)
			case 'b':
				sb.WriteByte('\b')
			case 'n':
				sb.WriteByte('\n')
			case 'r':
				sb.WriteByte('\r')
			case 't':
				sb.WriteByte('\t')
			case 'Z':
				sb.WriteByte(26)
			case '%', '_':
				sb.WriteByte('\\')
				sb.WriteByte(e)
			default:
				sb.WriteByte(e)
			}
		default:
			sb.WriteByte(c)
		}
	}
	return sqltext.String(sb.String())
}

func isNumber(s string) bool {
	if s == "" {
		return false
	}
	if _, err := strconv.ParseInt(s, 10, 64); err == nil {
		return true
	}
	if _, err := strconv.ParseUint(s, 10, 64); err == nil {
		return true
	}
	if _, err := strconv.ParseFloat(s, 64); err == nil && !strings.ContainsAny(s, "xXpPiInN_") {
		return true
	}
	return false
}

func isQuoted(s string) bool {
	return len(s) >= 2 && ((s[0] == '\'' && s[len(s)-1] == '\'') || (s[0] == '"' && s[len(s)-1] == '"'))
}
