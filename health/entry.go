package health

import (
	"sync/atomic"
	"time"

	vm "github.com/VictoriaMetrics/metrics"
)

// State is a server's state as the congestion lists see it, named as ODP
// names it in SHOW PROXYCONGESTION.
type State uint32

const (
	StateActive State = iota
	StateInactive
	StateActiveCongested
	StateDeleting
	StateDeleted
	StateUpgrade
	StateReplay
	StateDetectAlive
	StateDetectDead
)

var stateNames = [...]string{"ACTIVE", "INACTIVE", "ACTIVE_CONGESTED", "DELETING", "DELETED",
	"UPGRADE", "REPLAY", "DETECT_ALIVE", "DETECT_DEAD"}

func (s State) String() string {
	if int(s) < len(stateNames) {
		return stateNames[s]
	}
	return "UNKNOWN"
}

// zoneInfo is what the status refresh says about a server's zone.
type zoneInfo struct {
	name, region string
	upgrade      bool // zone INACTIVE: every server of it is force-congested
	deleted      bool // the zone is no longer listed
}

// Entry is one server's health record: its flags on the three lists, the
// failure windows that set them and the counters SHOW PROXYCONGESTION
// prints. Every field is an atomic, so that sessions report into it and
// the router reads it from any goroutine without a lock. Flags hold the
// unix-nanosecond time they were set; 0 means clear.
type Entry struct {
	mon     *Monitor
	cluster string // "" in mysql routing mode
	addr    string
	created uint64 // the cluster table generation that created it (cr_version)

	zone        atomic.Pointer[zoneInfo]
	statusState atomic.Uint32 // State from the status refresh
	shownState  atomic.Uint32 // last State pushed by refresh or detection

	dead       atomic.Int64 // status list: INACTIVE or REPLAY
	alive      atomic.Int64 // alive-but-unavailable list
	detect     atomic.Int64 // detect list
	connFailed atomic.Int64 // last failed connect, until a probe or a connect succeeds

	aliveHist   failWindow
	connHist    failWindow
	aliveEvents atomic.Uint64 // lifetime alive failures
	connEvents  atomic.Uint64 // lifetime connect failures

	detectFails atomic.Int32 // consecutive failed detect probes
	inflight    atomic.Int64 // statements waiting for this server's answer
	probing     atomic.Bool  // a probe of this server is running
	lastProbe   atomic.Int64 // when the last recovery probe started

	requests *vm.Counter // statements sent to the server
}

// Addr is the server's SQL address.
func (e *Entry) Addr() string { return e.addr }

// Begin records that a statement is being sent to the server; End must
// follow once its answer ended. The detect task probes servers with
// statements in flight (server_detect_mode=1). Any goroutine may call it.
func (e *Entry) Begin() {
	if e == nil {
		return
	}
	e.inflight.Add(1)
	if e.requests != nil {
		e.requests.Inc()
	}
}

// End ends what Begin began.
func (e *Entry) End() {
	if e != nil {
		e.inflight.Add(-1)
	}
}

// forceCongested reports ODP's force congestion: the server or its zone
// is being upgraded (stop_time set, zone INACTIVE). No minimum keep time
// applies; it lasts as long as the state.
//
// A server the cluster is deleting (status DELETING) is held the same way:
// its units are being moved off it, so it gets no new statements unless
// every candidate is on a list. ODP's congestion manager leaves DELETING
// unflagged (obproxy src/obproxy/obutils/ob_congestion_manager.cpp), which
// keeps sending new sessions to a server that is being emptied.
func (e *Entry) forceCongested() bool {
	if st := State(e.statusState.Load()); st == StateUpgrade || st == StateDeleting {
		return true
	}
	z := e.zone.Load()
	return z != nil && z.upgrade
}

// congested reports whether the server is on any list.
func (e *Entry) congested() bool {
	return e.dead.Load() != 0 || e.alive.Load() != 0 || e.detect.Load() != 0 ||
		e.connFailed.Load() != 0 || e.forceCongested()
}

