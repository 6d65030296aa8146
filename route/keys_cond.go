package route

import "math"

// Reading key conditions from WHERE and JOIN ... ON: conjunctions of
// col = v, v = col, col <=> v, col IN (v, ...), col BETWEEN a AND b,
// col >|>=|<|<= v (and mirrored), col IS NULL, with parentheses. A
// conjunct of any other form is skipped: in a conjunction it can only
// narrow the rows further, so skipping it never makes an answer wrong.

// cmpOp is a comparison read after a column.
type cmpOp uint8

const (
	opNone cmpOp = iota // an operator obgate does not use (!=, LIKE, NOT IN, IS NOT NULL, ...)
	opEq
	opNullSafeEq
	opLt
	opLe
	opGt
	opGe
	opIn
	opBetween
	opIsNull
)

// mirror is the operator seen from the other side: 5 < col is col > 5.
func (o cmpOp) mirror() cmpOp {
	switch o {
	case opLt:
		return opGt
	case opLe:
		return opGe
	case opGt:
		return opLt
	case opGe:
		return opLe
	}
	return o
}

// isAndTok reports whether the current token is AND or &&.
func (st *calcState) isAndTok() bool {
	return st.isKW(kwAnd) || (st.punct('&') && st.rawNext() == '&')
}

// isOrTok reports whether the current token is OR or ||.
func (st *calcState) isOrTok() bool {
	return st.isKW(kwOr) || (st.punct('|') && st.rawNext() == '|')
}

// skipLogical moves past the AND, &&, OR, || or XOR at the current token.
func (st *calcState) skipLogical() {
	if st.tok.kind == tPunct {
		st.next()
	}
	st.next()
}

// atCondEnd reports whether the current token ends a condition: the end
// of the statement, a ')' or ',' outside it, or a clause keyword.
func (st *calcState) atCondEnd() bool {
	t := &st.tok
	switch t.kind {
	case tEOF:
		return true
	case tPunct:
		return t.c == ';' || t.c == ')' || t.c == ','
	case tWord:
		switch t.kw {
		case kwGroup, kwOrder, kwLimit, kwHaving, kwFor, kwLock, kwUnion, kwInto, kwWhere,
			kwJoin, kwInner, kwCross, kwNatural, kwStraightJoin, kwOn, kwUsing, kwSet:
			return true
		case kwLeft, kwRight:
			return !st.callFollows()
		case kwReturning, kwWindow, kwExcept, kwIntersect:
			// Not reserved everywhere: a column when an operator follows.
			return !st.operatorFollows()
		}
	}
	return false
}

// callFollows reports whether a '(' comes right after the current word
// (blanks between allowed): LEFT(s, n) is a function, LEFT JOIN a join.
func (st *calcState) callFollows() bool {
	p := st.tok.end
	for p < len(st.s) && isBlank(st.s[p]) {
		p++
	}
	return p < len(st.s) && st.s[p] == '('
}

// operatorFollows reports whether a comparison or a '.' comes right
// after the current word (blanks between allowed).
func (st *calcState) operatorFollows() bool {
	p := st.tok.end
	for p < len(st.s) && isBlank(st.s[p]) {
		p++
	}
	if p == len(st.s) {
		return false
	}
	switch st.s[p] {
	case '=', '<', '>', '!', '.':
		return true
	}
	return false
}

// atConjEnd reports whether the current token ends a conjunct.
func (st *calcState) atConjEnd() bool {
	return st.isAndTok() || st.isOrTok() || st.isKW(kwXor) || st.atCondEnd()
}

// startsQuery reports whether the current token starts a subquery.
func (st *calcState) startsQuery() bool {
	return st.isKW(kwSelect) || st.isKW(kwWith) || st.isKW(kwValues) || st.isKW(kwTable)
}

// skipRest skips the rest of a conjunct: to the next AND, OR, XOR or end
// of the condition outside parentheses, CASE ... END and BETWEEN ... AND
// (between is the number of BETWEENs already read whose AND is to come).
func (st *calcState) skipRest(between int) {
	depth, cases := 0, 0
	prevDot := false
	for st.tok.kind != tEOF {
		if depth == 0 && cases == 0 && !prevDot {
			switch {
			case st.isAndTok():
				if between == 0 {
					return
				}
				between--
			case st.isOrTok() || st.isKW(kwXor) || st.atCondEnd():
				return
			}
		}
		switch {
		case st.punct('('):
			depth++
		case st.punct(')'):
			if depth == 0 {
				return
			}
			depth--
		case prevDot || depth > 0:
		case st.isKW(kwBetween):
			between++
		case st.isKW(kwCase):
			cases++
		case st.isKW(kwEnd) && cases > 0:
			cases--
		}
		prevDot = st.punct('.')
		st.next()
	}
}

