package route

// The statement forms Calculate reads: SELECT ... FROM ... [WHERE],
// UPDATE ... SET ... [WHERE], DELETE ... [WHERE] and INSERT/REPLACE (in
// keys_insert.go). Table references are read at the top of the statement
// only: a table named only in a subquery is not found.

// statement reads the statement at the current token.
func (st *calcState) statement() {
	switch {
	case st.isKW(kwSelect):
		st.selectStmt()
	case st.isKW(kwUpdate):
		st.updateStmt()
	case st.isKW(kwDelete):
		st.deleteStmt()
	case st.isKW(kwInsert) || st.isKW(kwReplace):
		st.insertStmt()
	default:
		st.fail(HowStatement)
		return
	}
	st.trailer()
}

// trailer reads the rest of the statement: a UNION (or EXCEPT,
// INTERSECT) outside parentheses names more rows than one SELECT's, and
// a second statement is not this one's.
func (st *calcState) trailer() {
	depth := 0
	for st.tok.kind != tEOF && st.how == "" {
		switch {
		case st.punct('('):
			depth++
		case st.punct(')'):
			depth--
		case st.punct(';'):
			for st.punct(';') {
				st.next()
			}
			if st.tok.kind != tEOF {
				st.fail(HowMulti)
			}
			return
		case depth == 0 && (st.isKW(kwUnion) || st.isKW(kwExcept) || st.isKW(kwIntersect)):
			st.fail(HowStatement)
			return
		}
		st.next()
	}
}

// selectStmt reads SELECT ... FROM refs [WHERE cond].
func (st *calcState) selectStmt() {
	st.next()
	for !st.isKW(kwFrom) {
		switch {
		case st.tok.kind == tEOF || st.punct(';') || st.punct(')'):
			st.fail(HowNoTable)
			return
		case st.isKW(kwUnion) || st.isKW(kwExcept) || st.isKW(kwIntersect):
			st.fail(HowStatement)
			return
		case st.punct('('):
			st.skipParens()
		default:
			st.next()
		}
	}
	st.next()
	st.tableRefs()
	st.whereClause()
}

// whereClause checks the tables read and evaluates the WHERE clause at
// the current token (or no condition at all).
func (st *calcState) whereClause() {
	if !st.tablesRead() {
		return
	}
	if st.isKW(kwWhere) {
		st.next()
		st.where()
		return
	}
	st.evalNow()
}

// updateStmt reads UPDATE [LOW_PRIORITY] [IGNORE] refs SET ... [WHERE].
func (st *calcState) updateStmt() {
	st.next()
	for st.isKW(kwLowPriority) || st.isKW(kwIgnore) {
		st.next()
	}
	st.tableRefs()
	if !st.isKW(kwSet) {
		st.fail(HowStatement)
		return
	}
	st.next()
	for !st.isKW(kwWhere) && st.tok.kind != tEOF && !st.punct(';') {
		if st.punct('(') {
			st.skipParens()
		} else {
			st.next()
		}
	}
	st.whereClause()
}

// deleteStmt reads DELETE [LOW_PRIORITY] [QUICK] [IGNORE] FROM refs
// [USING refs] [WHERE], and DELETE names FROM refs [WHERE].
func (st *calcState) deleteStmt() {
	st.next()
	for st.isKW(kwLowPriority) || st.isKW(kwIgnore) || st.word("QUICK") {
		st.next()
	}
	if !st.isKW(kwFrom) {
		for !st.isKW(kwFrom) { // the tables deleted from, then FROM
			if st.tok.kind == tEOF || st.punct(';') {
				st.fail(HowStatement)
				return
			}
			st.next()
		}
	}
	st.next()
	st.tableRefs()
	if st.isKW(kwUsing) { // FROM named the tables deleted from; USING the references
		st.found, st.alias, st.instDB, st.pnCount = 0, nil, nil, 0
		st.next()
		st.tableRefs()
	}
	st.whereClause()
}

// tablesRead checks that the target table was named once and applies its
// PARTITION () clause. It reports false when the statement is settled.
func (st *calcState) tablesRead() bool {
	switch {
	case st.how != "":
		return false
	case st.found == 0:
		st.fail(HowNoTable)
		return false
	case st.found > 1:
		st.fail(HowTwice)
		return false
	case st.pnCount == 0:
		return true
	case st.pnCount > 1:
		st.fail(HowSeveral)
		return false
	}
	d := st.d
	name := st.s[st.pnStart:st.pnEnd]
	if ref, ok := d.lookupLeaf(name); ok {
		st.named = true
		st.tally.add(eval{part: ref.part, sub: ref.sub}) // settled: no condition changes it
		return false
	}
	if p, ok := d.lookupPart(name); ok {
		st.named, st.fixed = true, p
		return true
	}
	st.fail(HowBadName)
	return false
}

