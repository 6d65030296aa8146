package admin

// parseShowView parses the SHOW forms of ODP's diagnostic views after
// SHOW (ob_proxy_parser.y): PROXYINFO, PROXYMEMORY, PROXYNET,
// PROXYCLUSTER, PROXYRESOURCE and WARNLOG. ok is false when the statement
// is none of them or is malformed.
func parseShowView(p *parser) (c command, ok bool) {
	c.limit, c.logID, c.threadID = -1, -1, -1
	switch {
	case p.keyword("PROXYINFO"):
		switch {
		case p.keyword("BINARY"):
			c.kind = cmdShowInfoBinary
		case p.keyword("UPGRADE"):
			c.kind = cmdShowInfoUpgrade
		case p.keyword("IDC"):
			c.kind = cmdShowInfoIDC
		default:
			return c, false
		}
	case p.keyword("PROXYMEMORY"):
		c.kind = p.ifKeyword("OBJPOOL", cmdShowMemoryObjpool, cmdShowMemory)
		c.id, c.hasID = p.number()
	case p.keyword("PROXYNET"):
		switch {
		case p.keyword("THREAD"):
			c.kind = cmdShowNetThread
		case p.keyword("CONNECTION"):
			c.kind = cmdShowNetConnection
			if c.id, c.hasID = p.number(); c.hasID && p.keyword("LIMIT") {
				if !parseLimit(p, &c) {
					return c, false
				}
			}
		default:
			return c, false
		}
	case p.keyword("PROXYCLUSTER"):
		c.kind = p.ifKeyword("IDC", cmdShowClusterIDC, cmdShowCluster)
	case p.keyword("PROXYRESOURCE"):
		c.kind = cmdShowResource
	case p.keyword("WARNLOG"):
		c.kind = cmdShowWarnlog
		n, more := p.number()
		if !more {
			break
		}
		c.logID = int64(n)
		if !p.punct(",") {
			break
		}
		if n, more = p.number(); !more {
			return c, false
		}
		c.threadID = int64(n)
		if !p.punct(",") {
			break
		}
		t, more := p.next()
		if !more || t.kind == tokPunct || t.text == "" {
			return c, false
		}
		c.since = t.text
	default:
		return c, false
	}
	return c, true
}

// parseLimit reads what follows LIMIT: rows, "offset, rows" or "rows
// OFFSET offset".
func parseLimit(p *parser, c *command) bool {
	a, ok := p.number()
	if !ok || a > 1<<62 {
		return false
	}
	switch {
	case p.punct(","):
		b, ok := p.number()
		if !ok || b > 1<<62 {
			return false
		}
		c.offset, c.limit = int64(a), int64(b)
	case p.keyword("OFFSET"):
		b, ok := p.number()
		if !ok || b > 1<<62 {
			return false
		}
		c.limit, c.offset = int64(a), int64(b)
	default:
		c.limit = int64(a)
	}
	return true
}
