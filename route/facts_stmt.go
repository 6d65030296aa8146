package route

// lex runs one pass over sql. prefix says sql is only the start of the
// statement.
func lex(sql []byte, prefix bool) Facts {
	var p pass
	p.lx = lexer{s: sql, hints: true}
	info, hs, he := classifyHead(sql)
	p.f.Kind, p.f.Second = info.Kind, info.Second

	t := p.next()
	parens := 0
	for t.is('(') {
		parens++
		t = p.next()
	}
	// The statement-level grammar runs only where the first code token is
	// the word Classify read: no executable comment hides the head.
	agrees := t.kind == tWord && t.start == hs && t.end == he
	if agrees && parens == 0 && !prefix {
		t = p.statement(t)
	}
	for t.kind != tEOF {
		t = p.next()
	}

	f := &p.f
	f.ReadConsistency, f.QueryTimeout = p.lx.consistency, p.lx.timeout
	f.TargetDBServer = p.lx.target
	f.Incomplete = prefix || p.lx.unclosed
	f.PlainBegin = p.beginOK && !f.MultiStatement
	f.ReadOnly = agrees && readKind(f.Kind) && !p.writes && f.Pins == 0 && !f.MultiStatement
	if f.Incomplete {
		f.Txn, f.Chain, f.Release, f.OnePhase = TxnNone, false, false, false
		f.PlainBegin, f.TxnReadOnly, f.ReadOnly = false, false, false
		f.Kill = KillInfo{}
	}
	return p.f
}

// readKind reports whether statements of kind k read only, unless
// something in them writes.
func readKind(k StmtKind) bool {
	switch k {
	case StmtSelect, StmtShow, StmtDesc, StmtExplain:
		return true
	}
	return false
}

// isKW reports whether t is the unquoted keyword k.
func isKW(t *token, k kw) bool { return t.kind == tWord && t.kw == k }

// isEnd reports whether t ends the statement.
func isEnd(t *token) bool { return t.kind == tEOF || t.is(';') }

// isName reports whether t may be a savepoint name.
func isName(t *token) bool { return t.kind == tWord || t.kind == tQuoted }

// statement reads the transaction control or KILL that starts with the
// word t. It returns the last token it read; the facts are set only when
// the grammar matched up to the end of the statement.
func (p *pass) statement(t *token) *token {
	switch t.kw {
	case kwBegin:
		return p.begin()
	case kwStart:
		return p.start()
	case kwCommit:
		return p.finish(TxnCommit)
	case kwRollback:
		return p.finish(TxnRollback)
	case kwSavepoint:
		if t = p.next(); !isName(t) {
			return t
		}
		if t = p.next(); isEnd(t) {
			p.f.Txn = TxnSavepoint
		}
	case kwRelease:
		if t = p.next(); !isKW(t, kwSavepoint) {
			return t
		}
		if t = p.next(); !isName(t) {
			return t
		}
		if t = p.next(); isEnd(t) {
			p.f.Txn = TxnReleaseSavepoint
		}
	case kwXA:
		return p.xa()
	case kwKill:
		return p.kill()
	}
	return t
}

// begin reads BEGIN [WORK].
func (p *pass) begin() *token {
	t := p.next()
	if isKW(t, kwWork) {
		t = p.next()
	}
	if isEnd(t) {
		p.f.Txn = TxnBegin
		p.beginOK = true
	}
	return t
}

// start reads START TRANSACTION [characteristic [, characteristic] ...],
// a characteristic being WITH CONSISTENT SNAPSHOT, READ ONLY or READ WRITE.
func (p *pass) start() *token {
	t := p.next()
	if !isKW(t, kwTransaction) {
		return t
	}
	readOnly := false
	if t = p.next(); !isEnd(t) {
		for {
			switch {
			case isKW(t, kwWith):
				if t = p.next(); !isKW(t, kwConsistent) {
					return t
				}
				if t = p.next(); !isKW(t, kwSnapshot) {
					return t
				}
			case isKW(t, kwRead):
				t = p.next()
				switch {
				case isKW(t, kwOnly):
					readOnly = true
				case isKW(t, kwWrite):
				default:
					return t
				}
			default:
				return t
			}
			if t = p.next(); !t.is(',') {
				break
			}
			t = p.next()
		}
		if !isEnd(t) {
			return t
		}
	}
	p.f.Txn = TxnBegin
	p.f.TxnReadOnly = readOnly
	p.beginOK = true
	return t
}

