package sqltext

import (
	"errors"
	"strconv"
	"strings"
	"unicode/utf8"
)

// Kind is the kind of object a name that obgate looks up belongs to.
type Kind uint8

// Kinds of names.
const (
	Tenant Kind = iota + 1
	Database
	Table
	Package
	Routine
)

var kindNames = [...]string{Tenant: "tenant", Database: "database", Table: "table", Package: "package", Routine: "routine"}

func (k Kind) String() string {
	if int(k) < len(kindNames) && kindNames[k] != "" {
		return kindNames[k]
	}
	return "unknown"
}

// MaxChars is the longest name, in characters, that an OceanBase object of
// kind k can have (0 for an unknown kind). OceanBase counts identifier
// lengths in characters in a MySQL tenant (ObSQLUtils::check_ident_name,
// src/sql/ob_sql_utils.cpp: "char semantics for MySQL mode, and byte
// semantics for Oracle mode"; a byte count is never smaller). The limits,
// from OceanBase 4.x:
//
//   - tenant: OB_MAX_TENANT_NAME_LENGTH = 64 (deps/oblib/src/lib/ob_define.h)
//   - database: OB_MAX_DATABASE_NAME_LENGTH = 128 (deps/oblib/src/lib/ob_define.h)
//   - table: OB_MAX_TABLE_NAME_LENGTH = 256 (deps/oblib/src/lib/ob_define.h).
//     A user names tables of at most OB_MAX_USER_TABLE_NAME_LENGTH_MYSQL =
//     64 characters in a MySQL tenant and OB_MAX_USER_TABLE_NAME_LENGTH_ORACLE
//     = 128 in an Oracle one (same file), but a SELECT or INSERT may name
//     an index table, whose name carries a prefix, up to
//     OB_MAX_TABLE_NAME_LENGTH (ObSQLUtils::check_and_convert_table_name,
//     src/sql/ob_sql_utils.cpp); and obgate does not know a tenant's mode
//     when it checks.
//   - package: OB_MAX_PACKAGE_NAME_LENGTH = 128 (src/share/ob_define.h)
//   - routine: OB_MAX_ROUTINE_NAME_LENGTH = 128 (src/share/ob_define.h)
func MaxChars(k Kind) int {
	switch k {
	case Tenant:
		return 64
	case Database, Package, Routine:
		return 128
	case Table:
		return 256
	}
	return 0
}

// ErrRefused is what every error of CheckName matches (errors.Is).
var ErrRefused = errors.New("name refused")

// NameError says why CheckName refused a name. The name itself is left
// out: it is a client's text, which the caller may show or log as it
// sees fit.
type NameError struct {
	Kind   Kind
	Reason string
}

func (e *NameError) Error() string { return e.Kind.String() + " name refused: " + e.Reason }

// Is makes every NameError match ErrRefused.
func (e *NameError) Is(target error) bool { return target == ErrRefused }

// CheckName reports whether s can be the name of an OceanBase object of
// kind k; a name that cannot is refused before any SQL is built with it,
// so that no query obgate runs as proxyro@sys carries a name that could
// only be an attempt on that query. The server still answers the client's
// own statement, and with it the bad name. A name is refused when it is:
//
//   - empty, except a package name (a routine outside any package has an
//     empty package_name): no tenant, database, table or routine is
//     unnamed;
//   - holding a NUL byte: no server accepts U+0000 in an identifier;
//   - not valid UTF-8: OceanBase keeps names in utf8mb4 (its parser
//     converts names from other connection character sets first), so no
//     object is named by bytes that are not UTF-8; a client in another
//     character set sends such bytes, which obgate does not convert and
//     which could not match a name in the views anyway;
//   - longer than MaxChars(k) characters: the server refuses to create such
//     an object, so a lookup can find nothing, and a bound keeps a client
//     from making obgate send megabyte queries.
func CheckName(k Kind, s string) error {
	limit := MaxChars(k)
	switch {
	case limit == 0:
		return &NameError{Kind: k, Reason: "unknown kind of name"}
	case s == "":
		if k == Package {
			return nil
		}
		return &NameError{Kind: k, Reason: "empty"}
	case strings.IndexByte(s, 0) >= 0:
		return &NameError{Kind: k, Reason: "holds a NUL byte"}
	case !utf8.ValidString(s):
		return &NameError{Kind: k, Reason: "not valid UTF-8"}
	case len(s) > limit && utf8.RuneCountInString(s) > limit:
		return &NameError{Kind: k, Reason: "longer than " + strconv.Itoa(limit) + " characters"}
	}
	return nil
}
