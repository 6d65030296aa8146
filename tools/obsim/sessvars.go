package obsim

import (
	"strconv"
	"strings"

	"obgate/internal/obpart"
	"obgate/mysqlproto"
)

// OceanBase-only session variables. MariaDB does not know them, so obsim
// keeps them in its own session: SET assignments to them are removed from
// the statement relayed to MariaDB (and answered locally when nothing is
// left), their new values are reported through session-state tracking, and
// @@name references are replaced by the value before relaying, so that
// SELECT @@ob_query_timeout works. A few MySQL 8 names MariaDB 10.11 lacks
// are renamed to MariaDB's.

type obVarDef struct {
	def      string
	isInt    bool
	readOnly bool
}

var obVars = map[string]obVarDef{
	"ob_query_timeout":                   {def: "10000000", isInt: true},
	"ob_trx_timeout":                     {def: "86400000000", isInt: true},
	"ob_trx_idle_timeout":                {def: "86400000000", isInt: true},
	"ob_trx_lock_timeout":                {def: "-1", isInt: true},
	"ob_read_consistency":                {def: "STRONG"},
	"ob_route_policy":                    {def: "READONLY_ZONE_FIRST"},
	"ob_proxy_partition_hit":             {def: "1", isInt: true, readOnly: true},
	"ob_capability_flag":                 {def: "0", isInt: true, readOnly: true},
	"ob_statement_trace_id":              {def: "", readOnly: true},
	"ob_compatibility_mode":              {def: "MYSQL", readOnly: true},
	"ob_enable_transmission_checksum":    {def: "1", isInt: true},
	"ob_log_level":                       {def: "disabled"},
	"ob_last_schema_version":             {def: "0", isInt: true},
	"ob_proxy_global_variables_version":  {def: "0", isInt: true},
	"ob_proxy_user_privilege":            {def: "0", isInt: true},
	"ob_proxy_set_trx_executed":          {def: "0", isInt: true},
	"ob_enable_trace_log":                {def: "0", isInt: true},
	"ob_enable_plan_cache":               {def: "1", isInt: true},
	"ob_enable_sql_audit":                {def: "1", isInt: true},
	"ob_org_cluster_id":                  {def: "0", isInt: true},
	"ob_sql_work_area_percentage":        {def: "5", isInt: true},
	"ob_plan_cache_percentage":           {def: "5", isInt: true},
	"ob_tcp_invited_nodes":               {def: "%"},
	"ob_temp_tablespace_size_percentage": {def: "0", isInt: true},
	"ob_safe_weak_read_snapshot":         {def: "0", isInt: true},
	"ob_max_read_stale_time":             {def: "5000000", isInt: true},
	"ob_early_lock_release":              {def: "0", isInt: true},
	"ob_interm_result_mem_limit":         {def: "2147483648", isInt: true},
}

// renamedVars maps MySQL 8 names to the MariaDB 10.11 ones.
var renamedVars = map[string]string{
	"transaction_isolation": "tx_isolation",
	"transaction_read_only": "tx_read_only",
}

// nextTransactionVars are set for the next transaction only when assigned
// as @@name without a scope.
var nextTransactionVars = map[string]bool{"tx_isolation": true, "tx_read_only": true,
	"transaction_isolation": true, "transaction_read_only": true}

// obVar returns the session's value of an OceanBase variable.
func (s *session) obVar(name string) string {
	if name == mysqlproto.OBPartitionHitVar {
		if s.lastHit {
			return "1"
		}
		return "0"
	}
	if name == mysqlproto.OBCapabilityFlagVar {
		return mysqlproto.FormatOBCapability(s.obCaps)
	}
	if v, ok := s.vars[name]; ok {
		return v
	}
	return obVars[name].def
}

// weakSession reports whether ob_read_consistency is WEAK.
func (s *session) weakSession() bool {
	v := strings.ToUpper(strings.Trim(s.vars["ob_read_consistency"], "'\" "))
	return v == "WEAK" || v == "2"
}

// varChange is a variable set by a statement, reported in the OK packet.
type varChange struct{ name, value string }