// skipCond skips a whole condition.
func (st *calcState) skipCond() {
	for {
		st.skipRest(0)
		if st.atCondEnd() {
			return
		}
		st.skipLogical()
	}
}

// where reads a WHERE condition and evaluates it: each OR branch on its
// own (with the conditions read before, from JOIN ... ON), so that the
// statement has one tablet only when every branch has the same one.
func (st *calcState) where() {
	base := st.cond
	for {
		st.conjunction()
		switch {
		case st.isOrTok():
			st.evalNow()
			st.cond = base
			st.skipLogical()
			continue
		case st.isKW(kwXor):
			st.cond = base
			st.noteAll(HowUnsupported)
			st.skipCond()
		}
		st.evalNow()
		return
	}
}

// onCond reads the ON condition of an inner join. Its conjuncts count as
// the WHERE's; one with an OR or XOR at its top counts for nothing.
func (st *calcState) onCond() {
	base := st.cond
	st.conjunction()
	if !st.atCondEnd() {
		st.cond = base
		st.skipCond()
	}
}

// conjunction reads conjuncts joined by AND up to an OR, XOR or the end
// of the condition.
func (st *calcState) conjunction() {
	for {
		st.conjunct()
		if !st.isAndTok() {
			return
		}
		st.skipLogical()
	}
}

// conjunct reads one conjunct, leaving the scanner at the token that ends
// it.
func (st *calcState) conjunct() {
	if st.atConjEnd() {
		return
	}
	t := &st.tok
	switch {
	case t.kind == tPunct && t.c == '(':
		st.group()
	case st.atName():
		ci, ok := st.columnRef()
		if !ok || ci < 0 {
			st.skipRest(0)
			return
		}
		st.predicate(ci)
	default:
		st.literalFirst()
	}
}

// group reads a parenthesized conjunct: its conjuncts count when it is a
// conjunction standing alone.
func (st *calcState) group() {
	snap := st.cond
	st.next()
	if st.depth >= maxGroupDepth || st.startsQuery() {
		st.skipToClose()
		st.skipRest(0)
		return
	}
	st.depth++
	st.conjunction()
	st.depth--
	if st.punct(')') {
		st.next()
		if st.atConjEnd() {
			return
		}
	} else {
		st.skipToClose()
	}
	st.cond = snap
	st.skipRest(0)
}

// atName reports whether the current token may start a column name.
func (st *calcState) atName() bool {
	t := &st.tok
	switch t.kind {
	case tQuoted:
		return true
	case tWord:
		if isDigit(st.s[t.start]) || t.kw == kwCase { // CASE ... END is read by skipRest
			return false
		}
		w := st.text()
		switch {
		case EqualFold(w, "NULL") || EqualFold(w, "TRUE") || EqualFold(w, "FALSE"):
			return false
		case (EqualFold(w, "X") || EqualFold(w, "N")) && t.end < len(st.s) && st.s[t.end] == '\'':
			return false
		case w[0] == '_':
			p := t.end
			for p < len(st.s) && isBlank(st.s[p]) {
				p++
			}
			return p >= len(st.s) || (st.s[p] != '\'' && st.s[p] != '"')
		}
		return true
	}
	return false
}

// columnRef reads [[db.]table.]column at the current token. It returns
// the key column index, -1 for a column that is not one of the target
// table's keys; false when the name is not a column (a function call).
func (st *calcState) columnRef() (int, bool) {
	var parts [3][]byte
	n := 0
	for {
		if n == len(parts) {
			return -1, false
		}
		parts[n] = st.text()
		n++
		st.next()
		if !st.punct('.') {
			break
		}
		st.next()
		if st.tok.kind != tWord && st.tok.kind != tQuoted {
			return -1, false
		}
	}
	if st.punct('(') {
		return -1, false
	}
	switch n {
	case 2:
		q := st.table.Name
		if st.alias != nil {
			q = st.alias
		}
		if !foldEqual(parts[0], q) {
			return -1, true
		}
	case 3:
		if st.alias != nil || !foldEqual(parts[1], st.table.Name) || !st.dbMatches(parts[0]) {
			return -1, true
		}
	}
	return st.d.colIndex(parts[n-1]), true
}

// dbMatches reports whether db may be the target table's database.
func (st *calcState) dbMatches(db []byte) bool {
	switch {
	case st.instDB != nil:
		return foldEqual(db, st.instDB)
	case len(st.table.DB) > 0:
		return foldEqual(db, st.table.DB)
	}
	return true
}

