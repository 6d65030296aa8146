package route

import "bytes"

// readTarget reads ODP's routing comment from the body of a /* ... */
// comment: TARGET_DB_SERVER = 'addresses' (the name in any case, blanks
// around '=' allowed, the value in single or double quotes or unquoted up
// to a blank or the end of the comment). It returns the value, borrowed
// from c, or nil.
func readTarget(c []byte) []byte {
	const name = "TARGET_DB_SERVER"
	for i := 0; i+len(name) <= len(c); i++ {
		if (i > 0 && isIdentByte(c[i-1])) || !EqualFold(c[i:i+len(name)], name) {
			continue
		}
		p := i + len(name)
		if p < len(c) && isIdentByte(c[p]) {
			continue
		}
		for p < len(c) && isBlank(c[p]) {
			p++
		}
		if p == len(c) || c[p] != '=' {
			continue
		}
		p++
		for p < len(c) && isBlank(c[p]) {
			p++
		}
		if p == len(c) {
			return nil
		}
		if q := c[p]; q == '\'' || q == '"' {
			for e := p + 1; e < len(c); e++ {
				if c[e] == q {
					if e == p+1 {
						return nil
					}
					return c[p+1 : e : e]
				}
			}
			return nil
		}
		e := p
		for e < len(c) && !isBlank(c[e]) {
			e++
		}
		return c[p:e:e]
	}
	return nil
}

// UseTarget returns the database a USE statement names, or false when sql
// is not one plain USE: the name may be backquoted (a doubled backquote
// stands for one) and followed by a semicolon and blanks or comments.
func UseTarget(sql []byte) (string, bool) {
	l := lexer{s: sql}
	var t token
	l.next(&t)
	if t.kind != tWord || !EqualFold(sql[t.start:t.end], "USE") {
		return "", false
	}
	l.next(&t)
	var name string
	switch t.kind {
	case tWord, tNumber:
		name = string(sql[t.start:t.end])
	case tQuoted:
		name = string(bytes.ReplaceAll(sql[t.start:t.end], []byte("``"), []byte("`")))
	default:
		return "", false
	}
	l.next(&t)
	if t.is(';') {
		l.next(&t)
	}
	if t.kind != tEOF || l.unclosed || name == "" {
		return "", false
	}
	return name, true
}
