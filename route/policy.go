package route

import "strings"

// RoutePolicy is the replica order a statement is routed by (ODP's route
// policies, odp-behaviour.md §5.7–5.8). OceanBase 4.x zones never merge, so
// the merging classes of ODP's tables are empty and the UNMERGE variants
// order as their plain forms.
type RoutePolicy uint8

// Route policies.
const (
	MergeIDCOrder RoutePolicy = iota
	ReadonlyZoneFirst
	OnlyReadonlyZone
	OnlyReadwriteZone
	UnmergeZoneFirst
	FollowerFirst
	UnmergeFollowerFirst
	FollowerOnly
	DupReplicaFirst
	PrimaryZoneFirst
	ProxyPrimaryZoneNameOnly
	TargetDBServerOnly
	// ForceReadonlyZone is obgate's weak-read policy that sends weak reads
	// to read-only zones only and refuses every other statement with ERR
	// 1235 / 0A000 (OB_NOT_SUPPORTED as the server sends it), for proxies
	// that must never load the read-write zones.
	ForceReadonlyZone
)

var policyNames = [...]string{
	"MERGE_IDC_ORDER", "READONLY_ZONE_FIRST", "ONLY_READONLY_ZONE", "ONLY_READWRITE_ZONE",
	"UNMERGE_ZONE_FIRST", "FOLLOWER_FIRST", "UNMERGE_FOLLOWER_FIRST", "FOLLOWER_ONLY",
	"DUP_REPLICA_FIRST", "PRIMARY_ZONE_FIRST", "PROXY_PRIMARY_ZONE_NAME_ONLY", "TARGET_DB_SERVER_ONLY",
	"FORCE_READONLY_ZONE",
}

func (p RoutePolicy) String() string { return enumName(p, policyNames[:]) }

// WeakPolicy reads a weak-read policy name (@proxy_route_policy or
// proxy_route_policy), case-insensitively; ok is false for names that are
// not weak-read policies (ODP then uses its default).
func WeakPolicy(name string) (RoutePolicy, bool) {
	name = strings.ToUpper(strings.TrimSpace(name))
	for _, p := range weakPolicies {
		if p.String() == name {
			return p, true
		}
	}
	return 0, false
}

// weakPolicies are the policies a weak read may name.
var weakPolicies = [...]RoutePolicy{FollowerFirst, UnmergeFollowerFirst, FollowerOnly, ForceReadonlyZone}

// obRoutePolicy maps the session variable ob_route_policy (0–3) to a
// policy; READONLY_ZONE_FIRST is OceanBase's default.
func obRoutePolicy(v int) RoutePolicy {
	if v >= 0 && v < len(obRoutePolicies) {
		return obRoutePolicies[v]
	}
	return ReadonlyZoneFirst
}

// obRoutePolicies are the policies of ob_route_policy's values, by value.
var obRoutePolicies = [...]RoutePolicy{MergeIDCOrder, ReadonlyZoneFirst, OnlyReadonlyZone, UnmergeZoneFirst}

// candFacts are what a policy ranks a candidate by.
type candFacts struct {
	ldc      LDCClass
	readOnly bool // in a ReadOnly zone, or a READONLY replica
	holds    bool // holds the statement's partition (P); else a tenant server (T)
	leader   bool
	dup      bool // a duplicated replica
}

// classPat matches candidates: each fact (patLDC … patDup) is -1 (any)
// or the value asked for. patLDC is 0 A (SAME_IDC), 1 B (SAME_REGION),
// 2 C (OTHER_REGION); the others are 1 for true, 0 for false.
type classPat [patFacts]int8

// The facts a classPat asks for.
const (
	patLDC    = iota // the candidate's LDC class
	patHolds         // candFacts.holds
	patRO            // candFacts.readOnly
	patLeader        // candFacts.leader
	patDup           // candFacts.dup
	patFacts
)

// classLetters are the letters of ODP's class names, each with the fact
// it sets and the value it asks for.
var classLetters = [...]struct {
	letter byte
	fact   int
	want   int8
}{
	{'A', patLDC, 0}, {'B', patLDC, 1}, {'C', patLDC, 2},
	{'P', patHolds, 1}, {'T', patHolds, 0}, {'R', patRO, 1}, {'W', patRO, 0},
	{'F', patLeader, 0}, {'L', patLeader, 1}, {'D', patDup, 1},
}

