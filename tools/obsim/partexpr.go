package obsim

import (
	"fmt"
	"math"
	"regexp"
	"strconv"
	"strings"

	"obgate/internal/obpart"
)

// partExpr is the expression a HASH, RANGE or LIST level partitions by
// when it is not the bare column: YEAR(c), TO_DAYS(c) on a DATE or
// DATETIME, UNIX_TIMESTAMP(c) on a TIMESTAMP, c DIV n and c MOD n (or
// c % n) on an integer. obsim evaluates it to place rows, as the server
// does; the views report it in part_expr as written.
type partExpr struct {
	text string
	op   string // YEAR, TO_DAYS, UNIX_TIMESTAMP, DIV, MOD
	n    int64  // the divisor of DIV and MOD
}

var (
	exprCallRE = regexp.MustCompile("^(?i)\\s*(year|to_days|unix_timestamp)\\s*\\(\\s*`?(\\w+)`?\\s*\\)\\s*$")
	exprOpRE   = regexp.MustCompile("^(?i)\\s*`?(\\w+)`?\\s*(\\s+div\\s+|\\s+mod\\s+|%)\\s*(\\d+)\\s*$")
)

// parsePartExpr reads the expression text of a level over column c.
func parsePartExpr(text string, c *column) (*partExpr, error) {
	e := &partExpr{text: text}
	col := ""
	if m := exprCallRE.FindStringSubmatch(text); m != nil {
		e.op, col = strings.ToUpper(m[1]), m[2]
		want := colDate
		switch {
		case e.op == "UNIX_TIMESTAMP":
			want = colTimestamp
		case c.class == colDatetime:
			want = colDatetime
		}
		if c.class != want {
			return nil, fmt.Errorf("%s of column %s of the wrong type", e.op, c.name)
		}
	} else if m := exprOpRE.FindStringSubmatch(text); m != nil {
		col, e.op = m[1], strings.ToUpper(strings.TrimSpace(m[2]))
		if e.op == "%" {
			e.op = "MOD"
		}
		n, err := strconv.ParseInt(m[3], 10, 64)
		if err != nil || n <= 0 {
			return nil, fmt.Errorf("bad divisor in %q", text)
		}
		e.n = n
		if c.class != colInt && c.class != colUint {
			return nil, fmt.Errorf("%s of a column that is not an integer", e.op)
		}
	} else {
		return nil, fmt.Errorf("partition expression %q: obsim evaluates YEAR, TO_DAYS, UNIX_TIMESTAMP, DIV and MOD", text)
	}
	if !strings.EqualFold(col, c.name) {
		return nil, fmt.Errorf("partition expression %q is not of column %s", text, c.name)
	}
	return e, nil
}

// eval computes the expression on a value cast to its column; NULL gives
// NULL.
func (e *partExpr) eval(v value) value {
	if v.kind == valNull {
		return v
	}
	switch e.op {
	case "DIV", "MOD":
		n := v.i
		if v.kind == valUint {
			if v.u > math.MaxInt64 {
				if e.op == "DIV" {
					return value{kind: valInt, i: int64(v.u / uint64(e.n))}
				}
				return value{kind: valInt, i: int64(v.u % uint64(e.n))}
			}
			n = int64(v.u)
		}
		if e.op == "DIV" {
			return value{kind: valInt, i: n / e.n} // DIV truncates toward zero
		}
		return value{kind: valInt, i: n % e.n}
	case "UNIX_TIMESTAMP":
		us := v.i
		s := us / 1000000
		if us%1000000 != 0 && us < 0 {
			s--
		}
		return value{kind: valInt, i: s}
	}
	days := int32(v.i)
	if v.kind == valTime {
		d := v.i / (86400 * 1000000)
		if v.i%(86400*1000000) != 0 && v.i < 0 {
			d--
		}
		days = int32(d)
	}
	if e.op == "YEAR" {
		return value{kind: valInt, i: int64(obpart.YearOf(days))}
	}
	return value{kind: valInt, i: obpart.ToDays(days)}
}
