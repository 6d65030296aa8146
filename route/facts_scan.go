package route

import "bytes"

// pass is one lexer pass over a statement: the lexer, the facts found so
// far and what the scanner remembers of the tokens it has seen. Every
// token goes through observe exactly once, in text order.
type pass struct {
	lx  lexer
	f   Facts
	tok token // the token just read

	// The statement being read (the text may hold several).
	nTok      int     // its tokens so far, leading '(' not counted
	head      [4]kw   // keywords of its first tokens; kwNone for other tokens
	prev      prevTok // the previous token; tEOF at a statement's start
	prevTable bool    // prev was read as a table name
	depth     int     // parenthesis depth
	calls     uint64  // bit d: the parenthesis opened at depth d is a call's

	firstToks int  // tokens of the first statement so far, leading '(' not counted
	later     bool // past the first statement
	semi      bool // the previous token was ';'
	pending   pending
	writes    bool // something makes the statement not read-only
	beginOK   bool // the first statement is a complete BEGIN / START TRANSACTION

	tbl tableScan
}

// pending is a decision that waits for the next token.
type pending uint8

const (
	pendNone   pending = iota
	pendDML            // INSERT/REPLACE: a statement unless '(' follows (the string functions)
	pendLastID         // LAST_INSERT_ID(: reads the value if ')' follows, else sets it
)

// next reads the next token and lets the scanner see it. The token is
// p.tok: it is overwritten by the next call.
func (p *pass) next() *token {
	p.lx.next(&p.tok)
	p.observe(&p.tok)
	return &p.tok
}

// observe updates the facts with one token.
func (p *pass) observe(t *token) {
	semi := t.is(';')
	if p.semi && !semi && t.kind != tEOF {
		p.f.MultiStatement = true
	}
	p.semi = semi
	switch p.pending {
	case pendDML:
		if !t.is('(') {
			p.writes = true
		}
	case pendLastID:
		if t.is(')') {
			p.f.Pins |= PinLastResult
		} else {
			p.writes = true
		}
	}
	p.pending = pendNone
	if t.kind == tEOF {
		p.tableEnd()
		return
	}
	if semi {
		p.endStatement()
		return
	}
	leading := p.nTok == 0 && t.is('(')
	if !p.later && !leading {
		p.firstToks++
		p.lx.hints = p.firstToks < 2
	}

	k := kwNone
	if t.kind == tWord {
		k = t.kw
		if p.prev.is('.') {
			k = kwNone // a name after '.' is never a keyword
		}
	}
	idx := p.nTok
	if !leading {
		if idx < len(p.head) {
			p.head[idx] = k
		}
		p.nTok++
	}

	prevTable := p.prevTable
	p.table(t, k, idx)
	switch t.kind {
	case tWord:
		p.word(t, k, idx)
	case tVar:
		name := p.lx.s[t.start:t.end]
		if t.sys && (EqualFold(name, "WARNING_COUNT") || EqualFold(name, "ERROR_COUNT")) {
			p.f.Pins |= PinDiagnostics
		}
	case tAssign:
		p.writes = true
	case tPunct:
		p.punct(t, prevTable)
	}
	p.prev = prevTok{kind: t.kind, kw: t.kw, c: t.c}
	if t.kind == tWord {
		p.prev.kw = k
	}
}

// prevTok is what the scanner keeps of the previous token.
type prevTok struct {
	kind tokKind
	kw   kw
	c    byte
}

// is reports whether the token was the punctuation byte c.
func (t prevTok) is(c byte) bool { return t.kind == tPunct && t.c == c }

// endStatement is ';': the next token starts another statement.
func (p *pass) endStatement() {
	p.tableEnd()
	p.nTok = 0
	p.head = [4]kw{}
	p.prev = prevTok{}
	p.prevTable = false
	p.depth, p.calls = 0, 0
	p.later = true
	p.lx.hints = false
	p.tbl = tableScan{}
}

// prevKW is the keyword of the previous token if it is an unquoted word.
func (p *pass) prevKW() kw {
	if p.prev.kind == tWord {
		return p.prev.kw
	}
	return kwNone
}

