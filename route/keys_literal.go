package route

import "math"

// lit is a value read from the statement: a Value, whose string may lie
// in the scratch buffer instead (at [aoff, aoff+alen)).
type lit struct {
	v          Value
	inArena    bool
	aoff, alen int
}

// litStatus is how reading a value went.
type litStatus uint8

const (
	litOK         litStatus = iota
	litNot                  // not a literal: an expression or a name
	litUnresolved           // a placeholder without a known value
	litTooLong              // a string that does not fit the scratch buffer
)

// value reads the literal or placeholder at the current token and moves
// past it: [+|-] number, 'string' or "string" (with escapes), X'hex',
// N'string', _utf8mb4/_utf8/_binary 'string', NULL, TRUE, FALSE, ?. On
// litNot the scanner may have moved; the caller skips the conjunct.
func (st *calcState) value() (lit, litStatus) {
	t := &st.tok
	neg := false
	if t.kind == tPunct && (t.c == '-' || t.c == '+') {
		neg = t.c == '-'
		st.next()
		if !st.atNumber() {
			return lit{}, litNot
		}
	}
	switch {
	case st.atNumber():
		return st.number(neg)
	case t.kind == tString:
		return st.str()
	case t.kind == tPunct && t.c == '?':
		i := st.param
		st.next()
		if st.params == nil {
			return lit{}, litUnresolved
		}
		v, ok := st.params.Param(i)
		if !ok || v.Kind == ValUnknown || v.Kind > ValTime {
			return lit{}, litUnresolved
		}
		return lit{v: v}, litOK
	case t.kind == tWord:
		w := st.text()
		switch {
		case EqualFold(w, "NULL"):
			st.next()
			return lit{v: Value{Kind: ValNull}}, litOK
		case EqualFold(w, "TRUE"):
			st.next()
			return lit{v: Value{Kind: ValInt, Int: 1}}, litOK
		case EqualFold(w, "FALSE"):
			st.next()
			return lit{v: Value{Kind: ValInt}}, litOK
		}
		end := t.end
		hexStr := EqualFold(w, "X")
		plain := EqualFold(w, "N")
		intro := EqualFold(w, "_UTF8MB4") || EqualFold(w, "_UTF8") || EqualFold(w, "_BINARY")
		if !hexStr && !plain && !intro {
			return lit{}, litNot
		}
		st.next()
		if t.kind != tString || ((hexStr || plain) && (t.start != end+1 || st.s[end] != '\'')) {
			return lit{}, litNot
		}
		if hexStr {
			return st.hexString()
		}
		return st.str()
	}
	return lit{}, litNot
}

// atNumber reports whether a number starts at the current token.
func (st *calcState) atNumber() bool {
	t := &st.tok
	switch t.kind {
	case tNumber:
		return true
	case tWord:
		return st.s[t.start] >= '0' && st.s[t.start] <= '9'
	case tPunct:
		return t.c == '.' && t.end < len(st.s) && isDigit(st.s[t.end])
	}
	return false
}

func isDigit(c byte) bool { return c >= '0' && c <= '9' }

func isHexDigit(c byte) bool { return isDigit(c) || (c|0x20 >= 'a' && c|0x20 <= 'f') }

// number reads the number starting at the current token from the raw
// text (the lexer splits "1.5" and "1e+5") and moves past it. Integers
// are ValInt (ValUint above the int64 range), hex and bit numbers ValUint,
// decimals their text; a float with an exponent is not read.
func (st *calcState) number(neg bool) (lit, litStatus) {
	s := st.s
	start := st.tok.start
	p := start
	var l lit
	if s[p] == '0' && p+1 < len(s) && (s[p+1]|0x20 == 'x' || s[p+1]|0x20 == 'b') {
		base := uint64(16)
		if s[p+1]|0x20 == 'b' {
			base = 2
		}
		q := p + 2
		var u uint64
		for ; q < len(s) && isHexDigit(s[q]); q++ {
			d := uint64(s[q] - '0')
			if !isDigit(s[q]) {
				d = uint64(s[q]|0x20-'a') + 10
			}
			if d >= base || u > (math.MaxUint64-d)/base {
				return l, litNot
			}
			u = u*base + d
		}
		if q == p+2 || neg || (q < len(s) && isIdentByte(s[q])) {
			return l, litNot
		}
		l.v = Value{Kind: ValUint, Int: int64(u), hex: true}
		return l, st.resume(q)
	}
	q := p
	for q < len(s) && isDigit(s[q]) {
		q++
	}
	intEnd := q
	if q < len(s) && s[q] == '.' {
		q++
		for q < len(s) && isDigit(s[q]) {
			q++
		}
	}
	if q < len(s) && (s[q]|0x20 == 'e' || isIdentByte(s[q])) {
		return l, litNot // an exponent, or a name starting with digits
	}
	if intEnd == q && intEnd > start {
		if u, ok := parseDecimal(s[start:q], math.MaxUint64); ok {
			switch {
			case neg && u <= 1<<63:
				l.v = Value{Kind: ValInt, Int: int64(-u)}
				return l, st.resume(q)
			case !neg && u <= math.MaxInt64:
				l.v = Value{Kind: ValInt, Int: int64(u)}
				return l, st.resume(q)
			case !neg:
				l.v = Value{Kind: ValUint, Int: int64(u)}
				return l, st.resume(q)
			}
		}
	}
	// A decimal (or an integer too long for 64 bits): its text.
	if !neg {
		l.v = Value{Kind: ValString, Str: s[start:q]}
		return l, st.resume(q)
	}
	off := st.arenaPut([]byte{'-'})
	if off < 0 || st.arenaPut(s[start:q]) < 0 {
		return l, litTooLong
	}
	l.v.Kind, l.inArena, l.aoff, l.alen = ValString, true, off, q-start+1
	return l, st.resume(q)
}

