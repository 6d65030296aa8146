package route

import (
	"strings"

	"obgate/internal/obpart"
)

// A level's partitioning expression (part_expr, sub_part_expr of
// __all_virtual_proxy_partition_info): OceanBase hashes the key values of
// a KEY level, and compares those of a RANGE/LIST COLUMNS level, in the
// order of the expression, while the view's rows come in the order of the
// columns in the table (part_key_idx). ODP splits the expression at commas
// and places each key column by its position there (obproxy
// src/obproxy/proxy/route/ob_route_utils.cpp, split_part_expr and
// fetch_part_info); so does obgate.
//
// An element that is not a bare column is an expression the server
// evaluates (HASH(id DIV 10), RANGE(YEAR(d))): ODP would apply the
// partition function to the raw column and route the statement to a wrong
// tablet. obgate computes only a few common functions of one column on
// literal keys, where it computes them exactly as the server does, and
// leaves any other expression's level unknown.

// partFx is a function of the key column a HASH, RANGE or LIST level
// partitions by.
type partFx uint8

const (
	fxNone          partFx = iota // the bare column
	fxYear                        // YEAR(date or datetime column)
	fxToDays                      // TO_DAYS(date or datetime column)
	fxUnixTimestamp               // UNIX_TIMESTAMP(timestamp column)
)

var fxNames = [...]string{"", "YEAR", "TO_DAYS", "UNIX_TIMESTAMP"}

// partExprElem is one comma-separated element of a partitioning
// expression.
type partExprElem struct {
	col string // the column it reads; "" when it is not one obgate reads
	fx  partFx
}

// splitPartExpr splits a partitioning expression into its elements at
// the commas outside parentheses and quotes.
func splitPartExpr(expr string) []partExprElem {
	var out []partExprElem
	depth, start := 0, 0
	var quote byte
	for i := 0; i <= len(expr); i++ {
		if i < len(expr) {
			c := expr[i]
			switch {
			case quote != 0:
				if c == quote {
					quote = 0
				}
				continue
			case c == '`' || c == '\'' || c == '"':
				quote = c
				continue
			case c == '(':
				depth++
				continue
			case c == ')':
				depth--
				continue
			case c != ',' || depth != 0:
				continue
			}
		}
		out = append(out, parseExprElem(strings.TrimSpace(expr[start:i])))
		start = i + 1
	}
	return out
}

// parseExprElem reads one element: a column name, backquoted or not, or
// FUNC(column) for the functions of partFx.
func parseExprElem(e string) partExprElem {
	if name, ok := bareColumn(e); ok {
		return partExprElem{col: name}
	}
	open := strings.IndexByte(e, '(')
	if open <= 0 || !strings.HasSuffix(e, ")") {
		return partExprElem{}
	}
	fn := strings.ToUpper(strings.TrimSpace(e[:open]))
	name, ok := bareColumn(strings.TrimSpace(e[open+1 : len(e)-1]))
	if !ok {
		return partExprElem{}
	}
	for fx := fxYear; int(fx) < len(fxNames); fx++ {
		if fn == fxNames[fx] {
			return partExprElem{col: name, fx: fx}
		}
	}
	return partExprElem{}
}

// bareColumn reports whether e is one column name, and returns it without
// backquotes.
func bareColumn(e string) (string, bool) {
	if len(e) >= 2 && e[0] == '`' && e[len(e)-1] == '`' {
		inner := e[1 : len(e)-1]
		return inner, inner != "" && !strings.Contains(inner, "`")
	}
	digits := true
	for i := 0; i < len(e); i++ {
		if !isIdentByte(e[i]) {
			return "", false
		}
		digits = digits && isDigit(e[i])
	}
	return e, e != "" && !digits // "10" is a number, not a column
}

// suits reports whether fx may be applied to a column of class c (the
// server allows these functions on these types only).
func (fx partFx) suits(c colClass) bool {
	switch fx {
	case fxNone:
		return true
	case fxYear, fxToDays:
		return c == classDate || c == classDatetime
	}
	return c == classTimestamp
}

// apply evaluates fx on a key value cast to its column: an integer, or the
// value itself for fxNone, NULL and MAXVALUE.
func (fx partFx) apply(v kval) kval {
	if fx == fxNone || v.kind == kNull || v.kind == kMax {
		return v
	}
	var days int32
	switch v.kind {
	case kDate:
		days = int32(v.i)
	case kTime:
		days = int32(floorDiv(v.i, usecPerDay))
	default:
		return v
	}
	switch fx {
	case fxYear:
		return kval{kind: kInt, i: int64(obpart.YearOf(days))}
	case fxToDays:
		return kval{kind: kInt, i: obpart.ToDays(days)}
	}
	return kval{kind: kInt, i: floorDiv(v.i, 1000000)} // fxUnixTimestamp
}

const usecPerDay = 86400 * 1000000

func floorDiv(a, b int64) int64 {
	q := a / b
	if a%b != 0 && a < 0 {
		q--
	}
	return q
}
