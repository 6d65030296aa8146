package reactor

import (
	"strconv"
	"strings"

	"obgate/internal/sqltext"
	"obgate/mysqlproto"
)

// hotVar indexes the variables that are compared by value rather than by
// version (ODP's "hot" variables): they change often and often back, so a
// server session that already has the value needs nothing.
type hotVar uint8

const (
	hotAutocommit hotVar = iota
	hotObQueryTimeout
	hotObLogLevel
	hotObLastSchemaVersion
	numHot
)

var hotNames = [numHot]string{"autocommit", "ob_query_timeout", "ob_log_level", "ob_last_schema_version"}

func hotIndex(name []byte) (hotVar, bool) {
	for i, n := range hotNames {
		if string(name) == n {
			return hotVar(i), true
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

// userVarSeparator separates system variables from user variables in an
// OBServer's session-state report: a pair named and valued "__NULL".
const userVarSeparator = "__NULL"

// varEntry is one variable the client session has set, with the version
// at which it last changed.
type varEntry struct {
	name  string
	value string // system variables: the value; user variables: a SQL literal
	ver   uint64
}

// sessionVars is the session state a client session has established on
// the servers it used: the current database, system variables and user
// variables. Every change takes a new version; a server session records
// the versions it has seen, so "what does this server session lack" is a
// few integer comparisons (and, for hot variables, a few string
// comparisons) when nothing changed.
//
// Owned by the goroutine running the session's command.
type sessionVars struct {
	ver     uint64
	db      string
	dbVer   uint64
	sys     []varEntry
	sysVer  uint64
	user    []varEntry
	userVer uint64
	hot     [numHot]string
	hotSet  [numHot]bool
	// multiStmt is the MULTI_STATEMENTS option as the client last set it
	// with COM_SET_OPTION, at version multiStmtVer (0: never set, server
	// sessions keep what their login asked for).
	multiStmt    bool
	multiStmtVer uint64
	// routing are the variables that steer routing, kept decoded.
	routing routingVars
}

// routingVars are the session and user variables routing reads for every
// statement, decoded once when they change.
type routingVars struct {
	weak          bool   // ob_read_consistency = WEAK
	obRoutePolicy int    // ob_route_policy as a number, 1 (READONLY_ZONE_FIRST) by default
	obRouteSet    bool   // ob_route_policy was set
	idc           string // @proxy_idc_name
	routePolicy   string // @proxy_route_policy
}

// note decodes a variable that steers routing; user says it is a
// user variable (value a SQL literal).
func (r *routingVars) note(name, value string, user bool) {
	if user {
		switch strings.ToLower(name) {
		case "proxy_idc_name":
			r.idc = unquoteLiteral(value)
		case "proxy_route_policy":
			r.routePolicy = unquoteLiteral(value)
		}
		return
	}
	switch strings.ToLower(name) {
	case "ob_read_consistency":
		v := strings.ToUpper(unquoteLiteral(value))
		r.weak = v == "WEAK" || v == "2"
	case "ob_route_policy":
		r.obRouteSet = true
		switch strings.ToUpper(unquoteLiteral(value)) {
		case "MERGE_IDC_ORDER", "0":
			r.obRoutePolicy = 0
		case "ONLY_READONLY_ZONE", "2":
			r.obRoutePolicy = 2
		case "UNMERGE_ZONE_FIRST", "3":
			r.obRoutePolicy = 3
		default:
			r.obRoutePolicy = 1
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

// syncState is what one server session has of the client's state.
type syncState struct {
	dbVer        uint64
	sysVer       uint64
	userVer      uint64
	multiStmtVer uint64
	hot          [numHot]string
	hotSet       [numHot]bool
}

// inSync reports whether ss has everything the client session set. It does
// not allocate; it runs before every statement.
func (v *sessionVars) inSync(ss *syncState) bool {
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

// markSynced records that ss now has the whole client state.
func (v *sessionVars) markSynced(ss *syncState) {
	ss.dbVer, ss.sysVer, ss.userVer, ss.multiStmtVer = v.dbVer, v.sysVer, v.userVer, v.multiStmtVer
	for i := range v.hot {
		if v.hotSet[i] {
			ss.hot[i], ss.hotSet[i] = v.hot[i], true
		}
	}
}

// setDB records a new current database.
func (v *sessionVars) setDB(db string) {
	if db == v.db && v.dbVer != 0 {
		return
	}
	v.ver++
	v.db, v.dbVer = db, v.ver
}

// setMultiStatements records the client's COM_SET_OPTION.
func (v *sessionVars) setMultiStatements(on bool) {
	if v.multiStmtVer != 0 && v.multiStmt == on {
		return
	}
	v.ver++
	v.multiStmt, v.multiStmtVer = on, v.ver
}

// multiStatementsLacking reports whether ss lacks the client's
// multi-statement option, and the option.
func (v *sessionVars) multiStatementsLacking(ss *syncState) (lacking, on bool) {
	return v.multiStmtVer != 0 && ss.multiStmtVer != v.multiStmtVer, v.multiStmt
}

// afterReset is the state a session has after COM_RESET_CONNECTION, or
// after a COM_CHANGE_USER (refused or not): no system or user variables,
// the same database and multi-statement option. The reset is a change of
// its own (what publishOB compares), and versions keep counting up, so
// that no server session's record of an older state can match the new one
// by accident.
func (v *sessionVars) afterReset() sessionVars {
	return sessionVars{ver: v.ver + 1, db: v.db, dbVer: v.dbVer, multiStmt: v.multiStmt, multiStmtVer: v.multiStmtVer}
}

// learn applies a server's session-state report (the raw session-state
// entries of an OK packet, whose status flags are status): the database,
// system variables before the "__NULL" separator, user variables after it.
// feedback receives the variables that are server feedback rather than
// state.
func (v *sessionVars) learn(raw []byte, status mysqlproto.ServerStatus, feedback func(name, value []byte)) {
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
				v.setDB(string(db))
			}
		case mysqlproto.SessionTrackSystemVariables:
			user := false
			for pos := 0; pos < len(data); {
				name, value, next, ok := mysqlproto.ParseSystemVariable(data, pos)
				if !ok {
					break
				}
				pos = next
				if string(name) == userVarSeparator && string(value) == userVarSeparator {
					user = true
					continue
				}
				if user {
					v.setUser(string(name), portableLiteral(string(value), noBackslash))
					continue
				}
				if feedbackVars[string(name)] {
					if feedback != nil {
						feedback(name, value)
					}
					continue
				}
				v.setSys(name, value)
			}
		}
	}
}

// setSys records a system variable; hot ones are kept by value.
func (v *sessionVars) setSys(name, value []byte) {
	if h, ok := hotIndex(name); ok {
		if !v.hotSet[h] || v.hot[h] != string(value) {
			v.hot[h], v.hotSet[h] = string(value), true
		}
		return
	}
	v.sys, v.sysVer = v.upsert(v.sys, string(name), string(value), v.sysVer)
	if len(name) > 3 && (name[0] == 'o' || name[0] == 'O') {
		v.routing.note(string(name), string(value), false)
	}
}

func (v *sessionVars) setUser(name, literal string) {
	name = strings.TrimPrefix(name, "@")
	if strings.HasPrefix(strings.ToLower(name), "proxy_") {
		v.routing.note(name, literal, true)
	}
	v.user, v.userVer = v.upsert(v.user, name, literal, v.userVer)
}

func (v *sessionVars) upsert(list []varEntry, name, value string, cur uint64) ([]varEntry, uint64) {
	for i := range list {
		if strings.EqualFold(list[i].name, name) {
			if list[i].value == value {
				return list, cur
			}
			v.ver++
			list[i].value, list[i].ver = value, v.ver
			return list, v.ver
		}
	}
	v.ver++
	return append(list, varEntry{name: name, value: value, ver: v.ver}), v.ver
}

// resetSQL builds the one SET statement that brings ss up to date with the
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
func (v *sessionVars) resetSQL(ss *syncState) []byte {
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
			add("@@session."+hotNames[i], sysLiteral(v.hot[i]))
		}
	}
	for _, e := range v.sys {
		if e.ver > ss.sysVer && plainName(e.name) {
			add("@@session."+e.name, sysLiteral(e.value))
		}
	}
	for _, e := range v.user {
		if e.ver > ss.userVer {
			if id, err := sqltext.Ident(e.name); err == nil {
				add("@"+id, userLiteral(e.value))
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
