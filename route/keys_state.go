package route

import "time"

// The state of one Calculate: a scanner over the statement and the key
// values found so far. It lives on Calculate's stack; nothing in it
// points into it (strings in its scratch buffer are held as offsets), so
// that it stays there.

const (
	maxEqValues   = 32  // equality values held at once, all key columns together
	arenaSize     = 512 // scratch bytes for unescaped strings and formatted integers
	maxCombos     = 64  // key tuples tried for one level of one evaluation
	maxGroupDepth = 16  // nested parentheses read inside a condition
)

// colCond is what the conditions read so far say of one key column.
type colCond struct {
	eq           bool  // an equality list was read: eqN values from pool[eqOff]
	eqOff, eqN   uint8 // (eqN 0: the lists contradict each other)
	hasLo, hasHi bool  // range bounds (used for RANGE levels)
	loInc, hiInc bool
	lo, hi       kval
	why          string // why a condition on the column was left unused
}

// conds are the key conditions of one evaluation. Copying it is a
// snapshot: pool values below top are never changed.
type conds struct {
	col [maxKeyCols]colCond
	top int
}

// calcState is one Calculate.
type calcState struct {
	d      *PartDesc
	s      []byte
	lx     lexer
	tok    token
	params Params
	tz     *time.Location // PartResult.TZ
	nParam int            // '?' read so far
	param  int            // the index of the last '?' read

	// The target table and what the statement says of it.
	table   TableRef
	found   int    // times the table was named
	alias   []byte // its alias, nil when none
	instDB  []byte // the database it was qualified with
	outer   bool   // an outer or natural join was read
	pnStart int    // PARTITION (names) of the table: the first name
	pnEnd   int
	pnCount int
	fixed   int  // the first-level partition PARTITION() chose, -1 when none
	named   bool // PARTITION() chose the tablet

	cond  conds
	pool  [maxEqValues]kval
	arena [arenaSize]byte
	atop  int

	tally   tally
	how     string // a verdict on the whole statement; overrides the tally
	explain bool
	keys    []string
	depth   int // group nesting
}

func (st *calcState) init(d *PartDesc, stmt []byte, table TableRef, params Params, explain bool, keys []string) {
	st.d, st.s, st.table, st.params = d, stmt, table, params
	st.lx = lexer{s: stmt}
	st.fixed = -1
	st.explain, st.keys = explain, keys
	st.next()
}

// next reads the next token, counting placeholders.
func (st *calcState) next() {
	st.lx.next(&st.tok)
	if st.tok.kind == tPunct && st.tok.c == '?' {
		st.param = st.nParam
		st.nParam++
	}
}

// text is the text of the current token.
func (st *calcState) text() []byte { return st.s[st.tok.start:st.tok.end] }

// word reports whether the current token is the unquoted word w (upper
// case), keyword or not.
func (st *calcState) word(w string) bool {
	return st.tok.kind == tWord && EqualFold(st.text(), w)
}

// isKW reports whether the current token is the unquoted keyword k.
func (st *calcState) isKW(k kw) bool { return st.tok.kind == tWord && st.tok.kw == k }

// punct reports whether the current token is the byte c.
func (st *calcState) punct(c byte) bool { return st.tok.kind == tPunct && st.tok.c == c }

// tableName reads [db.]name from the current token, which the caller has
// found can start a name. ok is false, and the state failed, when a dot
// is not followed by a name.
func (st *calcState) tableName() (db, name []byte, ok bool) {
	name = st.text()
	st.next()
	if st.punct('.') {
		st.next()
		if st.tok.kind != tWord && st.tok.kind != tQuoted {
			st.fail(HowStatement)
			return nil, nil, false
		}
		db, name = name, st.text()
		st.next()
	}
	return db, name, true
}

// isTarget reports whether [db.]name is the table being routed (an
// unqualified name, or a target without a database, matches any
// database).
func (st *calcState) isTarget(db, name []byte) bool {
	return foldEqual(name, st.table.Name) && (db == nil || len(st.table.DB) == 0 || foldEqual(db, st.table.DB))
}

// rawNext is the byte right after the current punctuation token, or 0.
func (st *calcState) rawNext() byte {
	if p := st.tok.end; p < len(st.s) {
		return st.s[p]
	}
	return 0
}

// fail gives the whole statement the verdict how (the first one counts).
func (st *calcState) fail(how string) {
	if st.how == "" {
		st.how = how
	}
}

// skipParens skips from the '(' at the current token to the token after
// its ')'.
func (st *calcState) skipParens() { st.skipClosing(0) }

// skipToClose skips to the token after the ')' that closes the
// parenthesis the scanner is in.
func (st *calcState) skipToClose() { st.skipClosing(1) }

// skipClosing skips to the token after the ')' that leaves no parenthesis
// open; open is how many are open before the current token (0 at a '('
// to skip, 1 inside a parenthesis).
func (st *calcState) skipClosing(open int) {
	for st.tok.kind != tEOF {
		switch {
		case st.punct('('):
			open++
		case st.punct(')'):
			open--
			if open <= 0 {
				st.next()
				return
			}
		}
		st.next()
	}
}

// arenaPut copies b into the scratch buffer and returns its offset, or
// -1 when it does not fit.
func (st *calcState) arenaPut(b []byte) int {
	if len(b) > len(st.arena)-st.atop {
		return -1
	}
	off := st.atop
	st.atop += copy(st.arena[off:], b)
	return off
}

// bytesOf returns the bytes of a string key value.
func (st *calcState) bytesOf(v *kval) []byte { return v.bytesOf(st.arena[:]) }