// handleSet splits an OceanBase SET statement. It returns the statement to
// relay ("" when nothing is left for MariaDB) and the OceanBase variables
// to set once the statement succeeds, or an error to send.
func (s *session) handleSet(sql string, toks []token) (relay string, changes []varChange, serr *mysqlproto.SQLError) {
	s.pendingTZ = nil
	// Drop a trailing ';' and anything after it.
	for i := range toks {
		if toks[i].is(";") {
			toks = toks[:i]
			break
		}
	}
	i := 1
	scope := ""
	if i+1 < len(toks) && toks[i].kind == tokIdent && !toks[i].quoted {
		switch strings.ToUpper(toks[i].val) {
		case "SESSION", "GLOBAL", "LOCAL", "PERSIST", "PERSIST_ONLY":
			if !toks[i+1].is("=") && !toks[i+1].is(":=") && !toks[i+1].is(".") {
				scope = sql[toks[i].start:toks[i].end]
				i++
			}
		case "NAMES", "CHARACTER", "CHARSET", "TRANSACTION", "PASSWORD", "ROLE", "DEFAULT", "STATEMENT", "AUTOCOMMIT_MODE":
			return sql, nil, nil
		}
	}
	if i >= len(toks) {
		return sql, nil, nil
	}
	var kept []string
	changed := false
	for _, a := range splitTop(toks[i:], ",") {
		if len(a) == 0 {
			return sql, nil, nil // malformed; let MariaDB complain
		}
		name, nameEnd := "", 0
		isSys := true
		switch {
		case a[0].kind == tokSysVar:
			name, nameEnd = a[0].val, 1
		case a[0].kind == tokUserVar:
			isSys = false
		case a[0].kind == tokIdent && len(a) > 2 && !a[0].quoted && a[1].kind == tokIdent &&
			(strings.EqualFold(a[0].val, "SESSION") || strings.EqualFold(a[0].val, "GLOBAL") || strings.EqualFold(a[0].val, "LOCAL")):
			name, nameEnd = strings.ToLower(a[1].val), 2
		case a[0].kind == tokIdent:
			name, nameEnd = strings.ToLower(a[0].val), 1
		}
		text := sql[a[0].start:a[len(a)-1].end]
		if !isSys || nameEnd == 0 || nameEnd >= len(a) || !(a[nameEnd].is("=") || a[nameEnd].is(":=")) {
			kept = append(kept, text)
			continue
		}
		rest := sql[a[nameEnd].start:a[len(a)-1].end]
		if name == "time_zone" && !strings.EqualFold(scope, "GLOBAL") && !(a[0].kind == tokSysVar && strings.EqualFold(a[0].aux, "global")) {
			s.noteTimeZone(a[nameEnd+1:])
		}
		if to, ok := renamedVars[name]; ok {
			changed = true
			target := to // a plain name keeps the statement's scope
			switch {
			case a[0].kind == tokSysVar && a[0].aux != "":
				target = "@@" + a[0].aux + "." + to
			case a[0].kind == tokSysVar:
				target = "@@" + to
			case nameEnd == 2:
				target = sql[a[0].start:a[0].end] + " " + to
			}
			kept = append(kept, target+" "+rest)
			continue
		}
		def, ok := obVars[name]
		if !ok {
			// MariaDB does not report "SET @@x = v" (no scope) in its
			// session-state tracking, while OceanBase does; "@@session.x"
			// is the same assignment and is tracked. The transaction
			// characteristics keep their next-transaction meaning.
			if a[0].kind == tokSysVar && a[0].aux == "" && scope == "" && !nextTransactionVars[name] {
				changed = true
				kept = append(kept, "@@session."+name+" "+rest)
				continue
			}
			kept = append(kept, text)
			continue
		}
		changed = true
		if def.readOnly {
			return "", nil, mysqlproto.NewSQLError(1238, "Variable '%s' is a read only variable", name)
		}
		val, ok := s.evalVarValue(a[nameEnd+1:], name, def)
		if !ok {
			return "", nil, mysqlproto.NewSQLError(mysqlproto.ERWrongValueForVar,
				"Variable '%s' can't be set to the value of '%s'", name, sql[a[nameEnd+1].start:a[len(a)-1].end])
		}
		changes = append(changes, varChange{name, val})
	}
	if !changed {
		return sql, nil, nil
	}
	if len(kept) == 0 {
		return "", changes, nil
	}
	prefix := "SET "
	if scope != "" {
		prefix += scope + " "
	}
	return prefix + strings.Join(kept, ", "), changes, nil
}

// noteTimeZone remembers the session time_zone a SET assigns, which
// applyTimeZone makes the session's once the statement succeeded.
// MariaDB runs the assignment and reports it; obsim reads TIMESTAMP
// partition keys in it.
func (s *session) noteTimeZone(toks []token) {
	v, next, ok := literalAt(toks, 0)
	if len(toks) == 1 && toks[0].kind == tokIdent && strings.EqualFold(toks[0].val, "DEFAULT") {
		v, next, ok = value{kind: valString, s: s.c.defaultTimeZoneName()}, 1, true
	}
	if ok && next == len(toks) && v.kind == valString {
		tz := v.s
		s.pendingTZ = &tz
	}
}

// applyTimeZone takes the time_zone the last SET assigned.
func (s *session) applyTimeZone() {
	if s.pendingTZ != nil {
		s.timeZone = obpart.ParseTimeZone(*s.pendingTZ)
		s.pendingTZ = nil
	}
}

