package obsim

import (
	"encoding/hex"
	"strings"

	"obgate/mysqlproto"
)

// User variables in session-state reports.
//
// An OBServer lists the user variables a statement assigned in the OK
// packet that ends its response, inside the SESSION_TRACK_SYSTEM_VARIABLES
// entry: the changed system variables as (name, value) pairs, then the pair
// ("__NULL", "__NULL"), then one (name, literal) pair per user variable,
// the name without '@' and the value a SQL literal a proxy can replay as
// SET @name = literal on another server. MariaDB does not track user
// variables, so obsim finds the statements that assign them from its lexer,
// holds back the final OK, reads the variables' values on the same MariaDB
// session (SELECT @`a`, @`b`) and builds the literals from the values and
// their column types:
//
//   - NULL (also a variable that was never set): NULL
//   - integers and decimals: the number, bare (12, -5, 1.50)
//   - doubles: the number with an exponent, so that the replayed value is a
//     double again (1.5e0, 1e300)
//   - binary strings (binary charset): a hex literal, X'00ff'
//   - other strings: '…' with ' doubled and, unless the session has
//     NO_BACKSLASH_ESCAPES, \ and NUL escaped as \\ and \0
//
// The read-back SELECT uses no table, so it keeps the statement's warnings
// (SHOW WARNINGS) but sets ROW_COUNT() to -1 and FOUND_ROWS() to 1.

// isOBClientType reports whether a client that sent __mysql_client_type =
// ct gets user variables in its OK packets. An OBServer sends changed
// session state, in the layout above, only to clients that are not
// "normal": ODP and the OceanBase drivers (OCJ, libobclient, JDBC). Plain
// MySQL clients read one (name, value) pair per system-variable entry, and
// libmariadb rejects an entry holding several as a malformed packet.
func isOBClientType(ct string) bool {
	switch ct {
	case mysqlproto.ClientTypeOBProxy, mysqlproto.ClientTypeOBLibOBClient, mysqlproto.ClientTypeOBJDBC, obJavaClientType:
		return true
	}
	return false
}

// obJavaClientType is the __mysql_client_type of OceanBase Connector/J.
const obJavaClientType = "__ob_java_client"

// userVarSeparator is the (name, value) pair that separates system from
// user variables in an OBServer's session-state report.
const userVarSeparator = "__NULL"

// userVarRefs are the user variables a statement may assign, lower-case,
// without duplicates (SET targets first, then := and INTO targets). sure ones are assigned by the statement's
// own syntax (SET @u = …, @u := …, INTO @u) and are always reported, as an
// OBServer reports every assignment; maybe ones (CALL arguments, LOAD DATA
// column lists) are reported only when their value differs from what the
// session last reported for them.
type userVarRefs struct {
	sure, maybe []string
}

func (r *userVarRefs) empty() bool { return len(r.sure) == 0 && len(r.maybe) == 0 }

func (r *userVarRefs) addSure(name string) {
	for i, m := range r.maybe {
		if m == name {
			r.maybe = append(r.maybe[:i], r.maybe[i+1:]...)
			break
		}
	}
	if !containsString(r.sure, name) {
		r.sure = append(r.sure, name)
	}
}

func (r *userVarRefs) addMaybe(name string) {
	if !containsString(r.sure, name) && !containsString(r.maybe, name) {
		r.maybe = append(r.maybe, name)
	}
}

