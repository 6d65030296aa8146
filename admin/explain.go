package admin

import (
	"bytes"
	"fmt"
	"strings"

	"obgate/mysqlproto"
	"obgate/reactor"
)

// explainRoute recognises EXPLAIN ROUTE <statement> and returns the
// statement's text.
func explainRoute(query []byte) ([]byte, bool) {
	q := bytes.TrimLeft(query, " \t\r\n")
	word := func(w string) bool {
		if len(q) < len(w) || !bytes.EqualFold(q[:len(w)], []byte(w)) {
			return false
		}
		if len(q) > len(w) && !isBlank(q[len(w)]) {
			return false
		}
		q = bytes.TrimLeft(q[len(w):], " \t\r\n")
		return true
	}
	if !word("EXPLAIN") || !word("ROUTE") || len(q) == 0 {
		return nil, false
	}
	return q, true
}

func isBlank(c byte) bool { return c == ' ' || c == '\t' || c == '\r' || c == '\n' }

// explainRoute answers EXPLAIN ROUTE with rows of (step, detail): the
// statement facts routing used, the table entry, the partition and how it
// was computed, the route policy, every candidate in order with the reason
// for its place, and the server obgate would use now.
func (a *Admin) explainRoute(sess *reactor.Session, stmt []byte, reply *reactor.Reply) error {
	ex := sess.ExplainRoute(stmt)
	if ex.Err == reactor.ErrNotOceanBase {
		return reply.Error(mysqlproto.NewSQLError(mysqlproto.ERNotSupportedYet, "%v", ex.Err))
	}
	rs := newResultSet([]string{"step", "detail"})
	add := func(step, detail string) { rs.Rows = append(rs.Rows, []any{step, detail}) }
	f := &ex.Facts
	var tables []string
	for i := range f.NumTables {
		t := f.Tables[i]
		name := string(t.Name)
		if len(t.DB) > 0 {
			name = string(t.DB) + "." + name
		}
		tables = append(tables, name)
	}
	add("statement", fmt.Sprintf("kind=%s tables=[%s] read_consistency=%s read_only=%v",
		f.Kind, strings.Join(tables, ", "), f.ReadConsistency, f.ReadOnly))
	if len(f.TargetDBServer) > 0 {
		add("target_db_server", string(f.TargetDBServer))
	}
	p := &ex.Plan
	if ex.Bound {
		add("bound", "the session must stay on its last server (transaction, temporary tables, locks or a dependent function)")
	} else {
		if p.Table != "" {
			add("table", fmt.Sprintf("%s entry=%s table_id=%d partitions=%d", p.Table, p.EntryState, p.TableID, p.PartNum))
		}
		if p.Table != "" && p.PartNum > 1 || p.Partition.How != "" {
			pr := &p.Partition
			detail := pr.How
			switch {
			case pr.Known && pr.Sub >= 0:
				detail = fmt.Sprintf("tablet %d (partition %d, sub-partition %d): %s", pr.TabletID, pr.Part, pr.Sub, pr.How)
			case pr.Known:
				detail = fmt.Sprintf("tablet %d (partition %d): %s", pr.TabletID, pr.Part, pr.How)
			case p.Tablet >= 0:
				detail = fmt.Sprintf("tablet %d: %s", p.Tablet, pr.How)
			}
			if len(pr.Keys) > 0 {
				detail += " keys: " + strings.Join(pr.Keys, ", ")
			}
			add("partition", detail)
		}
		ldc := "off"
		if p.LDC {
			ldc = "on, proxy IDC " + p.IDC
		}
		consistency := "strong"
		if p.Weak {
			consistency = "weak"
		}
		policy := p.Policy.String()
		if p.Optimized {
			policy += "_OPTIMIZED"
		}
		add("policy", fmt.Sprintf("%s read, route policy %s, LDC %s", consistency, policy, ldc))
		for i, c := range p.Candidates {
			state := "available"
			if c.Tried {
				state = "failed this statement"
			} else if !c.Available {
				state = "blocklisted"
			}
			add(fmt.Sprintf("candidate %d", i+1), fmt.Sprintf("%s zone=%s idc=%s region=%s type=%s %s %s, %s: %s",
				c.Addr, c.Zone, c.IDC, c.Region, c.ZoneType, c.LDC, c.Role, state, c.Reason))
		}
		for _, n := range p.Notes {
			add("note", n)
		}
	}
	if ex.Err != nil {
		add("used", "none: "+ex.Err.Error())
	} else {
		add("used", ex.Used)
	}
	return a.send(reply, rs)
}
