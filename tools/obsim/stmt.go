package obsim

import (
	"math"
	"strconv"
	"strings"
	"time"
)

// Statement facts obsim needs to decide where a statement "ran": its kind,
// the first table it names, a READ_CONSISTENCY(WEAK) hint, and the literal
// values it gives that table's columns (WHERE col = v / col IN (…) joined by
// AND, and INSERT/REPLACE rows). A ? placeholder is a slot: analyzeBound
// reads the values COM_STMT_EXECUTE bound to them (execparams.go) where a
// literal may stand.

type valKind uint8

const (
	valNull valKind = iota
	valInt
	valUint
	valString
	valMax     // MAXVALUE (RANGE bounds)
	valDefault // DEFAULT (LIST default partition)
	// Values cast to a key column of their type (castValue): a DATE's day
	// number, a DATETIME's or TIMESTAMP's microseconds (TIMESTAMP in UTC)
	// in i, a DECIMAL's obpart.Decimal bytes in s.
	valDate
	valTime
	valDec
)

// value is a literal.
type value struct {
	kind valKind
	i    int64
	u    uint64
	s    string
}

func (v value) String() string {
	switch v.kind {
	case valNull:
		return "NULL"
	case valInt:
		return strconv.FormatInt(v.i, 10)
	case valUint:
		return strconv.FormatUint(v.u, 10)
	case valMax:
		return "MAXVALUE"
	case valDefault:
		return "DEFAULT"
	case valDate:
		return "'" + time.UnixMicro(v.i*86400*1000000).UTC().Format("2006-01-02") + "'"
	case valTime:
		return "'" + time.UnixMicro(v.i).UTC().Format("2006-01-02 15:04:05.999999") + "'"
	case valDec:
		d := decimalOf(v)
		return d.Text(int(v.u))
	}
	return quoteString(v.s)
}

// literalAt reads a literal at toks[i]: an optionally signed number, a
// string, NULL, TRUE/FALSE, MAXVALUE or DEFAULT.
func literalAt(toks []token, i int) (value, int, bool) {
	if i >= len(toks) {
		return value{}, i, false
	}
	neg := false
	j := i
	if toks[j].is("-") || toks[j].is("+") {
		neg = toks[j].is("-")
		j++
		if j >= len(toks) || toks[j].kind != tokNumber {
			return value{}, i, false
		}
	}
	t := toks[j]
	switch t.kind {
	case tokString:
		return value{kind: valString, s: t.val}, j + 1, true
	case tokNumber:
		v, ok := numberValue(t.val, neg)
		return v, j + 1, ok
	case tokIdent:
		if t.quoted {
			return value{}, i, false
		}
		switch strings.ToUpper(t.val) {
		case "NULL":
			return value{kind: valNull}, j + 1, true
		case "TRUE":
			return value{kind: valInt, i: 1}, j + 1, true
		case "FALSE":
			return value{kind: valInt}, j + 1, true
		case "MAXVALUE":
			return value{kind: valMax}, j + 1, true
		case "DEFAULT":
			return value{kind: valDefault}, j + 1, true
		}
	}
	return value{}, i, false
}

// numberValue converts a number token. Integers become valInt (valUint when
// above the int64 range); decimals and exponents stay text (valString), which
// integer columns do not accept as partition keys.
func numberValue(text string, neg bool) (value, bool) {
	lower := strings.ToLower(text)
	if strings.HasPrefix(lower, "0x") || strings.HasPrefix(lower, "0b") {
		base := 16
		if lower[1] == 'b' {
			base = 2
		}
		u, err := strconv.ParseUint(lower[2:], base, 64)
		if err != nil || neg {
			return value{}, false
		}
		return value{kind: valUint, u: u}, true
	}
	if strings.ContainsAny(text, ".eE") {
		if neg {
			text = "-" + text
		}
		return value{kind: valString, s: text}, true
	}
	u, err := strconv.ParseUint(text, 10, 64)
	if err != nil {
		return value{}, false
	}
	switch {
	case neg && u <= 1<<63:
		return value{kind: valInt, i: int64(-u)}, true
	case neg:
		return value{}, false
	case u <= math.MaxInt64:
		return value{kind: valInt, i: int64(u)}, true
	}
	return value{kind: valUint, u: u}, true
}

