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

func (p RoutePolicy) String() string {
	if int(p) < len(policyNames) {
		return policyNames[p]
	}
	return "UNKNOWN"
}

// WeakPolicy reads a weak-read policy name (@proxy_route_policy or
// proxy_route_policy), case-insensitively; ok is false for names that are
// not weak-read policies (ODP then uses its default).
func WeakPolicy(name string) (RoutePolicy, bool) {
	switch strings.ToUpper(strings.TrimSpace(name)) {
	case "FOLLOWER_FIRST":
		return FollowerFirst, true
	case "UNMERGE_FOLLOWER_FIRST":
		return UnmergeFollowerFirst, true
	case "FOLLOWER_ONLY":
		return FollowerOnly, true
	case "FORCE_READONLY_ZONE":
		return ForceReadonlyZone, true
	}
	return 0, false
}

// obRoutePolicy maps the session variable ob_route_policy (0–3) to a
// policy; READONLY_ZONE_FIRST is OceanBase's default.
func obRoutePolicy(v int) RoutePolicy {
	switch v {
	case 0:
		return MergeIDCOrder
	case 2:
		return OnlyReadonlyZone
	case 3:
		return UnmergeZoneFirst
	}
	return ReadonlyZoneFirst
}

// candFacts are what a policy ranks a candidate by.
type candFacts struct {
	ldc      LDCClass
	readOnly bool // in a ReadOnly zone, or a READONLY replica
	holds    bool // holds the statement's partition (P); else a tenant server (T)
	leader   bool
	dup      bool // a duplicated replica
}

// classPat matches candidates: each field is -1 (any) or the value asked
// for. ldc is 0 A (SAME_IDC), 1 B (SAME_REGION), 2 C (OTHER_REGION).
type classPat struct{ ldc, holds, ro, leader, dup int8 }

// pat reads a class name of ODP's order tables: A/B/C, then P (holds the
// partition) or T (a tenant server), R/W (read-only or read-write zone),
// F/L (follower or leader), D (duplicated replica), in any order after
// the LDC letter.
func pat(name string) classPat {
	p := classPat{ldc: -1, holds: -1, ro: -1, leader: -1, dup: -1}
	for i := 0; i < len(name); i++ {
		switch name[i] {
		case 'A':
			p.ldc = 0
		case 'B':
			p.ldc = 1
		case 'C':
			p.ldc = 2
		case 'P':
			p.holds = 1
		case 'T':
			p.holds = 0
		case 'R':
			p.ro = 1
		case 'W':
			p.ro = 0
		case 'F':
			p.leader = 0
		case 'L':
			p.leader = 1
		case 'D':
			p.dup = 1
		}
	}
	return p
}

func (p classPat) match(c candFacts) bool {
	is := func(want int8, v bool) bool { return want < 0 || (want == 1) == v }
	return (p.ldc < 0 || int(p.ldc) == int(c.ldc)) && is(p.holds, c.holds) && is(p.ro, c.readOnly) &&
		is(p.leader, c.leader) && is(p.dup, c.dup)
}

func pats(names ...string) []classPat {
	out := make([]classPat, len(names))
	for i, n := range names {
		out[i] = pat(n)
	}
	return out
}

// The order tables of ODP (ob_ldc_route.cpp) without the merging classes,
// and their _OPTIMIZED forms, which put the other region's partition
// holders before the local tenant servers.
var (
	orderMergeIDC         = pats("AP", "BP", "AT", "BT", "CP", "CT")
	orderMergeIDCOpt      = pats("AP", "BP", "CP", "AT", "BT", "CT")
	orderReadonlyFirst    = pats("ARP", "BRP", "AWP", "BWP", "ART", "BRT", "AWT", "BWT", "CRP", "CWP", "CRT", "CWT")
	orderReadonlyFirstOpt = pats("ARP", "BRP", "AWP", "BWP", "CRP", "CWP", "ART", "BRT", "AWT", "BWT", "CRT", "CWT")
	orderOnlyReadonly     = pats("ARP", "BRP", "ART", "BRT", "CRP", "CRT")
	orderOnlyReadonlyOpt  = pats("ARP", "BRP", "CRP", "ART", "BRT", "CRT")
	orderOnlyReadwrite    = pats("AWP", "BWP", "AWT", "BWT", "CWP", "CWT")
	orderOnlyReadwriteOpt = pats("AWP", "BWP", "CWP", "AWT", "BWT", "CWT")
	orderFollowerFirst    = pats("APF", "BPF", "APL", "BPL", "AT", "BT", "CPF", "CPL", "CT")
	orderFollowerFirstOpt = pats("APF", "BPF", "APL", "BPL", "CPF", "CPL", "AT", "BT", "CT")
	orderFollowerOnly     = pats("APF", "BPF", "AT", "BT", "CPF", "CT")
	orderFollowerOnlyOpt  = pats("APF", "BPF", "CPF", "AT", "BT", "CT")
	orderDupReplicaFirst  = pats("APD", "BPD", "CPD", "AP", "BP", "CP", "AT", "BT", "CT")
	orderRandomCandidates = pats("P", "T")
)

// order returns p's class list.
func (p RoutePolicy) order(optimized bool) []classPat {
	pick := func(plain, opt []classPat) []classPat {
		if optimized {
			return opt
		}
		return plain
	}
	switch p {
	case ReadonlyZoneFirst, UnmergeZoneFirst:
		return pick(orderReadonlyFirst, orderReadonlyFirstOpt)
	case OnlyReadonlyZone, ForceReadonlyZone:
		return pick(orderOnlyReadonly, orderOnlyReadonlyOpt)
	case OnlyReadwriteZone:
		return pick(orderOnlyReadwrite, orderOnlyReadwriteOpt)
	case FollowerFirst, UnmergeFollowerFirst:
		return pick(orderFollowerFirst, orderFollowerFirstOpt)
	case FollowerOnly:
		return pick(orderFollowerOnly, orderFollowerOnlyOpt)
	case DupReplicaFirst:
		return orderDupReplicaFirst
	case ProxyPrimaryZoneNameOnly, TargetDBServerOnly:
		return orderRandomCandidates
	}
	return pick(orderMergeIDC, orderMergeIDCOpt)
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
