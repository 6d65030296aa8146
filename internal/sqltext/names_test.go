package sqltext_test

import (
	"errors"
	"strings"
	"testing"

	"obgate/internal/sqltext"
)

func TestCheckName(t *testing.T) {
	for _, c := range []struct {
		kind sqltext.Kind
		name string
		why  string // "" when accepted
	}{
		{sqltext.Tenant, "test", ""},
		{sqltext.Tenant, "sys", ""},
		{sqltext.Table, `x\`, ""},
		{sqltext.Table, `x\' OR 1=1 -- `, ""},
		{sqltext.Table, "x'", ""},
		{sqltext.Table, "订单", ""},
		{sqltext.Package, "", ""},
		{sqltext.Tenant, strings.Repeat("t", 64), ""},
		{sqltext.Tenant, strings.Repeat("中", 64), ""}, // 192 bytes, 64 characters
		{sqltext.Tenant, strings.Repeat("t", 65), "tenant name refused: longer than 64 characters"},
		{sqltext.Database, strings.Repeat("d", 128), ""},
		{sqltext.Database, strings.Repeat("d", 129), "database name refused: longer than 128 characters"},
		{sqltext.Table, strings.Repeat("表", 256), ""},
		{sqltext.Table, strings.Repeat("t", 257), "table name refused: longer than 256 characters"},
		{sqltext.Package, strings.Repeat("p", 129), "package name refused: longer than 128 characters"},
		{sqltext.Routine, strings.Repeat("r", 129), "routine name refused: longer than 128 characters"},
		{sqltext.Tenant, "", "tenant name refused: empty"},
		{sqltext.Database, "", "database name refused: empty"},
		{sqltext.Table, "", "table name refused: empty"},
		{sqltext.Routine, "", "routine name refused: empty"},
		{sqltext.Table, "a\x00b", "table name refused: holds a NUL byte"},
		{sqltext.Table, "\xff\xfe", "table name refused: not valid UTF-8"},
		{sqltext.Table, "x\xbf'", "table name refused: not valid UTF-8"},
		{sqltext.Tenant, "\xc0\xa7", "tenant name refused: not valid UTF-8"}, // overlong '
		{sqltext.Kind(0), "x", "unknown name refused: unknown kind of name"},
	} {
		err := sqltext.CheckName(c.kind, c.name)
		switch {
		case c.why == "" && err != nil:
			t.Errorf("CheckName(%v, %q): %v, want accepted", c.kind, c.name, err)
		case c.why != "" && (err == nil || err.Error() != c.why || !errors.Is(err, sqltext.ErrRefused)):
			t.Errorf("CheckName(%v, %.20q): %v, want %q matching ErrRefused", c.kind, c.name, err, c.why)
		}
	}
}
