package sqltext

import (
	"errors"
	"strings"
)

// Errors of Ident.
var (
	ErrEmptyIdent = errors.New("sqltext: empty identifier")
	ErrNULIdent   = errors.New("sqltext: identifier holds a NUL byte")
)

// Ident returns s as a backquoted identifier, with every backquote
// doubled: `s`. It refuses an empty s (MySQL, MariaDB and OceanBase reject
// an empty quoted name) and one holding a NUL byte (no server accepts
// U+0000 in a name, and C code on the way would cut the statement there).
//
// The result keeps its shape in any connection character set as long as s
// is text in that character set, as a name a server reported to the
// session always is: a backquote is a valid trailing byte in GBK, Big5 and
// SJIS, so bytes that are not text there could pair with a following
// backquote.
func Ident(s string) (string, error) {
	if s == "" {
		return "", ErrEmptyIdent
	}
	if strings.IndexByte(s, 0) >= 0 {
		return "", ErrNULIdent
	}
	var b strings.Builder
	b.Grow(len(s) + 2)
	b.WriteByte('`')
	for i := 0; i < len(s); i++ {
		if s[i] == '`' {
			b.WriteByte('`')
		}
		b.WriteByte(s[i])
	}
	b.WriteByte('`')
	return b.String(), nil
}