// pat reads a class name of ODP's order tables: A/B/C, then P (holds the
// partition) or T (a tenant server), R/W (read-only or read-write zone),
// F/L (follower or leader), D (duplicated replica), in any order after
// the LDC letter.
func pat(name string) classPat {
	p := classPat{-1, -1, -1, -1, -1}
	for i := 0; i < len(name); i++ {
		for _, l := range classLetters {
			if l.letter == name[i] {
				p[l.fact] = l.want
			}
		}
	}
	return p
}

func (p classPat) match(c candFacts) bool {
	is := func(want int8, v bool) bool { return want < 0 || (want == 1) == v }
	return (p[patLDC] < 0 || int(p[patLDC]) == int(c.ldc)) && is(p[patHolds], c.holds) &&
		is(p[patRO], c.readOnly) && is(p[patLeader], c.leader) && is(p[patDup], c.dup)
}

func pats(names ...string) []classPat {
	out := make([]classPat, len(names))
	for i, n := range names {
		out[i] = pat(n)
	}
	return out
}

// classOrder is a policy's class list, plain and _OPTIMIZED.
type classOrder struct{ plain, opt []classPat }

// The order tables of ODP (ob_ldc_route.cpp) without the merging classes,
// each with its _OPTIMIZED form, which puts the other region's partition
// holders before the local tenant servers.
var (
	orderMergeIDC = classOrder{pats("AP", "BP", "AT", "BT", "CP", "CT"),
		pats("AP", "BP", "CP", "AT", "BT", "CT")}
	orderReadonlyFirst = classOrder{pats("ARP", "BRP", "AWP", "BWP", "ART", "BRT", "AWT", "BWT", "CRP", "CWP", "CRT", "CWT"),
		pats("ARP", "BRP", "AWP", "BWP", "CRP", "CWP", "ART", "BRT", "AWT", "BWT", "CRT", "CWT")}
	orderOnlyReadonly = classOrder{pats("ARP", "BRP", "ART", "BRT", "CRP", "CRT"),
		pats("ARP", "BRP", "CRP", "ART", "BRT", "CRT")}
	orderOnlyReadwrite = classOrder{pats("AWP", "BWP", "AWT", "BWT", "CWP", "CWT"),
		pats("AWP", "BWP", "CWP", "AWT", "BWT", "CWT")}
	orderFollowerFirst = classOrder{pats("APF", "BPF", "APL", "BPL", "AT", "BT", "CPF", "CPL", "CT"),
		pats("APF", "BPF", "APL", "BPL", "CPF", "CPL", "AT", "BT", "CT")}
	orderFollowerOnly = classOrder{pats("APF", "BPF", "AT", "BT", "CPF", "CT"),
		pats("APF", "BPF", "CPF", "AT", "BT", "CT")}
	orderDupReplicaFirst  = sameOrder(pats("APD", "BPD", "CPD", "AP", "BP", "CP", "AT", "BT", "CT"))
	orderRandomCandidates = sameOrder(pats("P", "T"))
)

// sameOrder is the classOrder of a policy without an _OPTIMIZED form.
func sameOrder(classes []classPat) classOrder { return classOrder{classes, classes} }

// policyOrders are the class lists of the policies, by policy; a policy
// past the end orders as MERGE_IDC_ORDER.
var policyOrders = [...]classOrder{
	MergeIDCOrder:            orderMergeIDC,
	ReadonlyZoneFirst:        orderReadonlyFirst,
	OnlyReadonlyZone:         orderOnlyReadonly,
	OnlyReadwriteZone:        orderOnlyReadwrite,
	UnmergeZoneFirst:         orderReadonlyFirst,
	FollowerFirst:            orderFollowerFirst,
	UnmergeFollowerFirst:     orderFollowerFirst,
	FollowerOnly:             orderFollowerOnly,
	DupReplicaFirst:          orderDupReplicaFirst,
	PrimaryZoneFirst:         orderMergeIDC,
	ProxyPrimaryZoneNameOnly: orderRandomCandidates,
	TargetDBServerOnly:       orderRandomCandidates,
	ForceReadonlyZone:        orderOnlyReadonly,
}

// order returns p's class list.
func (p RoutePolicy) order(optimized bool) []classPat {
	o := &policyOrders[MergeIDCOrder]
	if int(p) < len(policyOrders) {
		o = &policyOrders[p]
	}
	if optimized {
		return o.opt
	}
	return o.plain
}

// rank returns a candidate's place under p (lower first), or ok false
// when p excludes it.
func (p RoutePolicy) rank(c candFacts, optimized bool) (int, bool) {
	for i, cp := range p.order(optimized) {
		if cp.match(c) {
			return i, true
		}
	}
	return 0, false
}
