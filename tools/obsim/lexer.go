package obsim

import (
	"encoding/hex"
	"strings"
)

// A small SQL lexer: enough to find the statement kind, the first table,
// literal partition-key values and placeholders, OceanBase hints and
// variable references.
// It never fails: anything it does not understand becomes an operator
// token.

type tokKind uint8

const (
	tokIdent   tokKind = iota // bare or `quoted` identifier; val is the name
	tokString                 // '…' or "…" (also X'…', N'…', _charset'…'); val is the content
	tokNumber                 // integer or decimal literal
	tokSysVar                 // @@[scope.]name; val is the lower-case name, scope in aux
	tokUserVar                // @name
	tokOp                     // punctuation and operators
	tokParam                  // ? placeholder of a prepared statement; val is "?"
)

type token struct {
	kind       tokKind
	quoted     bool   // identifier was `quoted`
	param      int32  // tokParam: the placeholder's number, from 0 in text order
	val        string // identifier name, string content, number text, variable name
	aux        string // sysvar scope ("session", "global", "local" or "")
	start, end int    // byte range in the statement
}

// is reports whether t is the keyword or operator s (case-insensitive for
// keywords).
func (t *token) is(s string) bool {
	switch t.kind {
	case tokIdent:
		return !t.quoted && strings.EqualFold(t.val, s)
	case tokOp, tokParam:
		return t.val == s
	}
	return false
}

// lexResult holds the tokens of a statement and the hints found in /*+ */
// comments.
type lexResult struct {
	toks  []token
	hints []string
}

func isIdentByte(c byte) bool {
	return c == '_' || c == '$' || c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= 0x80
}

func isDigit(c byte) bool { return c >= '0' && c <= '9' }

// lex splits sql into tokens.
func lex(sql string) lexResult {
	var res lexResult
	i := 0
	n := len(sql)
	params := int32(0)
	for i < n {
		c := sql[i]
		switch {
		case c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v':
			i++
		case c == '#':
			for i < n && sql[i] != '\n' {
				i++
			}
		case c == '-' && i+1 < n && sql[i+1] == '-' && (i+2 == n || sql[i+2] == ' ' || sql[i+2] == '\t' || sql[i+2] == '\n' || sql[i+2] == '\r'):
			for i < n && sql[i] != '\n' {
				i++
			}
		case c == '/' && i+1 < n && sql[i+1] == '*':
			end := strings.Index(sql[i+2:], "*/")
			body := ""
			if end < 0 {
				body = sql[i+2:]
				i = n
			} else {
				body = sql[i+2 : i+2+end]
				i += end + 4
			}
			if strings.HasPrefix(body, "+") {
				res.hints = append(res.hints, body[1:])
			}
		case c == '\'' || c == '"':
			val, next := lexQuoted(sql, i, c)
			res.toks = append(res.toks, token{kind: tokString, val: val, start: i, end: next})
			i = next
		case c == '`':
			val, next := lexQuoted(sql, i, '`')
			res.toks = append(res.toks, token{kind: tokIdent, val: val, start: i, end: next, quoted: true})
			i = next
		case c == '@':
			start := i
			if i+1 < n && sql[i+1] == '@' {
				i += 2
				j := i
				for j < n && (isIdentByte(sql[j]) || sql[j] == '.') {
					j++
				}
				name := strings.ToLower(sql[i:j])
				scope := ""
				if k := strings.IndexByte(name, '.'); k >= 0 {
					scope, name = name[:k], name[k+1:]
				}
				res.toks = append(res.toks, token{kind: tokSysVar, val: name, aux: scope, start: start, end: j})
				i = j
			} else {
				i++
				val := ""
				if i < n && (sql[i] == '\'' || sql[i] == '"' || sql[i] == '`') {
					val, i = lexQuoted(sql, i, sql[i])
				} else {
					j := i
					for j < n && (isIdentByte(sql[j]) || sql[j] == '.') {
						j++
					}
					val, i = sql[i:j], j
				}
				res.toks = append(res.toks, token{kind: tokUserVar, val: strings.ToLower(val), start: start, end: i})
			}
		case isDigit(c) || (c == '.' && i+1 < n && isDigit(sql[i+1])):
			start := i
			if c == '0' && i+1 < n && (sql[i+1] == 'x' || sql[i+1] == 'X' || sql[i+1] == 'b' || sql[i+1] == 'B') {
				j := i + 2
				for j < n && isIdentByte(sql[j]) {
					j++
				}
				res.toks = append(res.toks, token{kind: tokNumber, val: sql[start:j], start: start, end: j})
				i = j
				continue
			}
			for i < n && isDigit(sql[i]) {
				i++
			}
			if i < n && sql[i] == '.' {
				i++
				for i < n && isDigit(sql[i]) {
					i++
				}
			}
			if i < n && (sql[i] == 'e' || sql[i] == 'E') {
				j := i + 1
				if j < n && (sql[j] == '+' || sql[j] == '-') {
					j++
				}
				if j < n && isDigit(sql[j]) {
					for j < n && isDigit(sql[j]) {
						j++
					}
					i = j
				}
			}
			if i < n && isIdentByte(sql[i]) && sql[i] != '$' { // 1abc is an identifier
				for i < n && isIdentByte(sql[i]) {
					i++
				}
				res.toks = append(res.toks, token{kind: tokIdent, val: sql[start:i], start: start, end: i})
				continue
			}
			res.toks = append(res.toks, token{kind: tokNumber, val: sql[start:i], start: start, end: i})
		case isIdentByte(c):
			start := i
			for i < n && isIdentByte(sql[i]) {
				i++
			}
			word := sql[start:i]
			// Introducers and string prefixes: X'..', N'..', _utf8mb4'..'.
			if i < n && sql[i] == '\'' && (strings.EqualFold(word, "x") || strings.EqualFold(word, "n") ||
				strings.EqualFold(word, "b") || strings.HasPrefix(word, "_")) {
				val, next := lexQuoted(sql, i, '\'')
				if strings.EqualFold(word, "x") {
					if b, err := hex.DecodeString(val); err == nil {
						val = string(b)
					}
				}
				res.toks = append(res.toks, token{kind: tokString, val: val, start: start, end: next})
				i = next
				continue
			}
			res.toks = append(res.toks, token{kind: tokIdent, val: word, start: start, end: i})
		case c == '?':
			res.toks = append(res.toks, token{kind: tokParam, val: "?", start: i, end: i + 1, param: params})
			params++
			i++
		default:
			start := i
			op := string(c)
			for _, m := range []string{"<=>", "<=", ">=", "!=", "<>", ":=", "||", "&&", "<<", ">>"} {
				if strings.HasPrefix(sql[i:], m) {
					op = m
					break
				}
			}
			i += len(op)
			res.toks = append(res.toks, token{kind: tokOp, val: op, start: start, end: i})
		}
	}
	return res
}

