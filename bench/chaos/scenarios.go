package chaos

import (
	"context"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"

	"obgate/tools/obsim"
)

// Scenario is one fault, its timeline and its expectations.
type Scenario struct {
	Name  string
	Title string
	// MySQL runs it against two MariaDB servers in mysql routing mode,
	// once through obgate and once through HAProxy, instead of obsim.
	MySQL bool
	// Node is the obsim node broken (scenarios that pick it at run time
	// overwrite it).
	Node string
	// Opts are obgate's -o options for the scenario (for a MySQL one,
	// after server_routing_mode=mysql; nil there gives detection as
	// frequent as HAProxy's check).
	Opts []string
	// Prepared runs the load with server-side prepared statements
	// (LoadConfig.Prepared).
	Prepared bool
	// Blind says what obsim's statement log cannot see of the fault.
	Blind Blindness
	// Upgrades says obgate runs from a copy in the run's directory, with
	// the builds it upgrades to prepared (upgrade.go).
	Upgrades bool
	// play runs the timeline while the load runs.
	play func(ctx context.Context, r *run) error
	// afterLoad runs once the load has stopped, before the ledger is read.
	afterLoad func(ctx context.Context, r *run) error
	// judge adds the checks.
	judge func(r *run)
}

// Blindness says what obsim's statement log misses of a fault.
type Blindness uint8

const (
	// SeesAll: the node keeps answering; every request is logged.
	SeesAll Blindness = iota
	// BlindDuring: the node cannot log what is sent during the fault (a
	// stopped node refuses connections).
	BlindDuring
	// BlindBacklog: requests sent during the fault are logged when it
	// ends (a hung node runs them on release), so neither the drain nor
	// the return can be read from the log.
	BlindBacklog
)

// Short HA intervals for every obsim scenario, so that a fault and its
// repair fit in seconds; each scenario's expectations are computed from
// the values obgate reports for them.
var haOpts = []string{
	"server_state_refresh_interval=2s",
	"min_keep_congestion_interval=3s",
	"congestion_retry_interval=2s",
}

func withHA(extra ...string) []string { return append(append([]string(nil), haOpts...), extra...) }

// faultNode is the node the fixed scenarios break.
const faultNode = "zone2-1"

// QuickScenarios are the short form (make test): stop, inject 8001, break
// a write transaction.
var QuickScenarios = []string{"stop", "error8001", "txnbreak"}

