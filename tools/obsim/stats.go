package obsim

import "sync/atomic"

// Statement counters for benchmarks: per node and client kind, how many
// statements ran locally and as remote plans. The statement log keeps only
// the last entries; these count everything since the start (or the last
// ResetStats) with a few atomic adds per statement.

// StatementStats counts statements. Statements = Local + Remote; Weak
// counts the weak reads among them (each is also local or remote).
type StatementStats struct {
	Statements uint64 `json:"statements"`
	Local      uint64 `json:"local"`
	Remote     uint64 `json:"remote"`
	Weak       uint64 `json:"weak"`
}

func (a *StatementStats) add(b StatementStats) {
	a.Statements += b.Statements
	a.Local += b.Local
	a.Remote += b.Remote
	a.Weak += b.Weak
}

// NodeStats are a node's counts (or the cluster's in Stats.Total): all
// clients, and split into proxied clients (logged in with
// __mysql_client_type=__ob_proxy) and direct ones.
type NodeStats struct {
	StatementStats
	Proxy  StatementStats `json:"proxy"`
	Direct StatementStats `json:"direct"`
}

// Stats are the counts of every node and their sum.
type Stats struct {
	Nodes map[string]NodeStats `json:"nodes"`
	Total NodeStats            `json:"total"`
}

// stmtCounters are the counters of one client kind on one node. Session
// goroutines add to them; Stats and ResetStats read and clear them from
// any goroutine.
type stmtCounters struct {
	local, remote, weak atomic.Uint64
}

// count adds one statement.
func (c *stmtCounters) count(local, weak bool) {
	if local {
		c.local.Add(1)
	} else {
		c.remote.Add(1)
	}
	if weak {
		c.weak.Add(1)
	}
}

func (c *stmtCounters) snapshot() StatementStats {
	st := StatementStats{Local: c.local.Load(), Remote: c.remote.Load(), Weak: c.weak.Load()}
	st.Statements = st.Local + st.Remote
	return st
}

func (c *stmtCounters) reset() {
	c.local.Store(0)
	c.remote.Store(0)
	c.weak.Store(0)
}

// Client kinds, the index into Node.stats.
const (
	statsDirect = iota
	statsProxy
)

// counters are the counters of the session's client kind.
func (s *session) counters() *stmtCounters {
	if s.clientType == "proxy" {
		return &s.n.stats[statsProxy]
	}
	return &s.n.stats[statsDirect]
}

// Stats returns the node's statement counts: every COM_QUERY statement
// (each statement of a multi-statement query) and COM_STMT_EXECUTE it ran,
// on topology tables or not, since the cluster started or ResetStats.
// Statements answered with an injected error are not counted.
func (n *Node) Stats() NodeStats {
	st := NodeStats{Proxy: n.stats[statsProxy].snapshot(), Direct: n.stats[statsDirect].snapshot()}
	st.add(st.Proxy)
	st.add(st.Direct)
	return st
}

// Stats returns every node's statement counts and their total.
func (c *Cluster) Stats() Stats {
	out := Stats{Nodes: map[string]NodeStats{}}
	for _, n := range c.nodeList {
		ns := n.Stats()
		out.Nodes[n.name] = ns
		out.Total.add(ns.StatementStats)
		out.Total.Proxy.add(ns.Proxy)
		out.Total.Direct.add(ns.Direct)
	}
	return out
}

// ResetStats sets every node's counters to zero. A statement counted at the
// same time may land before or after the reset. Reset does not clear them.
func (c *Cluster) ResetStats() {
	for _, n := range c.nodeList {
		for i := range n.stats {
			n.stats[i].reset()
		}
	}
}