// parseLiteral parses a topology literal ("100", "'abc'", "MAXVALUE").
func parseLiteral(s string) (value, bool) {
	lx := lex(s)
	v, next, ok := literalAt(lx.toks, 0)
	if !ok || next != len(lx.toks) {
		return value{}, false
	}
	return v, true
}

type stmtKind uint8

const (
	stmtOther stmtKind = iota
	stmtSelect
	stmtInsert
	stmtReplace
	stmtUpdate
	stmtDelete
	stmtSet
	stmtUse
)

// stmtInfo is what analyze learns about a statement.
type stmtInfo struct {
	kind      stmtKind
	db, table string // the first table; table == "" when there is none
	alias     string
	weak      bool // /*+ READ_CONSISTENCY(WEAK) */
	forUpdate bool

	// where holds the values each column is restricted to by the WHERE
	// clause; nil when there is no usable clause.
	where map[string][]value
	// insertCols and insertRows are the INSERT/REPLACE column list (nil:
	// the table's column order) and row values (nil entry: not a literal).
	insertCols []string
	insertRows [][]*value

	// params are the values bound to the placeholders, by number; nil
	// for text statements.
	params []param
	// tz is the session's time zone, in which TIMESTAMP keys are read.
	tz *time.Location
}

// literal reads a literal at toks[i] as literalAt does, or a placeholder
// whose bound value is known.
func (s *stmtInfo) literal(toks []token, i int) (value, int, bool) {
	if i < len(toks) && toks[i].kind == tokParam {
		if p := int(toks[i].param); p < len(s.params) && s.params[p].known {
			return s.params[p].v, i + 1, true
		}
		return value{}, i, false
	}
	return literalAt(toks, i)
}

// isRead reports whether the statement only reads, so that it may be served
// by a follower when weak.
func (s *stmtInfo) isRead() bool { return s.kind == stmtSelect && !s.forUpdate }

// analyze extracts statement facts from sql.
func analyze(sql string) *stmtInfo { return analyzeLexed(lex(sql)) }

// analyzeLexed extracts statement facts from a lexed statement.
func analyzeLexed(lx lexResult) *stmtInfo { return analyzeBound(lx, nil) }

// analyzeBound extracts statement facts from a lexed prepared statement
// with the values bound to its placeholders.
func analyzeBound(lx lexResult, params []param) *stmtInfo {
	st := &stmtInfo{params: params}
	for _, h := range lx.hints {
		if strings.Contains(strings.ToUpper(strings.Join(strings.Fields(h), "")), "READ_CONSISTENCY(WEAK)") {
			st.weak = true
		}
	}
	toks := lx.toks
	i := 0
	for i < len(toks) && toks[i].is("(") {
		i++
	}
	if i >= len(toks) {
		return st
	}
	switch first := &toks[i]; {
	case first.is("SELECT"):
		st.kind = stmtSelect
		st.parseSelect(toks, i+1)
	case first.is("INSERT"):
		st.kind = stmtInsert
		st.parseInsert(toks, i+1)
	case first.is("REPLACE"):
		st.kind = stmtReplace
		st.parseInsert(toks, i+1)
	case first.is("UPDATE"):
		st.kind = stmtUpdate
		st.parseUpdate(toks, i+1)
	case first.is("DELETE"):
		st.kind = stmtDelete
		st.parseDelete(toks, i+1)
	case first.is("SET"):
		st.kind = stmtSet
	case first.is("USE"):
		st.kind = stmtUse
		if i+1 < len(toks) && toks[i+1].kind == tokIdent {
			st.db = toks[i+1].val
		}
	}
	return st
}