// Scenarios returns every scenario in the order the suite runs them.
func Scenarios() []*Scenario {
	return []*Scenario{
		{Name: "stop", Title: "stop a node, then start it", Node: faultNode, Opts: withHA(), Blind: BlindDuring,
			play: func(ctx context.Context, r *run) error {
				n := r.res.Server
				return r.window(ctx, r.warm(), "stop "+n, func() error { return r.sim.Ctl.NodeAction(n, "stop") },
					r.set.phase(10*time.Second, 5*time.Second), "start "+n, func() error { return r.sim.Ctl.NodeAction(n, "start") },
					r.afterRepair())
			},
			judge: func(r *run) {
				r.checkNoReadErrors()
				if w, ok := r.windowAt(0); ok {
					r.checkDrain(w, time.Second, "the next statement goes elsewhere")
					r.checkReturn(w, r.duration("min_keep_congestion_interval")+r.duration("server_state_refresh_interval"),
						"min_keep_congestion_interval + server_state_refresh_interval")
					r.checkWritesOnlyInFlight("the stop", w.FaultAt)
				}
				r.checkLedger()
				r.checkLeak()
			}},
		{Name: "hang", Title: "hang a node (default detection), then release it", Node: faultNode, Opts: withHA(),
			Blind: BlindBacklog,
			play: func(ctx context.Context, r *run) error {
				n := r.res.Server
				hold := max(r.set.phase(10*time.Second, 5*time.Second), 3*r.duration("detect_server_timeout")+3*time.Second)
				return r.window(ctx, r.warm(), "hang "+n, func() error { return r.sim.Ctl.NodeAction(n, "hang") },
					hold, "unhang "+n, func() error { return r.sim.Ctl.NodeAction(n, "unhang") }, r.afterRepair())
			},
			judge: func(r *run) {
				if w, ok := r.windowAt(0); ok {
					// The first probe starts within one detect period of
					// the hang, and the list is sampled once a second.
					r.checkListedWithin(w, 3*r.duration("detect_server_timeout")+r.duration("server_detect_refresh_interval")+time.Second,
						"about 3 × detect_server_timeout: the probes' timeouts, one detect period, one sample")
					r.checkDrain(w, 3*r.duration("detect_server_timeout")+time.Second, "3 × detect_server_timeout + 1 s")
					r.checkHungClosed(w)
				}
				r.checkLedger()
				r.checkLeak()
			}},
		{Name: "hang-detect", Title: "hang a node with fast detection, then release it", Node: faultNode, Blind: BlindBacklog,
			// Mode 3 probes every server with a login and a statement.
			Opts: withHA("server_detect_mode=3", "detect_server_timeout=1s"),
			play: func(ctx context.Context, r *run) error {
				n := r.res.Server
				return r.window(ctx, r.warm(), "hang "+n, func() error { return r.sim.Ctl.NodeAction(n, "hang") },
					max(r.set.phase(10*time.Second, 5*time.Second), 8*time.Second), "unhang "+n,
					func() error { return r.sim.Ctl.NodeAction(n, "unhang") }, r.afterRepair())
			},
			judge: func(r *run) {
				if w, ok := r.windowAt(0); ok {
					r.checkListedWithin(w, 4*time.Second, "detect_server_timeout=1s: within 4 s")
					r.checkNoReadErrors()
					r.checkHungClosed(w)
				}
				r.checkLedger()
				r.checkLeak()
			}},
		{Name: "slow", Title: "slow a node by 300 ms per reply", Node: faultNode, Opts: withHA(),
			play: func(ctx context.Context, r *run) error {
				n := r.res.Server
				return r.window(ctx, r.warm(), "slow "+n+" 300ms", func() error { return r.sim.Ctl.Slow(n, 300*time.Millisecond) },
					r.set.phase(10*time.Second, 5*time.Second), "unslow "+n, func() error { return r.sim.Ctl.Slow(n, 0) },
					r.set.phase(4*time.Second, 2*time.Second))
			},
			judge: func(r *run) {
				if w, ok := r.windowAt(0); ok {
					r.checkNeverListed(w, "slow is not dead")
				}
				r.checkNoReadErrors()
				r.checkLedger()
				r.checkLeak()
			}},
		stateScenario("inactive", "set a node INACTIVE, then ACTIVE",
			func(c *obsim.ControlClient, node string) error {
				return c.SetStatus(node, obsim.StatusChange{Status: ptr("INACTIVE")})
			},
			func(c *obsim.ControlClient, node string) error {
				return c.SetStatus(node, obsim.StatusChange{Status: ptr("ACTIVE")})
			}),
		stateScenario("stoptime", "set a node's stop_time (upgrade), then clear it",
			func(c *obsim.ControlClient, node string) error {
				return c.SetStatus(node, obsim.StatusChange{StopTime: ptr("now")})
			},
			func(c *obsim.ControlClient, node string) error {
				return c.SetStatus(node, obsim.StatusChange{StopTime: ptr("null")})
			}),
		stateScenario("zone-inactive", "set a node's zone INACTIVE, then ACTIVE",
			func(c *obsim.ControlClient, node string) error { return c.SetZoneStatus(zoneOf(node), "INACTIVE") },
			func(c *obsim.ControlClient, node string) error { return c.SetZoneStatus(zoneOf(node), "ACTIVE") }),
		errorScenario(8001),
		errorScenario(8002),
		txnBreakScenario(),
		mariaScenario(),
		preparedScenario(),
		preparedMariaScenario(),
		upgradeScenario(),
		upgradeMariaScenario(),
	}
}

// upgradeScenario is three hot upgrades (SIGUSR2) in a row, each to
// another build, under the prepared-statement load: no client may see an
// error or open a connection, and the newest process serves every
// session (upgrade.go).
func upgradeScenario() *Scenario {
	return &Scenario{Name: "upgrade", Title: "three hot upgrades (SIGUSR2), each to another build",
		Node: faultNode, Prepared: true, Upgrades: true, Opts: withHA(), play: playUpgrades, judge: judgeUpgrades}
}

// upgradeMariaScenario is upgradeScenario in mysql routing mode, with
// HAProxy's reload (-sf) as the reference.
func upgradeMariaScenario() *Scenario {
	return &Scenario{Name: "upgrade-mariadb", MySQL: true, Prepared: true, Upgrades: true,
		Title: "three hot upgrades (SIGUSR2; HAProxy: reload with -sf), each to another build",
		play:  playUpgrades, judge: judgeUpgrades}
}

// secondFaultNode is the node preparedScenario stops after it hung
// faultNode.
const secondFaultNode = "zone3-1"