// punct handles parentheses: a '(' after a name is a function call,
// unless the name was read as a table's (INSERT INTO t (a) ...).
func (p *pass) punct(t *token, afterTable bool) {
	switch t.c {
	case '(':
		call := false
		switch p.prev.kind {
		case tQuoted:
			call = true
		case tWord:
			call = p.prev.kw == kwNone || kwClasses[p.prev.kw]&clsFunc != 0
		}
		if call && !afterTable {
			p.call(p.prev.kw)
		}
		if p.depth < 64 {
			if call {
				p.calls |= 1 << p.depth
			} else {
				p.calls &^= 1 << p.depth
			}
		}
		p.depth++
	case ')':
		if p.depth > 0 {
			p.depth--
		}
	}
}

// inCall reports whether the scanner is inside a function call's
// parentheses (EXTRACT(x FROM d) names no table). Past 64 levels it
// answers yes.
func (p *pass) inCall() bool {
	if p.depth == 0 {
		return false
	}
	return p.depth > 64 || p.calls&(1<<(p.depth-1)) != 0
}

// call records the effect of calling the function k.
func (p *pass) call(k kw) {
	if k == kwLastInsertID {
		p.pending = pendLastID
		return
	}
	e := callEffects[k]
	p.f.Pins |= e.pin
	p.writes = p.writes || e.writes
}

// word handles the keywords that lock, write or pin. idx is the word's
// place in its statement.
func (p *pass) word(t *token, k kw, idx int) {
	switch k {
	case kwUpdate, kwDelete, kwInto:
		p.writes = true
	case kwInsert, kwReplace:
		p.pending = pendDML
	case kwShare:
		if p.prevKW() == kwFor {
			p.writes = true
		}
	case kwIn:
		if p.prevKW() == kwLock {
			p.writes = true
		}
	case kwValue:
		switch p.prevKW() {
		case kwNext:
			p.writes = true
		case kwPrevious:
			p.f.Pins |= PinSequence
		}
	}
	if p.prev.is('.') {
		switch t.kw {
		case kwNextval:
			p.writes = true
		case kwCurrval:
			p.f.Pins |= PinSequence
		}
	}
	p.headPins(k, idx)
}

// headPins finds the pins a statement's first words make.
func (p *pass) headPins(k kw, idx int) {
	h0 := p.head[0]
	switch idx {
	case 0:
		if k == kwExecute {
			p.f.Pins |= PinExecute
		}
	case 1:
		switch {
		case (h0 == kwCreate || h0 == kwDrop) && k == kwTemporary:
			p.f.Pins |= PinTempTable
		case h0 == kwSet && k == kwTransaction:
			p.f.Pins |= PinNextTxn
		case h0 == kwXA && (k == kwStart || k == kwBegin):
			p.f.Pins |= PinXA
		case h0 == kwLock && (k == kwTable || k == kwTables):
			p.f.Pins |= PinLockTables
		case h0 == kwUnlock && (k == kwTable || k == kwTables):
			p.f.Pins |= PinUnlock
		case h0 == kwShow && (k == kwWarnings || k == kwErrors || k == kwCount):
			p.f.Pins |= PinDiagnostics
		case (h0 == kwDeallocate || h0 == kwDrop) && k == kwPrepare:
			p.f.Pins |= PinExecute
		case h0 == kwGet && (k == kwDiagnostics || k == kwCurrent || k == kwStacked):
			p.f.Pins |= PinDiagnostics
		}
	case 2:
		switch {
		case h0 == kwCreate && p.head[1] == kwGlobal && k == kwTemporary:
			p.f.Pins |= PinTempTable
		case h0 == kwPrepare && k == kwFrom:
			p.f.Pins |= PinPrepare
		case h0 == kwHandler && k == kwOpen:
			p.f.Pins |= PinHandler
		}
	case 3:
		if h0 == kwCreate && p.head[1] == kwOr && p.head[2] == kwReplace && k == kwTemporary {
			p.f.Pins |= PinTempTable
		}
	}
}

// tableScan is the state of reading table names.
type tableScan struct {
	mode  tableMode
	list  bool // a ',' after a name (and up to two words) names another table
	from  bool // FROM/JOIN: a name followed by '(' is a table function
	into  bool // INSERT/REPLACE/LOAD/TRUNCATE: INTO and TABLE may come before the name
	desc  bool // DESC/EXPLAIN: EXTENDED, PARTITIONS, ANALYZE may come first
	words int  // words after the name, in a list
	n1s   int  // where the first name lies
	n1e   int
}

type tableMode uint8