// clauseEnd are keywords that end a WHERE clause or a table reference list.
var clauseEnd = map[string]bool{"GROUP": true, "ORDER": true, "LIMIT": true, "HAVING": true,
	"UNION": true, "FOR": true, "LOCK": true, "INTO": true, "WINDOW": true, "PROCEDURE": true,
	"INTERSECT": true, "EXCEPT": true, "RETURNING": true}

// notAlias are keywords that may follow a table name and are not an alias.
var notAlias = map[string]bool{"WHERE": true, "JOIN": true, "LEFT": true, "RIGHT": true,
	"INNER": true, "CROSS": true, "STRAIGHT_JOIN": true, "NATURAL": true, "OUTER": true,
	"ON": true, "USING": true, "SET": true, "PARTITION": true, "USE": true, "FORCE": true,
	"IGNORE": true, "VALUES": true, "VALUE": true, "SELECT": true, "AS": true, "FULL": true}

// findTop returns the index of the first keyword in words at parenthesis
// depth 0 from i, stopping at stop keywords; -1 when absent.
func findTop(toks []token, i int, words map[string]bool, stop map[string]bool) int {
	depth := 0
	for ; i < len(toks); i++ {
		t := &toks[i]
		switch {
		case t.is("("):
			depth++
		case t.is(")"):
			depth--
			if depth < 0 {
				return -1
			}
		case t.is(";"):
			if depth == 0 {
				return -1
			}
		case depth == 0 && t.kind == tokIdent && !t.quoted:
			up := strings.ToUpper(t.val)
			if words[up] {
				return i
			}
			if stop[up] {
				return -1
			}
		}
	}
	return -1
}

// tableRef reads [db.]table [[AS] alias] at toks[i]. It returns the index
// after it.
func (s *stmtInfo) tableRef(toks []token, i int) int {
	if i >= len(toks) || toks[i].kind != tokIdent {
		return i
	}
	if toks[i].is("DUAL") {
		return i + 1
	}
	name := toks[i].val
	i++
	if i+1 < len(toks) && toks[i].is(".") && toks[i+1].kind == tokIdent {
		s.db, name = name, toks[i+1].val
		i += 2
	}
	s.table = name
	if i < len(toks) && toks[i].is("AS") {
		i++
	}
	if i < len(toks) && toks[i].kind == tokIdent && (toks[i].quoted || !notAlias[strings.ToUpper(toks[i].val)] && !clauseEnd[strings.ToUpper(toks[i].val)]) {
		s.alias = toks[i].val
		i++
	}
	return i
}

func (s *stmtInfo) parseSelect(toks []token, i int) {
	from := findTop(toks, i, map[string]bool{"FROM": true}, clauseEnd)
	if from < 0 {
		return
	}
	next := s.tableRef(toks, from+1)
	if s.table == "" {
		return
	}
	if w := findTop(toks, next, map[string]bool{"WHERE": true}, clauseEnd); w >= 0 {
		s.parseWhere(toks, w+1)
	}
	if f := findTop(toks, next, map[string]bool{"FOR": true}, nil); f >= 0 && f+1 < len(toks) && toks[f+1].is("UPDATE") {
		s.forUpdate = true
	}
}

func (s *stmtInfo) parseUpdate(toks []token, i int) {
	for i < len(toks) && (toks[i].is("LOW_PRIORITY") || toks[i].is("IGNORE")) {
		i++
	}
	next := s.tableRef(toks, i)
	if w := findTop(toks, next, map[string]bool{"WHERE": true}, clauseEnd); w >= 0 {
		s.parseWhere(toks, w+1)
	}
}

func (s *stmtInfo) parseDelete(toks []token, i int) {
	for i < len(toks) && (toks[i].is("LOW_PRIORITY") || toks[i].is("QUICK") || toks[i].is("IGNORE")) {
		i++
	}
	if i < len(toks) && toks[i].is("FROM") {
		i++
	}
	next := s.tableRef(toks, i)
	if w := findTop(toks, next, map[string]bool{"WHERE": true}, clauseEnd); w >= 0 {
		s.parseWhere(toks, w+1)
	}
}