// tableRefs reads table references separated by ',' and joins.
func (st *calcState) tableRefs() {
	for st.how == "" {
		st.tableFactor()
		for st.how == "" && st.joinOp() {
			st.tableFactor()
			switch {
			case st.isKW(kwOn):
				st.next()
				if st.outer {
					st.skipCond()
				} else {
					st.onCond()
				}
			case st.isKW(kwUsing):
				st.next()
				if st.punct('(') {
					st.skipParens()
				}
			}
		}
		if !st.punct(',') {
			return
		}
		st.next()
	}
}

// joinOp reads a join operator, if one is at the current token.
func (st *calcState) joinOp() bool {
	switch {
	case st.isKW(kwJoin) || st.isKW(kwStraightJoin):
		st.next()
		return true
	case st.isKW(kwInner) || st.isKW(kwCross):
		st.next()
	case st.isKW(kwLeft) || st.isKW(kwRight):
		st.outer = true
		st.next()
		if st.isKW(kwOuter) {
			st.next()
		}
	case st.isKW(kwNatural):
		st.outer = true
		st.next()
		for st.isKW(kwLeft) || st.isKW(kwRight) || st.isKW(kwInner) || st.isKW(kwOuter) {
			st.next()
		}
	default:
		return false
	}
	if !st.isKW(kwJoin) {
		st.fail(HowStatement)
		return false
	}
	st.next()
	return true
}

// tableFactor reads one table reference: [db.]name [PARTITION (...)]
// [[AS] alias] [index hints], a derived table, or ( refs ).
func (st *calcState) tableFactor() {
	switch {
	case st.punct('('):
		st.next()
		if st.startsQuery() || st.depth >= maxGroupDepth {
			st.skipToClose()
			st.readAlias()
			if st.punct('(') { // derived column names
				st.skipParens()
			}
			return
		}
		st.depth++
		st.tableRefs()
		st.depth--
		if !st.punct(')') {
			st.fail(HowStatement)
			return
		}
		st.next()
		return
	case st.tok.kind == tQuoted || (st.tok.kind == tWord && kwClasses[st.tok.kw]&clsClause == 0 && st.tok.kw != kwLateral):
	default:
		st.fail(HowStatement)
		return
	}
	db, name, ok := st.tableName()
	if !ok {
		return
	}
	if st.punct('(') { // a table function: JSON_TABLE(...)
		st.skipParens()
		st.readAlias()
		return
	}
	match := st.isTarget(db, name)
	st.partitionClause(match)
	alias := st.readAlias()
	st.partitionClause(match)
	st.indexHints()
	if match {
		st.found++
		st.alias, st.instDB = alias, db
	}
}

// readAlias reads [AS] alias and returns the alias (nil when none).
func (st *calcState) readAlias() []byte {
	if st.isKW(kwAs) {
		st.next()
		if st.tok.kind != tWord && st.tok.kind != tQuoted {
			st.fail(HowStatement)
			return nil
		}
	} else if st.tok.kind != tQuoted && (st.tok.kind != tWord || kwClasses[st.tok.kw]&clsClause != 0 ||
		st.isKW(kwIgnore) || st.word("USE") || st.word("FORCE")) {
		return nil
	}
	a := st.text()
	st.next()
	return a
}

// partitionClause reads PARTITION (name, ...) after a table name; when
// the table is the target it records the names.
func (st *calcState) partitionClause(target bool) {
	if !st.isKW(kwPartition) {
		return
	}
	st.next()
	if !st.punct('(') {
		st.fail(HowStatement)
		return
	}
	st.next()
	for {
		if st.tok.kind != tWord && st.tok.kind != tQuoted {
			st.fail(HowStatement)
			return
		}
		if target {
			if st.pnCount == 0 {
				st.pnStart, st.pnEnd = st.tok.start, st.tok.end
			}
			st.pnCount++
		}
		st.next()
		if st.punct(')') {
			st.next()
			return
		}
		if !st.punct(',') {
			st.fail(HowStatement)
			return
		}
		st.next()
	}
}

// indexHints skips USE|FORCE|IGNORE INDEX|KEY [FOR ...] (...) hints.
func (st *calcState) indexHints() {
	for st.word("USE") || st.word("FORCE") || st.isKW(kwIgnore) {
		st.next()
		if !st.word("INDEX") && !st.word("KEY") {
			st.fail(HowStatement)
			return
		}
		st.next()
		if st.isKW(kwFor) {
			for !st.punct('(') && st.tok.kind != tEOF {
				st.next()
			}
		}
		if !st.punct('(') {
			st.fail(HowStatement)
			return
		}
		st.skipParens()
	}
}
