package obsim

import (
	"fmt"
	"net"
	"strings"
	"time"
)

// Remote plans. An OBServer that runs a statement on partitions it does not
// lead (for a weak read: of which it holds no replica) sends the plan to
// the node that does and waits for the answer: one more internal round
// trip. obsim's nodes all run statements on the one MariaDB, so they add
// that round trip as a sleep of the cluster's remote-plan cost, paid where
// a statement is found to be remote and before its answer is relayed.

// defaultRemotePlanCost is the cost of a topology that does not set
// remote_plan_cost.
const defaultRemotePlanCost = time.Millisecond

// parseRemotePlanCost reads a remote_plan_cost value: a Go duration, "0"
// for none, "" for the default.
func parseRemotePlanCost(s string) (time.Duration, error) {
	s = strings.TrimSpace(s)
	switch s {
	case "":
		return defaultRemotePlanCost, nil
	case "0":
		return 0, nil
	}
	d, err := time.ParseDuration(s)
	if err != nil {
		return 0, fmt.Errorf("obsim: remote_plan_cost %q: %w", s, err)
	}
	if d < 0 {
		return 0, fmt.Errorf("obsim: remote_plan_cost %q is negative", s)
	}
	return d, nil
}

// topoRemotePlanCost is the normalized topology's remote_plan_cost.
func (c *Cluster) topoRemotePlanCost() time.Duration {
	d, _ := parseRemotePlanCost(c.topo.RemotePlanCost) // checked by normalize
	return d
}

// SetRemotePlanCost sets the time every node adds to a statement it runs
// as a remote plan; 0 turns it off (negative values count as 0). It
// applies to statements that start after the call. Reset restores the
// topology's value.
func (c *Cluster) SetRemotePlanCost(d time.Duration) { c.remoteCost.Store(int64(max(d, 0))) }

// RemotePlanCost is the time a node adds to a statement it runs as a
// remote plan.
func (c *Cluster) RemotePlanCost() time.Duration { return time.Duration(c.remoteCost.Load()) }

// place decides where the statements of one command run: the log entry
// gets the table, partitions, local and weak of the first statement (what
// ob_proxy_partition_hit reports), every statement (the first, then those
// of a multi-statement query after it) is counted in the node's stats
// (stats.go), and the remote-plan cost is paid once for each remote one
// before the command is relayed to MariaDB.
//
// Called by the session's goroutine with no lock held: placement takes
// Cluster.mu and releases it before the sleep. It returns an error only
// when the session is killed during the sleep.
func (s *session) place(entry *LogEntry, first *stmtInfo, more []*stmtInfo) error {
	entry.Table, entry.Partitions, entry.Local, entry.Weak = s.placement(first)
	ctr := s.counters()
	ctr.count(entry.Local, entry.Weak)
	remote := 0
	if !entry.Local {
		remote++
	}
	for _, st := range more {
		_, _, local, weak := s.placement(st)
		ctr.count(local, weak)
		if !local {
			remote++
		}
	}
	return s.payRemotePlans(remote)
}

// payRemotePlans sleeps n times the remote-plan cost, or until the session
// is killed (then it returns net.ErrClosed).
func (s *session) payRemotePlans(n int) error {
	if n == 0 {
		return nil
	}
	d := s.c.RemotePlanCost() * time.Duration(n)
	if d <= 0 {
		return nil
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-s.done:
		return net.ErrClosed
	}
}