// AliveFailed records a failure seen by real traffic: an ERR 8001, 8002,
// 8003 or 4013, a broken server connection, a statement timeout, or a
// connect that failed. After congestion_failure_threshold of them within
// congestion_fail_window the server is alive-congested. Any goroutine may
// call it.
func (e *Entry) AliveFailed(reason string) {
	if e == nil {
		return
	}
	m := e.mon
	cfg := m.cfg.Load()
	e.aliveEvents.Add(1)
	m.metrics.failure(reason)
	if cfg.CongestionFailureThreshold <= 0 {
		return
	}
	now := m.nowNanos()
	n := e.aliveHist.add(now)
	if int64(n) >= cfg.CongestionFailureThreshold && e.alive.Load() == 0 {
		if e.alive.CompareAndSwap(0, now) {
			m.logChange(e, "alive", true, "failures", n, "last_reason", reason)
		}
	}
}

// ConnectFailed records that a connection to the server could not be
// opened (refused, timed out, or no handshake): the server takes no new
// requests until a probe or another connect reaches it. It also counts as
// an alive failure.
func (e *Entry) ConnectFailed() {
	if e == nil {
		return
	}
	m := e.mon
	now := m.nowNanos()
	e.connEvents.Add(1)
	e.connHist.add(now)
	if e.connFailed.Swap(now) == 0 {
		m.logChange(e, "connect", true)
	}
	e.AliveFailed("connect")
}

// ConnectSucceeded records a connection that delivered its handshake; it
// clears an earlier connect failure.
func (e *Entry) ConnectSucceeded() {
	if e != nil && e.connFailed.Load() != 0 && e.connFailed.Swap(0) != 0 {
		e.mon.logChange(e, "connect", false)
	}
}

// View is a copy of an entry for SHOW PROXYCONGESTION and metrics. Times
// are zero when unset.
type View struct {
	Cluster, Addr       string
	Zone, Region        string
	ZoneState           string
	ClusterVersion      uint64
	ServerState         string
	AliveCongested      bool
	LastAliveCongested  time.Time
	DeadCongested       bool
	LastDeadCongested   time.Time
	DetectCongested     bool
	LastDetectCongested time.Time
	ConnectFailed       bool
	ForceCongested      bool
	Congested           bool
	StatAliveFailures   uint64
	StatConnFailures    uint64
	ConnLastFailTime    time.Time
	ConnFailureEvents   int
	AliveLastFailTime   time.Time
	AliveFailureEvents  int
	InFlight            int64
}

func nanosTime(n int64) time.Time {
	if n == 0 {
		return time.Time{}
	}
	return time.Unix(0, n)
}

func (e *Entry) view(now int64) View {
	v := View{Cluster: e.cluster, Addr: e.addr, ClusterVersion: e.created,
		ServerState: State(e.shownState.Load()).String(), ZoneState: "ACTIVE"}
	if z := e.zone.Load(); z != nil {
		v.Zone, v.Region = z.name, z.region
		switch {
		case z.deleted:
			v.ZoneState = "DELETED"
		case z.upgrade:
			v.ZoneState = "UPGRADE"
		}
	}
	a, d, t := e.alive.Load(), e.dead.Load(), e.detect.Load()
	v.AliveCongested, v.LastAliveCongested = a != 0, nanosTime(a)
	v.DeadCongested, v.LastDeadCongested = d != 0, nanosTime(d)
	v.DetectCongested, v.LastDetectCongested = t != 0, nanosTime(t)
	v.ConnectFailed = e.connFailed.Load() != 0
	v.ForceCongested = e.forceCongested()
	v.Congested = e.congested()
	v.StatAliveFailures, v.StatConnFailures = e.aliveEvents.Load(), e.connEvents.Load()
	v.ConnLastFailTime, v.ConnFailureEvents = nanosTime(e.connHist.lastEvent()), e.connHist.count(now)
	v.AliveLastFailTime, v.AliveFailureEvents = nanosTime(e.aliveHist.lastEvent()), e.aliveHist.count(now)
	v.InFlight = e.inflight.Load()
	return v
}