func (s *stmtInfo) parseInsert(toks []token, i int) {
	for i < len(toks) && (toks[i].is("LOW_PRIORITY") || toks[i].is("DELAYED") || toks[i].is("HIGH_PRIORITY") || toks[i].is("IGNORE")) {
		i++
	}
	if i < len(toks) && toks[i].is("INTO") {
		i++
	}
	i = s.tableRef(toks, i)
	if s.alias != "" && (strings.EqualFold(s.alias, "VALUES") || strings.EqualFold(s.alias, "VALUE")) {
		s.alias = ""
		i--
	}
	if i < len(toks) && toks[i].is("PARTITION") {
		if end := matchParen(toks, i+1); end > 0 {
			i = end + 1
		}
	}
	if i < len(toks) && toks[i].is("(") {
		end := matchParen(toks, i)
		if end < 0 {
			return
		}
		cols := []string{}
		for j := i + 1; j < end; j++ {
			if toks[j].kind == tokIdent {
				if j+2 < end && toks[j+1].is(".") { // t.col
					continue
				}
				cols = append(cols, strings.ToLower(toks[j].val))
			}
		}
		s.insertCols = cols
		i = end + 1
	}
	if i >= len(toks) {
		return
	}
	switch {
	case toks[i].is("VALUES") || toks[i].is("VALUE"):
		i++
		for i < len(toks) && toks[i].is("(") {
			end := matchParen(toks, i)
			if end < 0 {
				return
			}
			s.insertRows = append(s.insertRows, s.rowValues(toks[i+1:end]))
			i = end + 1
			if i < len(toks) && toks[i].is(",") {
				i++
			}
		}
	case toks[i].is("SET"):
		cols := []string{}
		var row []*value
		for _, a := range splitTop(toks[i+1:], ",") {
			if len(a) >= 3 && a[0].kind == tokIdent && a[1].is("=") {
				cols = append(cols, strings.ToLower(a[0].val))
				if v, next, ok := s.literal(a, 2); ok && next == len(a) {
					row = append(row, &v)
				} else {
					row = append(row, nil)
				}
			}
		}
		s.insertCols, s.insertRows = cols, [][]*value{row}
	}
}

// rowValues reads the comma-separated values of one VALUES row.
func (s *stmtInfo) rowValues(toks []token) []*value {
	var row []*value
	for _, e := range splitTop(toks, ",") {
		if v, next, ok := s.literal(e, 0); ok && next == len(e) {
			row = append(row, &v)
		} else {
			row = append(row, nil)
		}
	}
	return row
}

// matchParen returns the index of the ')' matching the '(' at toks[i].
func matchParen(toks []token, i int) int {
	if i >= len(toks) || !toks[i].is("(") {
		return -1
	}
	depth := 0
	for j := i; j < len(toks); j++ {
		if toks[j].is("(") {
			depth++
		} else if toks[j].is(")") {
			depth--
			if depth == 0 {
				return j
			}
		}
	}
	return -1
}

// splitTop splits toks at sep tokens at parenthesis depth 0.
func splitTop(toks []token, sep string) [][]token {
	var out [][]token
	depth, start := 0, 0
	for j := range toks {
		switch {
		case toks[j].is("("):
			depth++
		case toks[j].is(")"):
			depth--
		case depth == 0 && toks[j].is(sep):
			out = append(out, toks[start:j])
			start = j + 1
		}
	}
	return append(out, toks[start:])
}

// parseWhere reads the WHERE clause starting at toks[i]. Conjuncts of the
// forms col = literal, literal = col, col <=> literal and col IN (literals)
// restrict a column; other conjuncts are ignored (they can only narrow the
// rows further). An OR, XOR or || at the top level makes the clause
// unusable.
func (s *stmtInfo) parseWhere(toks []token, i int) {
	end := i
	depth := 0
	for ; end < len(toks); end++ {
		t := &toks[end]
		if t.is("(") {
			depth++
		} else if t.is(")") {
			depth--
			if depth < 0 {
				break
			}
		} else if depth == 0 && (t.is(";") || t.kind == tokIdent && !t.quoted && clauseEnd[strings.ToUpper(t.val)]) {
			break
		}
	}
	where := map[string][]value{}
	if !s.conjuncts(toks[i:end], where) {
		return
	}
	s.where = where
}