const (
	tableNone    tableMode = iota
	tableExpect            // a table name may come next
	tableGot1              // a name came: a '.' may follow
	tableExpect2           // db '.': the table name comes next
	tableAfter             // after a name in a list: alias words, ',' or the end of the list
)

// table follows table names through the statement. k is the token's
// keyword, idx its place in its statement.
func (p *pass) table(t *token, k kw, idx int) {
	ts := &p.tbl
	p.prevTable = false
	if p.head[0] == kwShow {
		return
	}
	name := t.kind == tWord || t.kind == tQuoted
	switch ts.mode {
	case tableExpect:
		if t.kind == tWord {
			if (ts.into && (k == kwInto || k == kwTable)) || kwClasses[k]&clsSkip != 0 ||
				(ts.desc && (k == kwExtended || k == kwPartitions || k == kwAnalyze)) {
				return
			}
			if kwClasses[k]&clsClause != 0 {
				name = false
			}
		}
		if name {
			ts.n1s, ts.n1e = t.start, t.end
			ts.mode = tableGot1
			p.prevTable = true
			return
		}
		ts.mode = tableNone
	case tableGot1:
		if t.is('.') {
			ts.mode = tableExpect2
			return
		}
		if t.is('(') && ts.from {
			ts.mode = tableNone
			return
		}
		p.addTable(0, 0, ts.n1s, ts.n1e)
		p.afterTable()
	case tableExpect2:
		if name {
			p.addTable(ts.n1s, ts.n1e, t.start, t.end)
			p.prevTable = true
			p.afterTable()
			return
		}
		ts.mode = tableNone
	}
	if ts.mode == tableAfter {
		switch {
		case t.is(','):
			ts.mode = tableExpect
			return
		case t.kind == tWord && k == kwAs:
			return
		case t.kind == tQuoted || (t.kind == tWord && kwClasses[k]&clsClause == 0):
			ts.words++
			if ts.words > 2 {
				ts.mode = tableNone
			}
			return
		}
		ts.mode = tableNone
	}
	if t.kind != tWord || p.inCall() {
		return
	}
	h0 := p.head[0]
	switch k {
	case kwFrom:
		p.expectTable(tableScan{list: true, from: true})
	case kwJoin, kwStraightJoin:
		p.expectTable(tableScan{from: true})
	case kwUpdate:
		if idx == 0 || p.prev.is(')') {
			p.expectTable(tableScan{list: true})
		}
	case kwInsert, kwReplace, kwTruncate:
		if idx == 0 {
			p.expectTable(tableScan{into: true})
		}
	case kwInto:
		if h0 == kwLoad {
			p.expectTable(tableScan{into: true})
		}
	case kwTable, kwTables:
		p.expectTable(tableScan{list: h0 == kwDrop || h0 == kwLock})
	case kwDesc, kwDescribe, kwExplain:
		if idx == 0 {
			p.expectTable(tableScan{desc: true})
		}
	case kwHandler:
		if idx == 0 {
			p.expectTable(tableScan{})
		}
	}
}

// expectTable starts reading a table name after a keyword.
func (p *pass) expectTable(ts tableScan) {
	ts.mode = tableExpect
	p.tbl = ts
}

// afterTable follows a table name: a list goes on, anything else ends.
func (p *pass) afterTable() {
	if p.tbl.list {
		p.tbl.mode = tableAfter
		p.tbl.words = 0
	} else {
		p.tbl.mode = tableNone
	}
}

// tableEnd is the end of a statement: a name just read is a table.
func (p *pass) tableEnd() {
	if p.tbl.mode == tableGot1 {
		p.addTable(0, 0, p.tbl.n1s, p.tbl.n1e)
	}
	p.tbl.mode = tableNone
}

// addTable records the table named by s[ns:ne] in the database named by
// s[ds:de] (empty when unqualified) unless it is already there.
func (p *pass) addTable(ds, de, ns, ne int) {
	s := p.lx.s
	ref := TableRef{Name: s[ns:ne:ne]}
	if de > ds {
		ref.DB = s[ds:de:de]
	}
	f := &p.f
	for i := 0; i < f.NumTables; i++ {
		if bytes.Equal(f.Tables[i].Name, ref.Name) && bytes.Equal(f.Tables[i].DB, ref.DB) {
			return
		}
	}
	if f.NumTables == len(f.Tables) {
		f.MoreTables = true
		return
	}
	f.Tables[f.NumTables] = ref
	f.NumTables++
}