func containsString(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// findUserVarAssignments returns the user variables the statements in toks
// may assign. Most statements name no user variable at all, and the first
// loop (one comparison per token) is all they cost.
func findUserVarAssignments(toks []token) userVarRefs {
	var refs userVarRefs
	found := false
	for i := range toks {
		if toks[i].kind == tokUserVar {
			found = true
			break
		}
	}
	if !found {
		return refs
	}
	start := 0
	for i := 0; i <= len(toks); i++ {
		if i == len(toks) || toks[i].is(";") {
			refs.scanStatement(toks[start:i])
			start = i + 1
		}
	}
	return refs
}

// scanStatement adds the assignments of one statement.
func (r *userVarRefs) scanStatement(toks []token) {
	k := 0
	for k < len(toks) && toks[k].is("(") {
		k++
	}
	if k < len(toks) && toks[k].is("SET") {
		r.scanSet(toks[k+1:])
	}
	for i := range toks {
		t := &toks[i]
		switch {
		case t.kind == tokUserVar && i+1 < len(toks) && toks[i+1].is(":="):
			r.addSure(t.val)
		case t.is("INTO"):
			// SELECT … INTO @a, @b
			for j := i + 1; j < len(toks) && toks[j].kind == tokUserVar; j += 2 {
				r.addSure(toks[j].val)
				if j+1 >= len(toks) || !toks[j+1].is(",") {
					break
				}
			}
		}
	}
	if k < len(toks) && (toks[k].is("CALL") || toks[k].is("LOAD")) {
		for i := k + 1; i < len(toks); i++ {
			if toks[i].kind == tokUserVar {
				r.addMaybe(toks[i].val)
			}
		}
	}
}

// scanSet adds the user variables assigned by SET's assignment list
// (toks follow the SET keyword).
func (r *userVarRefs) scanSet(toks []token) {
	if len(toks) == 0 {
		return
	}
	if toks[0].is("STATEMENT") {
		// SET STATEMENT var = v [, …] FOR statement
		for i := 1; i < len(toks); i++ {
			if toks[i].is("FOR") {
				r.scanStatement(toks[i+1:])
				return
			}
		}
		return
	}
	if len(toks) > 1 && toks[0].kind == tokIdent && !toks[0].quoted &&
		!toks[1].is("=") && !toks[1].is(":=") && !toks[1].is(".") {
		switch strings.ToUpper(toks[0].val) {
		case "SESSION", "GLOBAL", "LOCAL":
			toks = toks[1:]
		}
	}
	for _, a := range splitTop(toks, ",") {
		if len(a) >= 2 && a[0].kind == tokUserVar && (a[1].is("=") || a[1].is(":=")) {
			r.addSure(a[0].val)
		}
	}
}

// readUserVars reads the variables in refs from MariaDB and returns those
// to report, as (name, literal) pairs. A failed read-back is logged and
// reports nothing; only a broken connection is an error.
func (s *session) readUserVars(refs userVarRefs) ([]varChange, error) {
	names := append(append([]string(nil), refs.sure...), refs.maybe...)
	var b strings.Builder
	b.WriteString("SELECT ")
	for i, name := range names {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteByte('@')
		b.WriteString(quoteIdent(name))
	}
	res, err := s.be.Query(b.String())
	if err != nil {
		if _, isSQL := mysqlproto.AsSQLError(err); isSQL {
			s.c.logger.Debug("read user variables", "node", s.n.name, "session", s.id, "err", err)
			return nil, nil
		}
		return nil, err
	}
	if len(res.Rows) != 1 || len(res.Columns) != len(names) {
		return nil, nil
	}
	noBackslash := s.status.Has(mysqlproto.StatusNoBackslashEscapes)
	var out []varChange
	for i, name := range names {
		lit := userVarLiteral(&res.Columns[i], res.Rows[0][i], noBackslash)
		if i >= len(refs.sure) {
			old, known := s.userVars[name]
			if known && old == lit || !known && lit == "NULL" {
				continue
			}
		}
		s.userVars[name] = lit
		out = append(out, varChange{name, lit})
	}
	return out, nil
}

// userVarLiteral renders a user variable's value, as MariaDB sent it in a
// text result with column col, as a SQL literal of the same type.
func userVarLiteral(col *mysqlproto.Column, v []byte, noBackslash bool) string {
	if v == nil {
		return "NULL"
	}
	switch col.Type {
	case mysqlproto.TypeTiny, mysqlproto.TypeShort, mysqlproto.TypeLong, mysqlproto.TypeInt24,
		mysqlproto.TypeLongLong, mysqlproto.TypeYear, mysqlproto.TypeDecimal, mysqlproto.TypeNewDecimal:
		if isNumberText(v) {
			return string(v)
		}
	case mysqlproto.TypeFloat, mysqlproto.TypeDouble:
		if isNumberText(v) {
			if strings.ContainsAny(string(v), "eE") {
				return string(v)
			}
			return string(v) + "e0"
		}
	}
	if col.Charset == mysqlproto.CharsetBinary {
		return "X'" + hex.EncodeToString(v) + "'"
	}
	return quoteLiteral(v, noBackslash)
}

// isNumberText reports whether v is a plain decimal number ([-]digits[.digits]
// [e[±]digits]), so that it can be sent back bare.
func isNumberText(v []byte) bool {
	i := 0
	if i < len(v) && (v[i] == '-' || v[i] == '+') {
		i++
	}
	digits := 0
	for i < len(v) && isDigit(v[i]) {
		i++
		digits++
	}
	if i < len(v) && v[i] == '.' {
		i++
		for i < len(v) && isDigit(v[i]) {
			i++
			digits++
		}
	}
	if digits == 0 {
		return false
	}
	if i < len(v) && (v[i] == 'e' || v[i] == 'E') {
		i++
		if i < len(v) && (v[i] == '-' || v[i] == '+') {
			i++
		}
		exp := 0
		for i < len(v) && isDigit(v[i]) {
			i++
			exp++
		}
		if exp == 0 {
			return false
		}
	}
	return i == len(v)
}

// quoteLiteral renders v as a single-quoted string literal: ' is doubled;
// \ and NUL are escaped unless the session has NO_BACKSLASH_ESCAPES (where
// a backslash is an ordinary character).
func quoteLiteral(v []byte, noBackslash bool) string {
	var b strings.Builder
	b.Grow(len(v) + 2)
	b.WriteByte('\'')
	for _, c := range v {
		switch {
		case c == '\'':
			b.WriteString("''")
		case c == '\\' && !noBackslash:
			b.WriteString(`\\`)
		case c == 0 && !noBackslash:
			b.WriteString(`\0`)
		default:
			b.WriteByte(c)
		}
	}
	b.WriteByte('\'')
	return b.String()
}

// userVarState returns the session state of an OK that reports user
// variables, laid out as an OBServer does: one SESSION_TRACK_SYSTEM_VARIABLES
// entry with the system variables (MariaDB's, then those in extra), the
// separator and the user variables, then MariaDB's other entries (schema,
// state change, …) in their order.
func userVarState(state, extra []byte, users []varChange) []byte {
	var pairs, others []byte
	collect := func(raw []byte) bool {
		it := mysqlproto.SessionStates(raw)
		for {
			typ, data, more := it.Next()
			if !more {
				return !it.Malformed()
			}
			if typ == mysqlproto.SessionTrackSystemVariables {
				pairs = append(pairs, data...)
				continue
			}
			others = append(others, typ)
			others = mysqlproto.AppendLenEncBytes(others, data)
		}
	}
	if !collect(state) || !collect(extra) {
		// Leave what MariaDB sent alone; report the user variables in an
		// entry of their own.
		out := append(append([]byte(nil), state...), extra...)
		return userVarEntry(out, nil, users)
	}
	out := make([]byte, 0, len(pairs)+len(others)+64)
	out = userVarEntry(out, pairs, users)
	return append(out, others...)
}

// userVarEntry appends a SESSION_TRACK_SYSTEM_VARIABLES entry holding the
// system-variable pairs sysPairs (already encoded), the separator and the
// user variables.
func userVarEntry(dst, sysPairs []byte, users []varChange) []byte {
	data := append([]byte(nil), sysPairs...)
	data = mysqlproto.AppendLenEncString(data, userVarSeparator)
	data = mysqlproto.AppendLenEncString(data, userVarSeparator)
	for _, u := range users {
		data = mysqlproto.AppendLenEncString(data, u.name)
		data = mysqlproto.AppendLenEncString(data, u.value)
	}
	dst = append(dst, mysqlproto.SessionTrackSystemVariables)
	return mysqlproto.AppendLenEncBytes(dst, data)
}
