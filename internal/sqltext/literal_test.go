package sqltext_test

import (
	"strings"
	"testing"

	"obgate/internal/sqltext"
	"obgate/internal/sqltext/sqltexttest"
)

// hostile are texts that break a literal written by quote doubling alone,
// or by backslash escaping alone, in one sql_mode or the other, plus the
// bytes that need the hexadecimal forms.
var hostile = []string{
	`x\`,
	`x\' OR 1=1 -- `,
	`x'`,
	`\'`,
	`'`,
	`''`,
	`\\'`,
	"a\x00b",
	"\xff\xfe",
	"x\xbf'",        // GBK: 0xbf before a quote
	"x\xbf\\'",      // GBK: 0xbf 0x5c is one character, the old backslash trick
	"\xe4\xb8\xad'", // valid UTF-8 before a quote
	"a\x1ab",
	"tab\tnl\ncr\r",
	"\x7f",
	`x' UNION SELECT * FROM oceanbase.__all_user #`,
	"x'/*",
	"x*/'",
	"`x`",
	`x" OR "1"="1`,
	strings.Repeat(`\'`, 300),
}

// TestStringForms pins the three forms: ODP's quoted form for ordinary
// text, CONVERT(X'…' USING utf8mb4) for text with a backslash or a
// control byte, X'…' for bytes that are not UTF-8.
func TestStringForms(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"", "''"},
		{"test", "'test'"},
		{"__all_dummy", "'__all_dummy'"},
		{"it's", "'it''s'"},
		{"中文", "'中文'"},
		{"a\nb\tc\rd", "'a\nb\tc\rd'"},
		{`x\`, "CONVERT(X'785c' USING utf8mb4)"},
		{`x\' OR 1=1 -- `, "CONVERT(X'785c27204f5220313d31202d2d20' USING utf8mb4)"},
		{"a\x00b", "CONVERT(X'610062' USING utf8mb4)"},
		{"a\x1ab", "CONVERT(X'611a62' USING utf8mb4)"},
		{"\x7f", "CONVERT(X'7f' USING utf8mb4)"},
		{"x\xbf'", "X'78bf27'"},
		{"\xff", "X'ff'"},
	} {
		if got := sqltext.String(c.in); got != c.want {
			t.Errorf("String(%q) = %s, want %s", c.in, got, c.want)
		}
		if got := string(sqltext.AppendString([]byte("= "), c.in)); got != "= "+c.want {
			t.Errorf("AppendString(%q) = %s, want = %s", c.in, got, c.want)
		}
	}
}

// TestStringStaysOneLiteral checks, for every hostile text, that the
// literal is one string token meaning the text, under both readings of a
// backslash, inside a statement whose other tokens do not change.
func TestStringStaysOneLiteral(t *testing.T) {
	for _, s := range append(hostile, "plain", "") {
		checkLiteral(t, s)
	}
}

// checkLiteral fails t unless String(s), put twice into a statement,
// leaves the statement's shape as a benign value does, and reads back as s.
func checkLiteral(t *testing.T, s string) {
	t.Helper()
	stmt := func(v string) string {
		return "SELECT /*+READ_CONSISTENCY(WEAK)*/ * FROM t WHERE a = " + sqltext.String(v) + " AND b = " + sqltext.String(v) + "LIMIT 1"
	}
	for _, esc := range []bool{true, false} {
		want := sqltexttest.Shape(sqltexttest.Tokens(stmt("benign"), esc))
		toks := sqltexttest.Tokens(stmt(s), esc)
		if got := sqltexttest.Shape(toks); got != want {
			t.Fatalf("String(%q), backslash escapes %v: the statement reads\n %s\nwant\n %s", s, esc, got, want)
		}
		if vals := sqltexttest.Values(toks); len(vals) != 2 || vals[0] != s || vals[1] != s {
			t.Fatalf("String(%q), backslash escapes %v: the literals read %q", s, esc, vals)
		}
	}
}

// TestOldQuotingBreaks shows what the checks above catch: doubling quotes
// alone, as route's quoteSQL did, lets a backslash end the literal in the
// default sql_mode.
func TestOldQuotingBreaks(t *testing.T) {
	old := func(s string) string { return "'" + strings.ReplaceAll(s, "'", "''") + "'" }
	stmt := func(v string) string { return "SELECT * FROM t WHERE a = " + old(v) + " AND b = 1" }
	want := sqltexttest.Shape(sqltexttest.Tokens(stmt("benign"), true))
	if got := sqltexttest.Shape(sqltexttest.Tokens(stmt(`x\' OR 1=1 -- `), true)); got == want {
		t.Fatalf("quote doubling kept the shape of a backslash attack: %s", got)
	}
}
