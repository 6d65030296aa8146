package admin

import (
	"strings"
)

// tokKind is the kind of a lexical token.
type tokKind uint8

const (
	tokWord   tokKind = iota // identifier or keyword (also @@var, @var)
	tokNumber                // unsigned integer or decimal
	tokString                // quoted string, quotes removed, escapes resolved
	tokPunct                 // one punctuation character
)

type token struct {
	kind tokKind
	text string
}

// upper returns the token's text in upper case for keyword comparison.
func (t token) upper() string { return strings.ToUpper(t.text) }

// lex splits an internal command into tokens. It never fails: anything it
// does not recognise becomes a punctuation token, and an unterminated
// string runs to the end.
func lex(s string) []token {
	var toks []token
	for i := 0; i < len(s); {
		c := s[i]
		switch {
		case c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v':
			i++
		case c == '/' && i+1 < len(s) && s[i+1] == '*':
			end := strings.Index(s[i+2:], "*/")
			if end < 0 {
				return toks
			}
			i += end + 4
		case c == '#' || (c == '-' && i+2 < len(s) && s[i+1] == '-' && (s[i+2] == ' ' || s[i+2] == '\t')):
			for i < len(s) && s[i] != '\n' {
				i++
			}
		case c == '\'' || c == '"' || c == '`':
			var sb strings.Builder
			j := i + 1
			for ; j < len(s); j++ {
				if s[j] == '\\' && c != '`' && j+1 < len(s) {
					j++
					sb.WriteByte(unescape(s[j]))
					continue
				}
				if s[j] == c {
					if j+1 < len(s) && s[j+1] == c {
						sb.WriteByte(c)
						j++
						continue
					}
					break
				}
				sb.WriteByte(s[j])
			}
			kind := tokString
			if c == '`' {
				kind = tokWord
			}
			toks = append(toks, token{kind, sb.String()})
			i = j + 1
		case isDigit(c):
			j := i
			for j < len(s) && (isDigit(s[j]) || s[j] == '.') {
				j++
			}
			// A number glued to letters (10s, 8KB) is one word: config values.
			for j < len(s) && isWordChar(s[j]) {
				j++
			}
			kind := tokNumber
			if strings.IndexFunc(s[i:j], func(r rune) bool { return r != '.' && (r < '0' || r > '9') }) >= 0 {
				kind = tokWord
			}
			toks = append(toks, token{kind, s[i:j]})
			i = j
		case isWordChar(c) || c == '@':
			j := i
			for j < len(s) && (isWordChar(s[j]) || s[j] == '@' || s[j] == '.') {
				j++
			}
			toks = append(toks, token{tokWord, s[i:j]})
			i = j
		default:
			toks = append(toks, token{tokPunct, s[i : i+1]})
			i++
		}
	}
	return toks
}

func unescape(c byte) byte {
	switch c {
	case 'n':
		return '\n'
	case 't':
		return '\t'
	case 'r':
		return '\r'
	case '0':
		return 0
	}
	return c
}

func isDigit(c byte) bool { return c >= '0' && c <= '9' }

func isWordChar(c byte) bool {
	return c == '_' || c == '$' || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c >= 0x80
}

// parser walks a token list.
type parser struct {
	toks []token
	pos  int
}

func newParser(sql string) *parser {
	toks := lex(sql)
	for len(toks) > 0 && toks[len(toks)-1].kind == tokPunct && toks[len(toks)-1].text == ";" {
		toks = toks[:len(toks)-1]
	}
	return &parser{toks: toks}
}

// keyword consumes the next token if it is the keyword kw (upper case).
func (p *parser) keyword(kw string) bool {
	if p.pos < len(p.toks) && p.toks[p.pos].kind == tokWord && p.toks[p.pos].upper() == kw {
		p.pos++
		return true
	}
	return false
}

// ifKeyword consumes the next token and returns with if it is the keyword
// kw (upper case); else it returns without.
func (p *parser) ifKeyword(kw string, with, without cmdKind) cmdKind {
	if p.keyword(kw) {
		return with
	}
	return without
}

// punct consumes the next token if it is the punctuation c.
func (p *parser) punct(c string) bool {
	if p.pos < len(p.toks) && p.toks[p.pos].kind == tokPunct && p.toks[p.pos].text == c {
		p.pos++
		return true
	}
	return false
}

// next consumes and returns any token.
func (p *parser) next() (token, bool) {
	if p.pos >= len(p.toks) {
		return token{}, false
	}
	t := p.toks[p.pos]
	p.pos++
	return t, true
}

// number consumes an unsigned integer.
func (p *parser) number() (uint64, bool) {
	if p.pos >= len(p.toks) || p.toks[p.pos].kind != tokNumber {
		return 0, false
	}
	var n uint64
	for _, c := range p.toks[p.pos].text {
		if c < '0' || c > '9' || n > (1<<63)/10 {
			return 0, false
		}
		n = n*10 + uint64(c-'0')
	}
	p.pos++
	return n, true
}

// done reports whether every token was consumed.
func (p *parser) done() bool { return p.pos == len(p.toks) }

// likePattern consumes an optional LIKE 'pattern'; ok is false when LIKE
// is not followed by a string.
func (p *parser) likePattern() (pattern string, present, ok bool) {
	if !p.keyword("LIKE") {
		return "", false, true
	}
	t, more := p.next()
	if !more || (t.kind != tokString && t.kind != tokWord) {
		return "", true, false
	}
	return t.text, true, true
}

// matchLike reports whether s matches a SQL LIKE pattern (% and _,
// backslash escapes), case-insensitively as MySQL's default collations do.
// It runs in O(len(pattern)·len(s)) time.
func matchLike(pattern, s string) bool {
	type elem struct {
		c    byte
		kind byte // 'c' literal, '_' any one, '%' any run
	}
	var pat []elem
	pattern = strings.ToLower(pattern)
	for i := 0; i < len(pattern); i++ {
		switch c := pattern[i]; {
		case c == '\\' && i+1 < len(pattern):
			i++
			pat = append(pat, elem{pattern[i], 'c'})
		case c == '%' || c == '_':
			pat = append(pat, elem{kind: c})
		default:
			pat = append(pat, elem{c, 'c'})
		}
	}
	s = strings.ToLower(s)
	pi, si := 0, 0
	star, mark := -1, 0
	for si < len(s) {
		switch {
		case pi < len(pat) && (pat[pi].kind == '_' || (pat[pi].kind == 'c' && pat[pi].c == s[si])):
			pi++
			si++
		case pi < len(pat) && pat[pi].kind == '%':
			star, mark = pi, si
			pi++
		case star >= 0:
			pi = star + 1
			mark++
			si = mark
		default:
			return false
		}
	}
	for pi < len(pat) && pat[pi].kind == '%' {
		pi++
	}
	return pi == len(pat)
}
