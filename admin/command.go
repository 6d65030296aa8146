package admin

// cmdKind is an internal command.
type cmdKind uint8

const (
	cmdUnknown cmdKind = iota
	cmdShowConfig
	cmdAlterConfig
	cmdShowSession
	cmdShowSessionAttribute
	cmdShowSessionVariables
	cmdKillSession
	cmdPing
	cmdProxyVersion
	cmdProxyStatus
	cmdShowCongestion
	cmdShowRoute
	cmdShowRoutePartition
	cmdExplainRoute // EXPLAIN ROUTE <sql>; the statement is in command.value
	cmdShowStat
	cmdSelectVars // SELECT @@a, @@b [LIMIT n] in an administrator session
	cmdNeedOK     // SET, BEGIN, COMMIT, ROLLBACK, USE in an administrator session
	cmdShowProcesslist
	cmdShowInfoBinary    // SHOW PROXYINFO BINARY
	cmdShowInfoUpgrade   // SHOW PROXYINFO UPGRADE
	cmdShowInfoIDC       // SHOW PROXYINFO IDC
	cmdShowMemory        // SHOW PROXYMEMORY [n]
	cmdShowMemoryObjpool // SHOW PROXYMEMORY OBJPOOL [n]
	cmdShowNetThread     // SHOW PROXYNET THREAD
	cmdShowNetConnection // SHOW PROXYNET CONNECTION [thread_id [LIMIT ...]]
	cmdShowCluster       // SHOW PROXYCLUSTER [LIKE]
	cmdShowClusterIDC    // SHOW PROXYCLUSTER IDC [LIKE]
	cmdShowResource      // SHOW PROXYRESOURCE [LIKE]
	cmdShowWarnlog       // SHOW WARNLOG [log_id[, thread_id[, 'time']]]
)

// command is a parsed internal command.
type command struct {
	kind    cmdKind
	like    string
	hasLike bool
	diff    bool // SHOW PROXYCONFIG DIFF
	user    bool // SHOW PROXYCONFIG DIFF USER
	all     bool // ... ALL
	name    string
	value   string
	id      uint64
	hasID   bool
	ssid    uint64
	hasSSID bool
	cluster string
	vars    []string
	refresh bool // SHOW PROXYSTAT REFRESH
	// LIMIT of SHOW PROXYNET CONNECTION (limit -1: none).
	limit, offset int64
	// SHOW WARNLOG's filters: log ids from logID, of thread threadID
	// (-1: any), logged at or after since ("" any).
	logID, threadID int64
	since           string
}

// parseCommand recognises an internal command. It returns cmdUnknown for
// anything else and never panics.
func parseCommand(sql string) command {
	p := newParser(sql)
	var c command
	switch {
	case p.keyword("SHOW"):
		c = parseShow(p)
	case p.keyword("ALTER"):
		c = parseAlter(p)
	case p.keyword("KILL"):
		if p.keyword("PROXYSESSION") {
			if c.id, c.hasID = p.number(); c.hasID {
				c.ssid, c.hasSSID = p.number()
				c.kind = cmdKillSession
			}
		}
	case p.keyword("PING"):
		if p.keyword("PROXY") {
			c.kind = cmdPing
		}
	case p.keyword("SELECT"):
		c = parseSelect(p)
	case p.keyword("SET"), p.keyword("BEGIN"), p.keyword("COMMIT"), p.keyword("ROLLBACK"), p.keyword("USE"):
		c.kind = cmdNeedOK
		return c // the rest is not checked: ODP answers OK
	case p.keyword("START"):
		if p.keyword("TRANSACTION") {
			c.kind = cmdNeedOK
			return c
		}
	}
	if !p.done() {
		return command{}
	}
	return c
}

func parseShow(p *parser) command {
	var c command
	switch {
	case p.keyword("PROXYCONFIG"):
		c.kind = cmdShowConfig
		if p.keyword("DIFF") {
			c.diff = true
			c.user = p.keyword("USER")
		} else if p.keyword("ALL") {
			c.all = true
		}
	case p.keyword("PROXYSESSION"):
		c.kind = cmdShowSession
		switch {
		case p.keyword("ATTRIBUTE"):
			c.kind = cmdShowSessionAttribute
			c.id, c.hasID = p.number()
		case p.keyword("VARIABLES"):
			c.kind = cmdShowSessionVariables
			c.all = p.keyword("ALL")
			c.id, c.hasID = p.number()
		}
	case p.keyword("PROXYCONGESTION"):
		c.kind = cmdShowCongestion
		c.all = p.keyword("ALL")
		if t, ok := p.peekWord(); ok && t.upper() != "LIKE" {
			p.pos++
			c.cluster = t.text
		} else if p.pos < len(p.toks) && p.toks[p.pos].kind == tokString {
			c.cluster = p.toks[p.pos].text // SHOW PROXYCONGESTION 'cluster'
			p.pos++
		}
	case p.keyword("PROCESSLIST"):
		c.kind = cmdShowProcesslist
	case p.keyword("PROXYROUTE"):
		c.kind = p.ifKeyword("PARTITION", cmdShowRoutePartition, cmdShowRoute)
	case p.keyword("PROXYSTAT"):
		c.kind = cmdShowStat
		c.refresh = p.keyword("REFRESH")
	default:
		var ok bool
		if c, ok = parseShowView(p); !ok {
			return command{}
		}
	}
	var ok bool
	if c.like, c.hasLike, ok = p.likePattern(); !ok {
		return command{}
	}
	return c
}

func parseAlter(p *parser) command {
	var c command
	if !p.keyword("PROXYCONFIG") || !p.keyword("SET") {
		return c
	}
	name, ok := p.next()
	if !ok || (name.kind != tokWord && name.kind != tokString) || !p.punct("=") {
		return c
	}
	val, ok := p.next()
	if ok && val.kind == tokPunct && val.text == "-" {
		// A negative number (-1, -5s): the item's range decides.
		if num, more := p.next(); more && num.kind != tokPunct && num.kind != tokString && num.text != "" && isDigit(num.text[0]) {
			val = token{num.kind, "-" + num.text}
		}
	}
	if !ok || val.kind == tokPunct {
		return c
	}
	c.kind, c.name, c.value = cmdAlterConfig, name.text, val.text
	return c
}

func parseSelect(p *parser) command {
	var c command
	switch {
	case p.keyword("PROXY_VERSION"):
		c.kind = cmdProxyVersion
	case p.keyword("PROXY_STATUS"):
		c.kind = cmdProxyStatus
	default:
		for {
			t, ok := p.next()
			if !ok || t.kind != tokWord || len(t.text) < 3 || t.text[0] != '@' {
				return command{}
			}
			c.vars = append(c.vars, t.text)
			if !p.punct(",") {
				break
			}
		}
		if p.keyword("LIMIT") {
			if _, ok := p.number(); !ok {
				return command{}
			}
		}
		c.kind = cmdSelectVars
		return c
	}
	if !p.punct("(") || !p.punct(")") {
		return command{}
	}
	// An optional alias: AS name, or name.
	if p.keyword("AS") {
		if _, ok := p.next(); !ok {
			return command{}
		}
	}
	return c
}

// peekWord returns the next token if it is a word, without consuming it.
func (p *parser) peekWord() (token, bool) {
	if p.pos < len(p.toks) && p.toks[p.pos].kind == tokWord {
		return p.toks[p.pos], true
	}
	return token{}, false
}
