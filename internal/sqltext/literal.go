package sqltext

import (
	"encoding/hex"
	"unicode/utf8"
)

// String returns a SQL string literal that means exactly s, whatever the
// sql_mode of the session that parses it and whatever its connection
// character set. See AppendString.
func String(s string) string {
	return string(AppendString(make([]byte, 0, len(s)+2), s))
}

// AppendString appends the literal String(s) to dst and returns the
// extended slice.
//
// The literal takes one of three forms, the first that fits:
//
//   - 'text' with every ' doubled, for valid UTF-8 without a backslash, a
//     NUL or a control byte other than tab, newline and carriage return.
//     Doubling is the one quote escape that reads the same with and without
//     NO_BACKSLASH_ESCAPES, and with no backslash in the text the mode
//     cannot matter. In every character set a client may use (UTF-8,
//     latin1, GBK, GB18030, Big5, SJIS, ...) the byte ' is never the second
//     byte of a multi-byte character, so no lead byte can swallow a quote
//     and end the literal early or late. This is ODP's form, so an ordinary
//     name gives ODP's statement byte for byte.
//   - CONVERT(X'hex' USING utf8mb4), for valid UTF-8 holding a backslash,
//     NUL or another control byte. A backslash is an escape or an ordinary
//     character depending on NO_BACKSLASH_ESCAPES, which obgate does not
//     control on every session it writes to; in hexadecimal it is neither.
//     NUL ends strings in C code on the way, and control bytes corrupt
//     logs and terminals that show the statement. CONVERT gives the bytes
//     the utf8mb4 character set, independent of the connection's, so the
//     value compares as text, as the quoted form does.
//   - X'hex', for text that is not valid UTF-8 (a GBK lead byte before a
//     quote, say). Such bytes are not text in utf8mb4: CONVERT would turn
//     them into '?' (MariaDB and OceanBase warn and replace), so they go as
//     the binary string they are, which keeps every byte.
func AppendString(dst []byte, s string) []byte {
	switch literalForm(s) {
	case formHexBinary:
		dst = append(dst, "X'"...)
		dst = hex.AppendEncode(dst, []byte(s))
		return append(dst, '\'')
	case formHexText:
		dst = append(dst, "CONVERT(X'"...)
		dst = hex.AppendEncode(dst, []byte(s))
		return append(dst, "' USING utf8mb4)"...)
	}
	dst = append(dst, '\'')
	for i := 0; i < len(s); i++ {
		if s[i] == '\'' {
			dst = append(dst, '\'')
		}
		dst = append(dst, s[i])
	}
	return append(dst, '\'')
}

// The literal forms of AppendString.
const (
	formQuoted = iota
	formHexText
	formHexBinary
)

// literalForm chooses the form AppendString writes s in.
func literalForm(s string) int {
	if !utf8.ValidString(s) {
		return formHexBinary
	}
	for i := 0; i < len(s); i++ {
		if needsHex(s[i]) {
			return formHexText
		}
	}
	return formQuoted
}

// needsHex reports whether byte c keeps a valid UTF-8 string out of the
// quoted form: a backslash, NUL, DEL or a C0 control byte other than tab,
// newline and carriage return (ordinary in values, harmless in a quoted
// string under every mode).
func needsHex(c byte) bool {
	switch {
	case c == '\\', c == 0x7f:
		return true
	case c < 0x20:
		return c != '\t' && c != '\n' && c != '\r'
	}
	return false
}