// preparedScenario is the most common client pattern under faults, with
// obgate's default parameters: go-sql-driver with parameterized queries,
// which it prepares on the server, executes and closes; 5 s read timeouts.
// One node hangs for 20 s, then another stops for 15 s. No read and no
// connect may fail; a write may fail only as one of unknown outcome or of
// a broken transaction.
func preparedScenario() *Scenario {
	return &Scenario{Name: "prepared", Title: "prepared statements, default parameters: hang a node 20 s, then stop another 15 s",
		Node: faultNode, Prepared: true, Blind: BlindBacklog,
		play: func(ctx context.Context, r *run) error {
			if err := r.window(ctx, r.warm(), "hang "+faultNode, func() error { return r.sim.Ctl.NodeAction(faultNode, "hang") },
				r.set.phase(20*time.Second, 8*time.Second), "unhang "+faultNode,
				func() error { return r.sim.Ctl.NodeAction(faultNode, "unhang") }, 0); err != nil {
				return err
			}
			return r.window(ctx, r.set.phase(5*time.Second, 3*time.Second), "stop "+secondFaultNode,
				func() error { return r.sim.Ctl.NodeAction(secondFaultNode, "stop") },
				r.set.phase(15*time.Second, 6*time.Second), "start "+secondFaultNode,
				func() error { return r.sim.Ctl.NodeAction(secondFaultNode, "start") }, r.afterRepair())
		},
		judge: judgePrepared}
}

// preparedMariaScenario is preparedScenario against two MariaDB servers in
// mysql routing mode (obgate with its default detection), and HAProxy:
// SIGSTOP one for 15 s, SIGCONT, then SIGKILL it.
func preparedMariaScenario() *Scenario {
	return &Scenario{Name: "prepared-mariadb", MySQL: true, Prepared: true, Opts: []string{},
		Title: "prepared statements, default parameters: two MariaDB servers, SIGSTOP one, SIGCONT it, then SIGKILL it",
		play:  playMaria, afterLoad: reviveKilled, judge: judgePrepared}
}

func judgePrepared(r *run) {
	r.checkNoReadErrors()
	r.checkNoConnectFailures()
	r.checkWritesFailOnlyAsUnknownOrBroken()
	r.checkLedger()
	r.checkLeak()
}

// Lookup returns the named scenarios, or an error naming the unknown one.
func Lookup(names []string) ([]*Scenario, error) {
	all := Scenarios()
	var out []*Scenario
	for _, n := range names {
		n = strings.TrimSpace(n)
		found := false
		for _, sc := range all {
			if sc.Name == n {
				out = append(out, sc)
				found = true
			}
		}
		if !found {
			var known []string
			for _, sc := range all {
				known = append(known, sc.Name)
			}
			return nil, fmt.Errorf("unknown scenario %q (known: %s)", n, strings.Join(known, ", "))
		}
	}
	return out, nil
}

func ptr[T any](v T) *T { return &v }

// zoneOf is the zone of an obsim node ("zone2-1" → "zone2").
func zoneOf(node string) string {
	if i := strings.LastIndexByte(node, '-'); i > 0 {
		return node[:i]
	}
	return node
}

func (r *run) warm() time.Duration { return r.set.phase(5*time.Second, 2*time.Second) }

// afterRepair observes long enough for a repaired server to be taken back:
// it stays congested for min_keep_congestion_interval and is seen healthy
// at the next state refresh.
func (r *run) afterRepair() time.Duration {
	need := r.duration("min_keep_congestion_interval") + r.duration("server_state_refresh_interval") + 2*time.Second
	return max(r.set.phase(6*time.Second, 4*time.Second), need)
}

// checkHungClosed: obgate closed its connections to the hung node before
// it was released: obgate's own count of its server sessions to the node
// (obgate_server_sessions) falls to at most one, a probe. obsim's count
// cannot show it: a hung node notices no close until it is released.
// Without obgate's gauge, obsim's count is used.
func (r *run) checkHungClosed(w Window) {
	defer r.timed()
	name := fmt.Sprintf("connections to the hung %s closed before the release", r.res.Server)
	var ts []float64
	var counts []int
	src := "obgate's server sessions to the node"
	if r.mets != nil {
		ts, counts = r.mets.sessionsDuring(r.res.ServerAddr, w.FaultAt, w.RecoverAt)
	}
	if len(counts) == 0 && r.sess != nil {
		src = "sessions obsim counts on the node"
		ts, counts = r.sess.node(r.res.Server, w.FaultAt, w.RecoverAt)
	}
	if len(ts) == 0 && r.sess == nil && r.mets == nil {
		r.add(name, Unknown, "no session counts")
		return
	}
	if len(counts) == 0 {
		r.add(name, Unknown, "no session samples during the hang")
		return
	}
	peak, low, lowAt := 0, counts[0], ts[0]
	for i, c := range counts {
		peak = max(peak, c)
		if c < low {
			low, lowAt = c, ts[i]
		}
	}
	if low <= 1 {
		r.check(name, true, "%s: up to %d, down to %d at %.1f s after the fault", src, peak, low, lowAt-w.FaultAt)
		return
	}
	r.check(name, false, "%s: up to %d, never below %d during the hang", src, peak, low)
}