// resume moves the lexer to p and reads the token there.
func (st *calcState) resume(p int) litStatus {
	st.lx.pos = p
	st.next()
	return litOK
}

// str reads the string token at the current token and moves past it.
// A string without escapes is borrowed from the statement; one with
// escapes is unescaped into the scratch buffer.
func (st *calcState) str() (lit, litStatus) {
	t := &st.tok
	s := st.s
	body := s[t.start:t.end]
	q := s[t.start-1]
	var l lit
	plain := true
	for _, c := range body {
		if c == '\\' || c == q {
			plain = false
			break
		}
	}
	if plain {
		l.v = Value{Kind: ValString, Str: body}
		st.next()
		return l, litOK
	}
	off := st.atop
	n, ok := unescapeInto(st.arena[off:], body, q)
	if !ok {
		return l, litTooLong
	}
	st.atop += n
	l.v.Kind, l.inArena, l.aoff, l.alen = ValString, true, off, n
	st.next()
	return l, litOK
}

// unescapeInto writes the value of a string body (as between its quotes
// q) into dst and returns its length; false when dst is too short.
func unescapeInto(dst, body []byte, q byte) (int, bool) {
	n := 0
	put := func(c byte) bool {
		if n == len(dst) {
			return false
		}
		dst[n] = c
		n++
		return true
	}
	for i := 0; i < len(body); i++ {
		c := body[i]
		switch {
		case c == '\\' && i+1 < len(body):
			i++
			e := body[i]
			switch e {
			case '0':
				c = 0
			case 'b':
				c = '\b'
			case 'n':
				c = '\n'
			case 'r':
				c = '\r'
			case 't':
				c = '\t'
			case 'Z':
				c = 26
			case '%', '_': // kept with the backslash
				if !put('\\') {
					return n, false
				}
				c = e
			default:
				c = e
			}
		case c == q && i+1 < len(body) && body[i+1] == q:
			i++
		}
		if !put(c) {
			return n, false
		}
	}
	return n, true
}

// hexString reads the body of X'...' at the current string token into
// the scratch buffer.
func (st *calcState) hexString() (lit, litStatus) {
	body := st.s[st.tok.start:st.tok.end]
	var l lit
	if len(body)%2 != 0 {
		return l, litNot
	}
	off := st.atop
	n, ok := hexInto(st.arena[off:], body)
	if !ok {
		if n < 0 {
			return l, litNot
		}
		return l, litTooLong
	}
	st.atop += n
	l.v.Kind, l.v.hex, l.inArena, l.aoff, l.alen = ValString, true, true, off, n
	st.next()
	return l, litOK
}

// hexInto decodes pairs of hex digits into dst. It returns -1, false on
// a bad digit and false when dst is too short.
func hexInto(dst, body []byte) (int, bool) {
	n := 0
	for i := 0; i+1 < len(body); i += 2 {
		if !isHexDigit(body[i]) || !isHexDigit(body[i+1]) {
			return -1, false
		}
		if n == len(dst) {
			return n, false
		}
		dst[n] = hexVal(body[i])<<4 | hexVal(body[i+1])
		n++
	}
	return n, true
}

func hexVal(c byte) byte {
	if isDigit(c) {
		return c - '0'
	}
	return c | 0x20 - 'a' + 10
}
