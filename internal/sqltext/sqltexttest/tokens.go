// Package sqltexttest splits MySQL statements into tokens for tests that
// check that text obgate put into a statement stayed a literal: the
// statement built with a hostile name must have the same tokens as with a
// benign one, under both ways a server may read a backslash in a string
// (escape, or an ordinary character with NO_BACKSLASH_ESCAPES).
//
// It is a test helper, as net/http/httptest is: small, written from the
// MySQL and OceanBase lexers' documented rules, and not used by production
// code.
package sqltexttest

import (
	"encoding/hex"
	"strings"
)

// Kind is the kind of a token.
type Kind uint8

// Token kinds.
const (
	Word    Kind = iota // keyword or bare name
	Ident               // `backquoted name`
	Var                 // @var, @@var, @`var`, @'var'; a quoted one's Value is its name
	String              // '…', "…", X'…', B'…', N'…', and CONVERT(X'…' USING cs) as one token
	Number              // 12, 1.5e3, 0x1f, 0b01
	Op                  // punctuation and operators
	Comment             // /* … */, -- …, # …
	Bad                 // a string, name or comment that does not end, or bad hex digits
)

var kindNames = [...]string{"word", "ident", "var", "string", "number", "op", "comment", "BAD"}

func (k Kind) String() string {
	if int(k) < len(kindNames) {
		return kindNames[k]
	}
	return "?"
}

// Token is one token of a statement.
type Token struct {
	Kind Kind
	// Text is the token's source text.
	Text string
	// Value is a String's value (quotes and escapes resolved, hex decoded),
	// an Ident's name or a quoted Var's name.
	Value string
}

// Tokens splits sql into tokens, reading a backslash in a quoted string as
// an escape when backslashEscapes is true (the default sql_mode) and as an
// ordinary character otherwise (NO_BACKSLASH_ESCAPES). Whitespace is
// dropped; everything else, comments included, is a token.
func Tokens(sql string, backslashEscapes bool) []Token {
	var out []Token
	for i := 0; i < len(sql); {
		c := sql[i]
		start := i
		switch {
		case isSpace(c):
			i++
			continue
		case c == '#':
			i = lineEnd(sql, i)
			out = append(out, Token{Kind: Comment, Text: sql[start:i]})
		case c == '-' && i+1 < len(sql) && sql[i+1] == '-' && (i+2 == len(sql) || sql[i+2] <= ' '):
			i = lineEnd(sql, i)
			out = append(out, Token{Kind: Comment, Text: sql[start:i]})
		case c == '/' && i+1 < len(sql) && sql[i+1] == '*':
			end := strings.Index(sql[i+2:], "*/")
			if end < 0 {
				return append(out, Token{Kind: Bad, Text: sql[start:]})
			}
			i += 2 + end + 2
			out = append(out, Token{Kind: Comment, Text: sql[start:i]})
		case c == '\'' || c == '"':
			v, next, ok := quoted(sql, i, c, backslashEscapes)
			if !ok {
				return append(out, Token{Kind: Bad, Text: sql[start:]})
			}
			i = next
			out = append(out, Token{Kind: String, Text: sql[start:i], Value: v})
		case c == '`':
			v, next, ok := quoted(sql, i, c, false)
			if !ok {
				return append(out, Token{Kind: Bad, Text: sql[start:]})
			}
			i = next
			out = append(out, Token{Kind: Ident, Text: sql[start:i], Value: v})
		case (c == 'x' || c == 'X' || c == 'b' || c == 'B' || c == 'n' || c == 'N') && i+1 < len(sql) && sql[i+1] == '\'':
			v, next, ok := quoted(sql, i+1, '\'', backslashEscapes && (c == 'n' || c == 'N'))
			if !ok {
				return append(out, Token{Kind: Bad, Text: sql[start:]})
			}
			i = next
			if c == 'x' || c == 'X' {
				b, err := hex.DecodeString(v)
				if err != nil {
					return append(out, Token{Kind: Bad, Text: sql[start:]})
				}
				v = string(b)
			}
			out = append(out, Token{Kind: String, Text: sql[start:i], Value: v})
		case isDigit(c) || c == '.' && i+1 < len(sql) && isDigit(sql[i+1]):
			i = number(sql, i)
			if i < len(sql) && isWordByte(sql[i]) { // 1abc is a name
				i = word(sql, i)
				out = append(out, Token{Kind: Word, Text: sql[start:i]})
			} else {
				out = append(out, Token{Kind: Number, Text: sql[start:i]})
			}
		case c == '@':
			i++
			if i < len(sql) && sql[i] == '@' {
				i++
			}
			if i < len(sql) && (sql[i] == '`' || sql[i] == '\'' || sql[i] == '"') {
				v, next, ok := quoted(sql, i, sql[i], false)
				if !ok {
					return append(out, Token{Kind: Bad, Text: sql[start:]})
				}
				i = next
				out = append(out, Token{Kind: Var, Text: sql[start:i], Value: v})
				continue
			}
			for i < len(sql) && (isWordByte(sql[i]) || sql[i] == '.') { // @@session.name, @a.b
				i++
			}
			out = append(out, Token{Kind: Var, Text: sql[start:i]})
		case isWordByte(c):
			i = word(sql, i)
			out = append(out, Token{Kind: Word, Text: sql[start:i]})
		default:
			i += opLen(sql[i:])
			out = append(out, Token{Kind: Op, Text: sql[start:i]})
		}
	}
	return collapseConvert(out)
}