// conjuncts adds the restrictions of an AND-list to where and reports false
// when the list has a top-level OR.
func (s *stmtInfo) conjuncts(toks []token, where map[string][]value) bool {
	// Unwrap ( … ) around the whole expression.
	for len(toks) >= 2 && toks[0].is("(") && matchParen(toks, 0) == len(toks)-1 {
		toks = toks[1 : len(toks)-1]
	}
	var parts [][]token
	depth, start, between := 0, 0, false
	for j := range toks {
		t := &toks[j]
		switch {
		case t.is("("):
			depth++
		case t.is(")"):
			depth--
		case depth > 0:
		case t.is("OR") || t.is("XOR") || t.is("||"):
			return false
		case t.is("BETWEEN"):
			between = true
		case t.is("AND") || t.is("&&"):
			if between {
				between = false
				continue
			}
			parts = append(parts, toks[start:j])
			start = j + 1
		}
	}
	parts = append(parts, toks[start:])
	for _, p := range parts {
		if len(p) >= 2 && p[0].is("(") && matchParen(p, 0) == len(p)-1 {
			inner := map[string][]value{}
			if s.conjuncts(p, inner) {
				for col, vals := range inner {
					restrict(where, col, vals)
				}
			}
			continue
		}
		s.conjunct(p, where)
	}
	return true
}

// conjunct records a col = v or col IN (…) restriction.
func (s *stmtInfo) conjunct(p []token, where map[string][]value) {
	col, next := s.columnRef(p, 0)
	if col != "" && next < len(p) {
		switch {
		case p[next].is("=") || p[next].is("<=>"):
			if v, end, ok := s.literal(p, next+1); ok && end == len(p) {
				restrict(where, col, []value{v})
			}
		case p[next].is("IN"):
			close := matchParen(p, next+1)
			if close != len(p)-1 {
				return
			}
			var vals []value
			for _, e := range splitTop(p[next+2:close], ",") {
				v, end, ok := s.literal(e, 0)
				if !ok || end != len(e) {
					return
				}
				vals = append(vals, v)
			}
			restrict(where, col, vals)
		}
		return
	}
	// literal = col
	if v, end, ok := s.literal(p, 0); ok && end < len(p) && p[end].is("=") {
		if col, after := s.columnRef(p, end+1); col != "" && after == len(p) {
			restrict(where, col, []value{v})
		}
	}
}

// columnRef reads [[db.]table.]column at p[i] and returns the lower-case
// column name, or "" when the qualifier names another table.
func (s *stmtInfo) columnRef(p []token, i int) (string, int) {
	if i >= len(p) || p[i].kind != tokIdent {
		return "", i
	}
	names := []string{p[i].val}
	j := i + 1
	for j+1 < len(p) && p[j].is(".") && p[j+1].kind == tokIdent {
		names = append(names, p[j+1].val)
		j += 2
	}
	if len(names) > 3 {
		return "", j
	}
	col := names[len(names)-1]
	if len(names) >= 2 {
		q := names[len(names)-2]
		if !strings.EqualFold(q, s.table) && !strings.EqualFold(q, s.alias) {
			return "", j
		}
	}
	if !p[i].quoted && (strings.EqualFold(col, "NULL") || strings.EqualFold(col, "TRUE") || strings.EqualFold(col, "FALSE")) {
		return "", i
	}
	return strings.ToLower(col), j
}

// restrict intersects the allowed values of col with vals.
func restrict(where map[string][]value, col string, vals []value) {
	old, seen := where[col]
	if !seen {
		where[col] = vals
		return
	}
	var keep []value
	for _, a := range old {
		for _, b := range vals {
			if a == b {
				keep = append(keep, a)
				break
			}
		}
	}
	where[col] = keep
}