// evalVarValue evaluates the value of an OceanBase variable assignment: a
// literal, an identifier (WEAK, STRONG, ON, …) or DEFAULT.
func (s *session) evalVarValue(toks []token, name string, def obVarDef) (string, bool) {
	if len(toks) == 1 && toks[0].kind == tokIdent && !toks[0].quoted {
		w := strings.ToUpper(toks[0].val)
		switch {
		case w == "DEFAULT":
			return def.def, true
		case def.isInt && (w == "ON" || w == "TRUE"):
			return "1", true
		case def.isInt && (w == "OFF" || w == "FALSE"):
			return "0", true
		case !def.isInt:
			return w, true
		}
		return "", false
	}
	v, next, ok := literalAt(toks, 0)
	if !ok || next != len(toks) {
		return "", false
	}
	switch v.kind {
	case valInt:
		return strconv.FormatInt(v.i, 10), true
	case valUint:
		return strconv.FormatUint(v.u, 10), true
	case valString:
		if def.isInt {
			if _, err := strconv.ParseInt(strings.TrimSpace(v.s), 10, 64); err != nil {
				return "", false
			}
			return strings.TrimSpace(v.s), true
		}
		return v.s, true
	}
	return "", false
}

// rewriteRefs replaces references MariaDB cannot evaluate: @@ob_* variables
// and ob_version() become literals (keeping the column name a bare select
// item would have had), as does CONNECTION_ID(), which would give
// MariaDB's thread id (procs.go says what an OBServer gives); MySQL 8
// variable names become MariaDB's. It returns the statement unchanged when
// there is nothing to replace.
func (s *session) rewriteRefs(sql string, toks []token) (string, bool) {
	var b strings.Builder
	last := 0
	changed := false
	for i := 0; i < len(toks); i++ {
		t := &toks[i]
		repl, span := "", 1
		switch {
		case t.kind == tokSysVar:
			if to, ok := renamedVars[t.val]; ok {
				scope := ""
				if t.aux != "" {
					scope = t.aux + "."
				}
				repl = "@@" + scope + to
			} else if def, ok := obVars[t.val]; ok {
				v := s.obVar(t.val)
				if def.isInt {
					if _, err := strconv.ParseInt(v, 10, 64); err != nil {
						v = quoteString(v)
					}
				} else {
					v = quoteString(v)
				}
				repl = v
			}
		case t.kind == tokIdent && !t.quoted && strings.EqualFold(t.val, "ob_version") &&
			i+2 < len(toks) && toks[i+1].is("(") && toks[i+2].is(")"):
			repl, span = quoteString(s.c.topo.Version), 3
		case isConnectionIDCall(toks, i):
			repl, span = strconv.FormatUint(uint64(s.connectionID()), 10), 3
		}
		if repl == "" {
			continue
		}
		if bareSelectItem(toks, i, span) {
			repl += " AS " + quoteIdent(sql[t.start:toks[i+span-1].end])
		}
		b.WriteString(sql[last:t.start])
		b.WriteString(repl)
		last = toks[i+span-1].end
		i += span - 1
		changed = true
	}
	if !changed {
		return sql, false
	}
	b.WriteString(sql[last:])
	return b.String(), true
}

// isConnectionIDCall reports whether toks[i:i+3] is CONNECTION_ID() (not
// a qualified function of that name).
func isConnectionIDCall(toks []token, i int) bool {
	t := &toks[i]
	return t.kind == tokIdent && !t.quoted && strings.EqualFold(t.val, "connection_id") &&
		i+2 < len(toks) && toks[i+1].is("(") && toks[i+2].is(")") && (i == 0 || !toks[i-1].is("."))
}

// hasConnectionIDCall reports whether a statement calls CONNECTION_ID().
func hasConnectionIDCall(toks []token) bool {
	for i := range toks {
		if isConnectionIDCall(toks, i) {
			return true
		}
	}
	return false
}

// bareSelectItem reports whether toks[i:i+span] is a whole select-list item
// without an alias: preceded by SELECT, DISTINCT or ',' and followed by
// ',', FROM, the end or a clause keyword.
func bareSelectItem(toks []token, i, span int) bool {
	if i == 0 {
		return false
	}
	prev := &toks[i-1]
	if !(prev.is("SELECT") || prev.is("DISTINCT") || prev.is(",")) {
		return false
	}
	// The item must be in a select list: find SELECT before it at the
	// same depth.
	depth := 0
	found := false
	for j := i - 1; j >= 0; j-- {
		if toks[j].is(")") {
			depth++
		} else if toks[j].is("(") {
			if depth == 0 {
				break
			}
			depth--
		} else if depth == 0 && toks[j].is("SELECT") {
			found = true
			break
		} else if depth == 0 && toks[j].kind == tokIdent && !toks[j].quoted && (clauseEnd[strings.ToUpper(toks[j].val)] || toks[j].is("FROM") || toks[j].is("WHERE")) {
			break
		}
	}
	if !found {
		return false
	}
	k := i + span
	if k >= len(toks) {
		return true
	}
	next := &toks[k]
	return next.is(",") || next.is(";") || next.is(")") || next.is("FROM") ||
		next.kind == tokIdent && !next.quoted && (clauseEnd[strings.ToUpper(next.val)] || next.is("WHERE"))
}
