package route

import "bytes"

// tokKind is the kind of a token of the statement-facts lexer.
type tokKind uint8

const (
	tEOF    tokKind = iota // end of the text
	tWord                  // unquoted identifier or keyword (not all digits)
	tQuoted                // `identifier`; start..end is the text between the backquotes
	tString                // '...' or "..."; start..end is the text between the quotes
	tNumber                // a run of digits
	tVar                   // @name, @'name', @@name, @@scope.name; start..end is the name
	tAssign                // :=
	tPunct                 // any other byte, in c
)

// token is one token: where its text lies in the input, and what the
// lexer already knows about it.
type token struct {
	kind       tokKind
	kw         kw   // tWord, tQuoted: the keyword or function name the text spells
	c          byte // tPunct: the byte
	sys        bool // tVar: a system variable (@@)
	start, end int
}

// is reports whether t is the punctuation byte c.
func (t *token) is(c byte) bool { return t.kind == tPunct && t.c == c }

// lexer splits a statement's text into tokens. It skips blanks and
// comments, reads the content of executable comments (/*! ... */ and
// /*M! ... */) as code and the hints of a /*+ ... */ comment while hints
// is set. It never reads outside s and never allocates.
type lexer struct {
	s        []byte
	pos      int
	exec     bool // inside an executable comment
	unclosed bool // the text ended inside a string, quoted name or comment
	hints    bool // a /*+ ... */ comment now is read for hints

	consistency Consistency // from read_consistency(...)
	timeout     int64       // from query_timeout(...)
	target      []byte      // from a TARGET_DB_SERVER comment
}

// next reads the next token into t; at the end of the text it reads tEOF,
// again and again. It sets t's fields one by one (no struct copies: they
// are on the path of every byte).
func (l *lexer) next(t *token) {
	s := l.s
	for l.pos < len(s) {
		c := s[l.pos]
		switch {
		case isBlank(c):
			l.pos++
		case c == '/' && l.pos+1 < len(s) && s[l.pos+1] == '*':
			l.comment()
		case c == '*' && l.exec && l.pos+1 < len(s) && s[l.pos+1] == '/':
			l.exec = false
			l.pos += 2
		case c == '#' || isDashComment(s, l.pos):
			l.pos = skipLine(s, l.pos)
		default:
			l.token(t, c)
			return
		}
	}
	if l.exec {
		l.unclosed = true
		l.exec = false
	}
	t.set(tEOF, kwNone, 0, len(s), len(s))
}

// set sets every field of t.
func (t *token) set(kind tokKind, k kw, c byte, start, end int) {
	t.kind, t.kw, t.c, t.sys = kind, k, c, false
	t.start, t.end = start, end
}

// comment skips the comment that starts at l.pos ("/*"), or enters an
// executable comment.
func (l *lexer) comment() {
	s := l.s
	p := l.pos + 2
	switch {
	case p < len(s) && s[p] == '!':
		l.exec = true
		l.pos = skipVersion(s, p+1)
		return
	case p+1 < len(s) && s[p] == 'M' && s[p+1] == '!':
		l.exec = true
		l.pos = skipVersion(s, p+2)
		return
	}
	end := indexFrom(s, p, "*/")
	if end < 0 {
		l.unclosed = true
		l.pos = len(s)
		return
	}
	if l.hints && p < end && s[p] == '+' {
		l.readHints(s[p+1 : end])
	} else if l.hints && l.target == nil {
		l.target = readTarget(s[p:end])
	}
	l.pos = end + 2
}

// skipVersion skips the server version (5 or 6 digits) that may open an
// executable comment.
func skipVersion(s []byte, p int) int {
	n := 0
	for p+n < len(s) && n < 7 && s[p+n] >= '0' && s[p+n] <= '9' {
		n++
	}
	if n == 5 || n == 6 {
		return p + n
	}
	return p
}

// token reads the token that starts with c at l.pos into t.
func (l *lexer) token(t *token, c byte) {
	s := l.s
	start := l.pos
	switch {
	case c == '\'' || c == '"':
		l.quoted(t, tString, start)
		return
	case c == '`':
		l.quoted(t, tQuoted, start)
		t.kw = lookupKW(s[t.start:t.end])
		return
	case c == '@':
		l.variable(t)
		return
	case isIdentByte(c):
		end, digits, h := start, true, uint32(0)
		for end < len(s) && isIdentByte(s[end]) {
			if s[end] < '0' || s[end] > '9' {
				digits = false
			}
			h = foldHash(h, s[end])
			end++
		}
		l.pos = end
		if digits {
			t.set(tNumber, kwNone, 0, start, end)
		} else {
			t.set(tWord, lookupKWHash(s[start:end], h), 0, start, end)
		}
		return
	case c == ':' && start+1 < len(s) && s[start+1] == '=':
		l.pos += 2
		t.set(tAssign, kwNone, 0, start, start+2)
		return
	}
	l.pos++
	t.set(tPunct, kwNone, c, start, start+1)
}

// quoted reads the string or quoted name whose opening quote is at open.
// Single- and double-quoted strings take backslash escapes; every kind
// takes its quote doubled.
func (l *lexer) quoted(t *token, kind tokKind, open int) {
	s := l.s
	q := s[open]
	escapes := q != '`'
	for i := open + 1; i < len(s); {
		j := bytes.IndexByte(s[i:], q)
		if j < 0 {
			break
		}
		if escapes {
			if k := bytes.IndexByte(s[i:i+j], '\\'); k >= 0 {
				i += k + 2 // the escaped byte may be the quote
				continue
			}
		}
		i += j
		if i+1 < len(s) && s[i+1] == q {
			i += 2
			continue
		}
		l.pos = i + 1
		t.set(kind, kwNone, 0, open+1, i)
		return
	}
	l.unclosed = true
	l.pos = len(s)
	t.set(kind, kwNone, 0, open+1, len(s))
}

// variable reads a user variable (@name, @'name', @"name", @`name`) or a
// system variable (@@name, @@session.name ...) at l.pos. A lone '@' is
// punctuation.
func (l *lexer) variable(t *token) {
	s := l.s
	p := l.pos + 1
	sys := p < len(s) && s[p] == '@'
	if sys {
		p++
	} else if p < len(s) && (s[p] == '\'' || s[p] == '"' || s[p] == '`') {
		l.quoted(t, tVar, p)
		return
	}
	start, name := p, p
	for p < len(s) && (isIdentByte(s[p]) || s[p] == '.') {
		if s[p] == '.' {
			name = p + 1
		}
		p++
	}
	if p == start {
		l.pos++
		t.set(tPunct, kwNone, '@', l.pos-1, l.pos)
		return
	}
	l.pos = p
	t.set(tVar, kwNone, 0, name, p)
	t.sys = sys
}

// isIdentByte reports whether c may be part of an unquoted identifier:
// ASCII letters, digits, '_', '$' and every byte of a multi-byte UTF-8
// character.
func isIdentByte(c byte) bool { return isWordByte(c) || c >= 0x80 }