// readOp reads a comparison operator.
func (st *calcState) readOp() cmpOp {
	t := &st.tok
	switch {
	case t.kind == tPunct:
		c, c2 := t.c, st.rawNext()
		var c3 byte
		if t.end+1 < len(st.s) {
			c3 = st.s[t.end+1]
		}
		switch {
		case c == '=':
			st.next()
			return opEq
		case c == '<' && c2 == '=' && c3 == '>':
			st.next()
			st.next()
			st.next()
			return opNullSafeEq
		case (c == '<' || c == '>' || c == '!') && c2 == '=':
			st.next()
			st.next()
			switch c {
			case '<':
				return opLe
			case '>':
				return opGe
			}
			return opNone
		case c == '<' && c2 == '>':
			return opNone
		case c == '<':
			st.next()
			return opLt
		case c == '>':
			st.next()
			return opGt
		}
	case st.isKW(kwIn):
		st.next()
		return opIn
	case st.isKW(kwBetween):
		st.next()
		return opBetween
	case st.isKW(kwIs):
		st.next()
		if st.word("NULL") {
			st.next()
			return opIsNull
		}
	}
	return opNone
}

// predicate reads what follows the key column ci.
func (st *calcState) predicate(ci int) {
	op := st.readOp()
	switch op {
	case opNone:
		st.skipRest(0)
	case opIsNull:
		if !st.atConjEnd() {
			st.skipRest(0)
			return
		}
		if !st.outer { // an outer join's NULLs are not the table's rows
			st.applyEq(ci, st.cond.top, 0, kval{kind: kNull})
		}
	case opIn:
		st.inList(ci)
	case opBetween:
		lo, ok := st.readKey(ci, 1)
		if !ok {
			return
		}
		if !st.isKW(kwAnd) {
			st.note(ci, HowUnsupported)
			st.skipRest(1)
			return
		}
		st.next()
		hi, ok := st.readKey(ci, 0)
		if !ok {
			return
		}
		if !st.atConjEnd() {
			st.skipRest(0)
			return
		}
		st.applyRange(ci, opGe, lo)
		st.applyRange(ci, opLe, hi)
	default:
		v, ok := st.readKey(ci, 0)
		if !ok {
			return
		}
		if !st.atConjEnd() {
			st.note(ci, HowUnsupported)
			st.skipRest(0)
			return
		}
		st.applyCmp(ci, op, v)
	}
}

// readKey reads a value for key column ci and casts it. When it fails it
// notes why and skips the conjunct (between: BETWEENs awaiting their AND).
func (st *calcState) readKey(ci int, between int) (kval, bool) {
	l, ls := st.value()
	if ls == litOK {
		if v, ok := st.cast(&l, &st.d.cols[ci]); ok {
			return v, true
		}
		st.note(ci, st.castFailure(ci))
	} else {
		st.noteLit(ci, ls)
	}
	st.skipRest(between)
	return kval{}, false
}

// noteLit notes why a value for ci could not be read.
func (st *calcState) noteLit(ci int, ls litStatus) {
	switch ls {
	case litUnresolved:
		st.note(ci, HowNoParam)
	case litTooLong:
		st.note(ci, HowTooMany)
	default:
		st.note(ci, HowUnsupported)
	}
}

// literalFirst reads a conjunct that starts with a value: v op col.
func (st *calcState) literalFirst() {
	l, ls := st.value()
	if ls != litOK {
		st.skipRest(0)
		return
	}
	op := st.readOp()
	switch op {
	case opEq, opNullSafeEq, opLt, opLe, opGt, opGe:
	default:
		st.skipRest(0)
		return
	}
	if !st.atName() {
		st.skipRest(0)
		return
	}
	ci, ok := st.columnRef()
	if !ok || ci < 0 {
		st.skipRest(0)
		return
	}
	if !st.atConjEnd() {
		st.note(ci, HowUnsupported)
		st.skipRest(0)
		return
	}
	v, ok := st.cast(&l, &st.d.cols[ci])
	if !ok {
		st.note(ci, st.castFailure(ci))
		return
	}
	st.applyCmp(ci, op.mirror(), v)
}

// inList reads (v, ...) after col IN.
func (st *calcState) inList(ci int) {
	if !st.punct('(') {
		st.skipRest(0)
		return
	}
	st.next()
	if st.startsQuery() {
		st.skipToClose()
		st.note(ci, HowUnsupported)
		st.skipRest(0)
		return
	}
	start, n := st.cond.top, 0
	for {
		l, ls := st.value()
		if ls != litOK {
			st.noteLit(ci, ls)
			st.skipToClose()
			st.skipRest(0)
			return
		}
		v, ok := st.cast(&l, &st.d.cols[ci])
		if !ok {
			st.note(ci, st.castFailure(ci))
			st.skipToClose()
			st.skipRest(0)
			return
		}
		if v.kind != kNull { // NULL IN (...) matches nothing
			if start+n == len(st.pool) {
				st.note(ci, HowTooMany)
				st.skipToClose()
				st.skipRest(0)
				return
			}
			st.pool[start+n] = v
			n++
		}
		if st.punct(',') {
			st.next()
			continue
		}
		if !st.punct(')') {
			st.note(ci, HowUnsupported)
			st.skipToClose()
			st.skipRest(0)
			return
		}
		st.next()
		break
	}
	if !st.atConjEnd() {
		st.note(ci, HowUnsupported)
		st.skipRest(0)
		return
	}
	if n == 0 {
		return
	}
	st.applyEq(ci, start, n, kval{})
}