// lexQuoted reads a quoted string or identifier starting at sql[i] == q and
// returns its unescaped content and the position after the closing quote.
// Doubled quotes stand for one; in strings a backslash escapes the next
// character.
func lexQuoted(sql string, i int, q byte) (string, int) {
	var b strings.Builder
	i++
	for i < len(sql) {
		c := sql[i]
		switch {
		case c == q:
			if i+1 < len(sql) && sql[i+1] == q {
				b.WriteByte(q)
				i += 2
				continue
			}
			return b.String(), i + 1
		case c == '\\' && q != '`' && i+1 < len(sql):
			i++
			switch e := sql[i]; e {
			case 'n':
				b.WriteByte('\n')
			case 't':
				b.WriteByte('\t')
			case 'r':
				b.WriteByte('\r')
			case '0':
				b.WriteByte(0)
			case 'Z':
				b.WriteByte(26)
			case 'b':
				b.WriteByte('\b')
			default:
				b.WriteByte(e)
			}
			i++
		default:
			b.WriteByte(c)
			i++
		}
	}
	return b.String(), i
}

// quoteString renders s as a single-quoted SQL literal.
func quoteString(s string) string {
	var b strings.Builder
	b.WriteByte('\'')
	for i := 0; i < len(s); i++ {
		switch c := s[i]; c {
		case '\'':
			b.WriteString("''")
		case '\\':
			b.WriteString(`\\`)
		case 0:
			b.WriteString(`\0`)
		default:
			b.WriteByte(c)
		}
	}
	b.WriteByte('\'')
	return b.String()
}

// quoteIdent renders s as a `quoted` identifier.
func quoteIdent(s string) string {
	return "`" + strings.ReplaceAll(s, "`", "``") + "`"
}