// stateScenario changes what the cluster's views say about a node: obsim
// keeps serving it, so only obgate's state refresh can drain it.
func stateScenario(name, title string, apply, undo func(*obsim.ControlClient, string) error) *Scenario {
	return &Scenario{Name: name, Title: title, Node: faultNode, Opts: withHA(),
		play: func(ctx context.Context, r *run) error {
			n := r.res.Server
			hold := max(r.set.phase(10*time.Second, 5*time.Second), 2*r.duration("server_state_refresh_interval")+2*time.Second)
			return r.window(ctx, r.warm(), name+" "+n, func() error { return apply(r.sim.Ctl, n) },
				hold, "undo "+name+" "+n, func() error { return undo(r.sim.Ctl, n) }, r.afterRepair())
		},
		judge: func(r *run) {
			if w, ok := r.windowAt(0); ok {
				r.checkDrain(w, r.duration("server_state_refresh_interval")+500*time.Millisecond,
					"one server_state_refresh_interval")
				r.checkReturn(w, r.duration("min_keep_congestion_interval")+r.duration("server_state_refresh_interval"),
					"min_keep_congestion_interval + server_state_refresh_interval")
			}
			r.checkNoReadErrors()
			r.checkNoWriteErrors()
			r.checkLedger()
			r.checkLeak()
		}}
}

// errorScenario makes a node answer every statement with code, then
// heals it.
func errorScenario(code uint16) *Scenario {
	name := fmt.Sprintf("error%d", code)
	// Sessions stay on the server they moved to after a retry (as ODP's
	// cached server does), so a node meets one failure per session that
	// was on it: with a few clients the threshold is lowered to 2 for the
	// list to be reached at all.
	return &Scenario{Name: name, Title: fmt.Sprintf("a node answers every statement with ERR %d, then heals", code),
		Node: faultNode, Opts: withHA("congestion_failure_threshold=2"),
		play: func(ctx context.Context, r *run) error {
			n := r.res.Server
			id := 0
			return r.window(ctx, r.warm(), fmt.Sprintf("inject %d on %s", code, n), func() error {
				var err error
				id, err = r.sim.Ctl.InjectError(obsim.ErrorRule{Node: n, Code: code})
				return err
			}, r.set.phase(10*time.Second, 5*time.Second), "remove the rule", func() error {
				var rules []obsim.ErrorRule
				if err := r.sim.Ctl.Do(http.MethodGet, "/v1/errors", nil, &rules); err == nil {
					for _, rule := range rules {
						if rule.ID == id {
							r.extra["fired"] = rule.Fired
						}
					}
				}
				return r.sim.Ctl.Do(http.MethodDelete, fmt.Sprintf("/v1/errors/%d", id), nil, nil)
			}, r.afterRepair())
		},
		judge: func(r *run) {
			fired, _ := r.extra["fired"].(int)
			r.res.Notes = append(r.res.Notes, fmt.Sprintf("the rule answered %d statements with ERR %d", fired, code))
			l := r.res.Load
			visible := l.Reads.Errors[fmt.Sprint(code)]
			r.check(fmt.Sprintf("ERR %d never reaches a reader (retried elsewhere)", code), visible == 0,
				"%d reads got ERR %d; %d reads failed in all (%s)", visible, code, l.Reads.Failed, formatErrors(l.Reads.Errors))
			r.checkNoReadErrors()
			if w, ok := r.windowAt(0); ok {
				threshold := r.setting("congestion_failure_threshold")
				if n, err := strconv.Atoi(threshold); err == nil && fired < n {
					r.add("the failures reached the congestion threshold", Fail,
						"the rule fired only %d times: the load did not reach the node", fired)
				}
				r.checkAliveCongested(w, "after "+threshold+" failures in congestion_fail_window")
				r.checkCleared(w, r.duration("min_keep_congestion_interval")+r.duration("congestion_retry_interval")+
					r.duration("server_state_refresh_interval"), "min_keep_congestion_interval + congestion_retry_interval + one refresh")
				r.checkReturn(w, r.duration("min_keep_congestion_interval")+r.duration("congestion_retry_interval")+
					r.duration("server_state_refresh_interval"), "min_keep_congestion_interval + congestion_retry_interval + one refresh")
			}
			r.checkLedger()
			r.checkLeak()
		}}
}