// applyCmp applies col op v.
func (st *calcState) applyCmp(ci int, op cmpOp, v kval) {
	switch op {
	case opEq:
		if v.kind != kNull { // col = NULL matches nothing: no restriction read
			st.applyEq(ci, st.cond.top, 0, v)
		}
	case opNullSafeEq:
		if v.kind != kNull || !st.outer {
			st.applyEq(ci, st.cond.top, 0, v)
		}
	default:
		st.applyRange(ci, op, v)
	}
}

// applyEq restricts ci to the n values at pool[start:] (the top of the
// pool), or to the single value one when n is 0.
func (st *calcState) applyEq(ci, start, n int, one kval) {
	if n == 0 {
		if start == len(st.pool) {
			st.note(ci, HowTooMany)
			return
		}
		st.pool[start] = one
		n = 1
	}
	c := &st.cond.col[ci]
	if c.eq {
		col := &st.d.cols[ci]
		k := 0
		for i := start; i < start+n; i++ {
			v := &st.pool[i]
			for j := int(c.eqOff); j < int(c.eqOff)+int(c.eqN); j++ {
				o := &st.pool[j]
				if compareKV(col, *v, st.bytesOf(v), *o, st.bytesOf(o)) == 0 {
					st.pool[start+k] = *v
					k++
					break
				}
			}
		}
		n = k
	}
	c.eq, c.eqOff, c.eqN = true, uint8(start), uint8(n)
	st.cond.top = start + n
}

// applyRange narrows the range of ci by col op v (op one of <, <=, >, >=).
func (st *calcState) applyRange(ci int, op cmpOp, v kval) {
	if v.kind == kNull {
		return // a comparison with NULL matches nothing
	}
	c := &st.cond.col[ci]
	col := &st.d.cols[ci]
	inc := op == opLe || op == opGe
	if !inc && (v.kind == kInt || v.kind == kUint || v.kind == kDate || v.kind == kTime) {
		// Between integers (and days, and microseconds), > v is >= v+1 and
		// < v is <= v-1.
		switch {
		case op == opGt && v.kind != kUint && v.i != math.MaxInt64,
			op == opGt && v.kind == kUint && uint64(v.i) != math.MaxUint64:
			v.i++
			inc = true
		case op == opLt && v.kind != kUint && v.i != math.MinInt64,
			op == opLt && v.kind == kUint && v.i != 0:
			v.i--
			inc = true
		}
	}
	if op == opGt || op == opGe {
		r := 0
		if c.hasLo {
			r = compareKV(col, v, st.bytesOf(&v), c.lo, st.bytesOf(&c.lo))
		}
		if !c.hasLo || r > 0 || (r == 0 && !inc) {
			c.hasLo, c.lo, c.loInc = true, v, inc
		}
		return
	}
	r := 0
	if c.hasHi {
		r = compareKV(col, v, st.bytesOf(&v), c.hi, st.bytesOf(&c.hi))
	}
	if !c.hasHi || r < 0 || (r == 0 && !inc) {
		c.hasHi, c.hi, c.hiInc = true, v, inc
	}
}

// note records why a condition on ci was not used (the first reason).
func (st *calcState) note(ci int, why string) {
	if c := &st.cond.col[ci]; c.why == "" {
		c.why = why
	}
}

// noteAll notes why for every key column.
func (st *calcState) noteAll(why string) {
	for i := range st.d.nkeys() {
		st.note(i, why)
	}
}

// nkeys is the number of key columns statements are read for: past
// maxKeyCols a column is never looked for (and the levels using it are
// not computed).
func (d *PartDesc) nkeys() int { return min(len(d.cols), maxKeyCols) }

// colIndex returns the index of the key column named name (ASCII case
// ignored), or -1.
func (d *PartDesc) colIndex(name []byte) int {
	for i := range d.nkeys() {
		if foldEqual(name, d.cols[i].bname) {
			return i
		}
	}
	return -1
}

// foldEqual reports whether a and b are equal ignoring ASCII case.
func foldEqual(a, b []byte) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		x, y := a[i], b[i]
		if x >= 'A' && x <= 'Z' {
			x += 'a' - 'A'
		}
		if y >= 'A' && y <= 'Z' {
			y += 'a' - 'A'
		}
		if x != y {
			return false
		}
	}
	return true
}