// finish reads COMMIT|ROLLBACK [WORK] [AND [NO] CHAIN] [[NO] RELEASE] and
// ROLLBACK [WORK] TO [SAVEPOINT] name.
func (p *pass) finish(op TxnOp) *token {
	t := p.next()
	if isKW(t, kwWork) {
		t = p.next()
	}
	if op == TxnRollback && isKW(t, kwTo) {
		if t = p.next(); isKW(t, kwSavepoint) {
			t = p.next()
		}
		if !isName(t) {
			return t
		}
		if t = p.next(); isEnd(t) {
			p.f.Txn = TxnRollbackToSavepoint
		}
		return t
	}
	chain, release := false, false
	if isKW(t, kwAnd) {
		t = p.next()
		no := isKW(t, kwNo)
		if no {
			t = p.next()
		}
		if !isKW(t, kwChain) {
			return t
		}
		chain = !no
		t = p.next()
	}
	switch {
	case isKW(t, kwNo):
		if t = p.next(); !isKW(t, kwRelease) {
			return t
		}
		t = p.next()
	case isKW(t, kwRelease):
		release = true
		t = p.next()
	}
	if isEnd(t) {
		p.f.Txn, p.f.Chain, p.f.Release = op, chain, release
	}
	return t
}

// xa reads XA START|BEGIN xid [JOIN|RESUME], XA END xid [SUSPEND [FOR
// MIGRATE]], XA PREPARE xid, XA COMMIT xid [ONE PHASE] and XA ROLLBACK xid.
func (p *pass) xa() *token {
	t := p.next()
	var op TxnOp
	switch {
	case isKW(t, kwStart), isKW(t, kwBegin):
		op = TxnXAStart
	case isKW(t, kwEnd):
		op = TxnXAEnd
	case isKW(t, kwPrepare):
		op = TxnXAPrepare
	case isKW(t, kwCommit):
		op = TxnXACommit
	case isKW(t, kwRollback):
		op = TxnXARollback
	default:
		return t
	}
	t, ok := p.xid()
	if !ok {
		return t
	}
	onePhase := false
	switch {
	case op == TxnXAStart && (isKW(t, kwJoin) || isKW(t, kwResume)):
		t = p.next()
	case op == TxnXAEnd && isKW(t, kwSuspend):
		if t = p.next(); isKW(t, kwFor) {
			if t = p.next(); !isKW(t, kwMigrate) {
				return t
			}
			t = p.next()
		}
	case op == TxnXACommit && isKW(t, kwOne):
		if t = p.next(); !isKW(t, kwPhase) {
			return t
		}
		onePhase = true
		t = p.next()
	}
	if isEnd(t) {
		p.f.Txn, p.f.OnePhase = op, onePhase
	}
	return t
}

// xid reads gtrid [, bqual [, formatID]] and returns the token after it.
func (p *pass) xid() (*token, bool) {
	t, ok := p.xidPart()
	for i := 0; ok && i < 2 && t.is(','); i++ {
		t, ok = p.xidPart()
	}
	return t, ok
}

// xidPart reads one part of an XA id: a string (with an optional
// introducer such as X, B or _utf8mb4), a number or a 0x/0b literal. It
// returns the token after it.
func (p *pass) xidPart() (*token, bool) {
	t := p.next()
	switch t.kind {
	case tString, tNumber:
		return p.next(), true
	case tWord:
		w := p.lx.s[t.start:t.end]
		if len(w) > 2 && w[0] == '0' && (w[1] == 'x' || w[1] == 'X' || w[1] == 'b' || w[1] == 'B') {
			return p.next(), true
		}
		if EqualFold(w, "X") || EqualFold(w, "B") || w[0] == '_' {
			if t = p.next(); t.kind == tString {
				return p.next(), true
			}
		}
	}
	return t, false
}

// kill reads KILL [CONNECTION | QUERY] id [;...]: the whole text must be
// that statement. The id may be written as a negative number, the signed
// 32-bit reading of an id above 2^31: MariaDB Connector/J 2.x keeps the
// handshake's connection id in a signed int and cancels a statement with
// KILL QUERY -1769996222 for id 2524971074.
func (p *pass) kill() *token {
	t := p.next()
	query := false
	switch {
	case isKW(t, kwQuery):
		query = true
		t = p.next()
	case isKW(t, kwConnection):
		t = p.next()
	}
	negative := t.is('-')
	if negative {
		t = p.next()
	}
	if t.kind != tNumber {
		return t
	}
	limit := uint64(1<<32 - 1)
	if negative {
		limit = 1 << 31
	}
	id, ok := parseDecimal(p.lx.s[t.start:t.end], limit)
	if !ok || negative && id == 0 {
		return t
	}
	if negative {
		id = 1<<32 - id
	}
	t = p.next()
	for t.is(';') {
		t = p.next()
	}
	if t.kind == tEOF {
		p.f.Kill = KillInfo{ID: uint32(id), Query: query, OK: true}
	}
	return t
}