// quoted reads the quoted text that starts at sql[i] == q and returns its
// value and the position after the closing quote; ok is false when it
// does not end. A doubled quote stands for one; with esc a backslash
// escapes the next byte, as MySQL reads it.
func quoted(sql string, i int, q byte, esc bool) (v string, next int, ok bool) {
	var b strings.Builder
	for i++; i < len(sql); i++ {
		c := sql[i]
		switch {
		case c == q && i+1 < len(sql) && sql[i+1] == q:
			b.WriteByte(q)
			i++
		case c == q:
			return b.String(), i + 1, true
		case c == '\\' && esc:
			if i+1 == len(sql) {
				return "", 0, false
			}
			i++
			b.WriteString(unescape(sql[i]))
		default:
			b.WriteByte(c)
		}
	}
	return "", 0, false
}

// unescape is the value of backslash-e in a MySQL string.
func unescape(e byte) string {
	switch e {
	case '0':
		return "\x00"
	case 'b':
		return "\b"
	case 'n':
		return "\n"
	case 'r':
		return "\r"
	case 't':
		return "\t"
	case 'Z':
		return "\x1a"
	case '%', '_':
		return "\\" + string(e)
	}
	return string(e)
}

// collapseConvert turns CONVERT ( X'…' USING charset ) into one String
// token whose value is the hex literal's: sqltext writes text with
// backslashes and control bytes that way, and it is one value as much as
// a quoted string is.
func collapseConvert(toks []Token) []Token {
	out := toks[:0]
	for i := 0; i < len(toks); i++ {
		if i+5 < len(toks) && toks[i].Kind == Word && strings.EqualFold(toks[i].Text, "CONVERT") &&
			toks[i+1].Kind == Op && toks[i+1].Text == "(" &&
			toks[i+2].Kind == String && (toks[i+2].Text[0] == 'X' || toks[i+2].Text[0] == 'x') &&
			toks[i+3].Kind == Word && strings.EqualFold(toks[i+3].Text, "USING") &&
			toks[i+4].Kind == Word && toks[i+5].Kind == Op && toks[i+5].Text == ")" {
			var text strings.Builder
			for _, t := range toks[i : i+6] {
				text.WriteString(t.Text)
			}
			out = append(out, Token{Kind: String, Text: text.String(), Value: toks[i+2].Value})
			i += 5
			continue
		}
		out = append(out, toks[i])
	}
	return out
}

// Shape renders what a statement's tokens say apart from its values: the
// kind of every token, and the text of words, numbers, operators and
// comments (the parts an attacker would have to change). Two statements
// with the same shape differ only in their strings and quoted names
// (variables' included).
func Shape(toks []Token) string {
	var b strings.Builder
	for i, t := range toks {
		if i > 0 {
			b.WriteByte(' ')
		}
		switch {
		case t.Kind == String || t.Kind == Ident:
			b.WriteString(t.Kind.String())
		case t.Kind == Var && t.Value != "" || strings.ContainsAny(t.Text, "`'\""):
			// A quoted variable: its scope, not its name.
			b.WriteString("var:")
			b.WriteString(t.Text[:strings.IndexAny(t.Text, "`'\"")])
		default:
			b.WriteString(t.Kind.String())
			b.WriteByte(':')
			b.WriteString(t.Text)
		}
	}
	return b.String()
}

// Values returns the values of the String tokens, in order.
func Values(toks []Token) []string {
	var out []string
	for _, t := range toks {
		if t.Kind == String {
			out = append(out, t.Value)
		}
	}
	return out
}

func isSpace(c byte) bool {
	return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v'
}

func isDigit(c byte) bool { return c >= '0' && c <= '9' }

// isWordByte reports whether c may be part of a bare name: MySQL allows
// [0-9A-Za-z$_] and any non-ASCII byte.
func isWordByte(c byte) bool {
	return isDigit(c) || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c == '_' || c == '$' || c >= 0x80
}

func word(sql string, i int) int {
	for i < len(sql) && isWordByte(sql[i]) {
		i++
	}
	return i
}

func lineEnd(sql string, i int) int {
	if j := strings.IndexByte(sql[i:], '\n'); j >= 0 {
		return i + j
	}
	return len(sql)
}

// number returns the end of the number at sql[i]: 0x…, 0b…, or digits
// with an optional fraction and exponent.
func number(sql string, i int) int {
	if sql[i] == '0' && i+1 < len(sql) && (sql[i+1] == 'x' || sql[i+1] == 'b') {
		return word(sql, i+2)
	}
	for i < len(sql) && isDigit(sql[i]) {
		i++
	}
	if i < len(sql) && sql[i] == '.' {
		i++
		for i < len(sql) && isDigit(sql[i]) {
			i++
		}
	}
	if i < len(sql) && (sql[i] == 'e' || sql[i] == 'E') {
		j := i + 1
		if j < len(sql) && (sql[j] == '+' || sql[j] == '-') {
			j++
		}
		if j < len(sql) && isDigit(sql[j]) {
			for j < len(sql) && isDigit(sql[j]) {
				j++
			}
			i = j
		}
	}
	return i
}

// opLen is the length of the operator that s starts with.
func opLen(s string) int {
	for _, op := range []string{"<=>", "<=", ">=", "<>", "!=", ":=", "||", "&&", "<<", ">>", "->>", "->"} {
		if strings.HasPrefix(s, op) {
			return len(op)
		}
	}
	return 1
}
