package route

// insertStmt reads INSERT or REPLACE: [modifiers] [INTO] [db.]t
// [PARTITION (...)] [(cols)] VALUES|VALUE (row), ... or SET col = v, ...
// Every row is evaluated; the statement has one tablet when all rows
// have the same. INSERT ... SELECT and TABLE are not read.
func (st *calcState) insertStmt() {
	st.next()
	for st.isKW(kwLowPriority) || st.isKW(kwDelayed) || st.isKW(kwHighPriority) || st.isKW(kwIgnore) {
		st.next()
	}
	if st.isKW(kwInto) {
		st.next()
	}
	if st.tok.kind != tQuoted && (st.tok.kind != tWord || kwClasses[st.tok.kw]&clsClause != 0) {
		st.fail(HowStatement)
		return
	}
	db, name, ok := st.tableName()
	if !ok {
		return
	}
	match := st.isTarget(db, name)
	st.partitionClause(match)
	if st.how != "" {
		return
	}
	if !match {
		st.fail(HowNoTable)
		return
	}
	st.found, st.instDB = 1, db
	if !st.tablesRead() {
		return
	}

	// Where each key column is in a row.
	var pos [maxKeyCols]int
	for ci := range st.d.nkeys() {
		pos[ci] = -1
	}
	if st.punct('(') {
		st.next()
		if st.startsQuery() {
			st.fail(HowStatement)
			return
		}
		if !st.columnList(&pos) {
			return
		}
	} else {
		for ci := range st.d.nkeys() {
			pos[ci] = st.d.cols[ci].idx
		}
	}
	switch {
	case st.isKW(kwValues) || st.isKW(kwValue):
		st.next()
		st.rows(&pos)
	case st.isKW(kwSet):
		st.next()
		st.setList()
	default:
		st.fail(HowStatement)
	}
}

// columnList reads the column names of an INSERT after its '(' and
// records the key columns' positions.
func (st *calcState) columnList(pos *[maxKeyCols]int) bool {
	for i := 0; !st.punct(')'); i++ {
		if !st.atName() {
			st.fail(HowStatement)
			return false
		}
		ci, ok := st.columnRef()
		if !ok {
			st.fail(HowStatement)
			return false
		}
		if ci >= 0 && pos[ci] < 0 {
			pos[ci] = i
		}
		switch {
		case st.punct(','):
			st.next()
		case !st.punct(')'):
			st.fail(HowStatement)
			return false
		}
	}
	st.next()
	return true
}

// rows reads (v, ...), ... and evaluates each row.
func (st *calcState) rows(pos *[maxKeyCols]int) {
	ncols := st.d.nkeys()
	for {
		if !st.punct('(') {
			st.fail(HowStatement)
			return
		}
		st.next()
		st.cond, st.atop = conds{}, 0
		for j := 0; !st.punct(')'); j++ {
			ci := -1
			for k := 0; k < ncols; k++ {
				if pos[k] == j {
					ci = k
					break
				}
			}
			if ci >= 0 {
				st.rowValue(ci)
			} else {
				st.skipValue()
			}
			switch {
			case st.punct(','):
				st.next()
			case !st.punct(')'):
				st.fail(HowStatement)
				return
			}
		}
		st.next()
		st.missingKeys()
		st.evalNow()
		if !st.punct(',') {
			return
		}
		st.next()
	}
}

// setList reads col = v, ... of INSERT ... SET as one row.
func (st *calcState) setList() {
	for {
		if !st.atName() {
			st.fail(HowStatement)
			return
		}
		ci, ok := st.columnRef()
		if !ok || (!st.punct('=') && st.tok.kind != tAssign) {
			st.fail(HowStatement)
			return
		}
		st.next()
		if ci >= 0 && !st.cond.col[ci].eq {
			st.rowValue(ci)
		} else {
			st.skipValue()
		}
		if !st.punct(',') {
			break
		}
		st.next()
	}
	st.missingKeys()
	st.evalNow()
}

// rowValue reads the value a row gives key column ci.
func (st *calcState) rowValue(ci int) {
	l, ls := st.value()
	if ls != litOK {
		st.noteLit(ci, ls)
		st.skipValue()
		return
	}
	if !st.punct(',') && !st.punct(')') && !st.valueEnd() {
		st.note(ci, HowUnsupported)
		st.skipValue()
		return
	}
	v, ok := st.cast(&l, &st.d.cols[ci])
	if !ok {
		st.note(ci, st.castFailure(ci))
		return
	}
	st.applyEq(ci, st.cond.top, 0, v)
}

// missingKeys notes the key columns a row gives no value.
func (st *calcState) missingKeys() {
	for ci := range st.d.nkeys() {
		if !st.cond.col[ci].eq {
			st.note(ci, HowNoKeyInsert)
		}
	}
}

// valueEnd reports whether the current token ends an INSERT ... SET
// list: ON DUPLICATE KEY UPDATE, a row alias, the end of the statement.
func (st *calcState) valueEnd() bool {
	return st.tok.kind == tEOF || st.punct(';') || st.isKW(kwOn) || st.isKW(kwAs)
}

// skipValue skips a value expression up to the ',' or ')' after it.
func (st *calcState) skipValue() {
	depth := 0
	for st.tok.kind != tEOF {
		switch {
		case st.punct('('):
			depth++
		case depth == 0 && (st.punct(',') || st.punct(')') || st.valueEnd()):
			return
		case st.punct(')'):
			depth--
		}
		st.next()
	}
}
