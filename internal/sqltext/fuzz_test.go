package sqltext_test

import (
	"testing"

	"obgate/internal/sqltext"
)

// FuzzSQLText feeds any text to String and Ident: a literal always reads
// back as the text and leaves the statement's shape alone under both
// readings of a backslash; an identifier is one name (or refused, for
// an empty text or one with a NUL); CheckName never panics.
func FuzzSQLText(f *testing.F) {
	for _, s := range hostile {
		f.Add(s)
	}
	f.Add("")
	f.Add("test")
	f.Fuzz(func(t *testing.T, s string) {
		checkLiteral(t, s)
		checkIdent(t, s)
		for k := sqltext.Tenant; k <= sqltext.Routine; k++ {
			_ = sqltext.CheckName(k, s)
		}
	})
}
