package sqltext_test

import (
	"errors"
	"testing"

	"obgate/internal/sqltext"
	"obgate/internal/sqltext/sqltexttest"
)

func TestIdent(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"a", "`a`"},
		{"a b", "`a b`"},
		{"a`b", "`a``b`"},
		{"`", "````"},
		{`x\`, "`x\\`"},
		{"中", "`中`"},
	} {
		got, err := sqltext.Ident(c.in)
		if err != nil || got != c.want {
			t.Errorf("Ident(%q) = %s, %v; want %s", c.in, got, err, c.want)
		}
	}
	if _, err := sqltext.Ident(""); !errors.Is(err, sqltext.ErrEmptyIdent) {
		t.Errorf("Ident(\"\"): %v, want ErrEmptyIdent", err)
	}
	if _, err := sqltext.Ident("a\x00b"); !errors.Is(err, sqltext.ErrNULIdent) {
		t.Errorf("Ident(a NUL b): %v, want ErrNULIdent", err)
	}
}

// TestIdentStaysOneName checks that every hostile text stays one name,
// as a user variable and as a column.
func TestIdentStaysOneName(t *testing.T) {
	for _, s := range append(hostile, "plain", "`", "``x`") {
		checkIdent(t, s)
	}
}

// checkIdent fails t unless Ident(s) is one name in a statement (or s is
// one Ident refuses).
func checkIdent(t *testing.T, s string) {
	t.Helper()
	id, err := sqltext.Ident(s)
	if err != nil {
		if s != "" && !containsNUL(s) {
			t.Fatalf("Ident(%q) refused: %v", s, err)
		}
		return
	}
	benign, _ := sqltext.Ident("benign")
	stmt := func(id string) string { return "SET @" + id + " = 1, " + id + " = 2" }
	for _, esc := range []bool{true, false} {
		want := sqltexttest.Tokens(stmt(benign), esc)
		got := sqltexttest.Tokens(stmt(id), esc)
		if sqltexttest.Shape(got) != sqltexttest.Shape(want) {
			t.Fatalf("Ident(%q): the statement reads %s, want %s", s, sqltexttest.Shape(got), sqltexttest.Shape(want))
		}
		// SET @`s` = 1, `s` = 2: the variable, then the name.
		if got[1].Kind != sqltexttest.Var || got[1].Value != s || got[5].Kind != sqltexttest.Ident || got[5].Value != s {
			t.Fatalf("Ident(%q): names read %q and %q", s, got[1].Value, got[5].Value)
		}
	}
}

func containsNUL(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] == 0 {
			return true
		}
	}
	return false
}
