package health

import (
	"obgate/internal/topology"
)

// TableChanged is the status blocklist: it maps each server of a newly
// read cluster table to its lists as ODP does (odp-behaviour.md §1.4,
// §2.3). INACTIVE and REPLAY servers are dead-congested; an ACTIVE one is
// cleared once min_keep_congestion_interval has passed since it was set
// (checked on every refresh, so a server comes back within that interval
// plus one refresh); a server being upgraded (stop_time) or in an
// INACTIVE zone is force-congested for as long as that lasts; servers no
// longer listed are forgotten. It runs on the cluster's refresh goroutine
// (route.TableObserver); servers is read, never kept.
func (m *Monitor) TableChanged(name string, generation uint64, servers []*topology.Server) {
	listed := make(map[string]bool, len(servers))
	now := m.nowNanos()
	for _, s := range servers {
		listed[s.Addr] = true
		e := m.entry(name, s.Addr, generation)
		z := zoneOf(s.Zone)
		if old := e.zone.Swap(z); old != nil && old.upgrade != z.upgrade {
			m.logChange(e, "force", z.upgrade, "zone", z.name)
		}
		m.applyStatus(e, stateOf(s.State), now)
	}
	for _, e := range m.snapshot() {
		if e.cluster == name && !listed[e.addr] {
			m.log.Info("server no longer listed by its cluster; its health entry is removed", "cluster", name, "server", e.addr)
			m.remove(name, e.addr)
		}
	}
}

func zoneOf(z *topology.Zone) *zoneInfo {
	if z == nil {
		return &zoneInfo{}
	}
	return &zoneInfo{name: z.Name, region: z.Region, upgrade: z.State == topology.ZoneUpgrade}
}

func stateOf(s topology.ServerState) State {
	switch s {
	case topology.ServerInactive:
		return StateInactive
	case topology.ServerReplay:
		return StateReplay
	case topology.ServerUpgrade:
		return StateUpgrade
	case topology.ServerDeleting:
		return StateDeleting
	}
	return StateActive
}

// applyStatus applies one server's state from the refresh.
func (m *Monitor) applyStatus(e *Entry, st State, now int64) {
	prev := State(e.statusState.Swap(uint32(st)))
	if prev != st {
		e.shownState.Store(uint32(st))
		if prev == StateUpgrade || st == StateUpgrade {
			m.logChange(e, "force", st == StateUpgrade, "state", st.String())
		}
	}
	switch st {
	case StateInactive, StateReplay:
		if e.dead.CompareAndSwap(0, now) {
			m.logChange(e, "dead", true, "state", st.String())
		}
	case StateActive:
		m.checkAndSetAlive(e, now)
	}
}

// checkAndSetAlive is ODP's check_and_set_alive, for a server the refresh
// reports ACTIVE (obproxy src/obproxy/obutils/ob_congestion_entry.cpp):
// min_keep_congestion_interval holds both lists. A dead-listed server
// leaves the dead list at once, but one listed less than that interval
// ago is alive-listed instead (with an alive failure), so that it is
// still passed over; an alive-listed server leaves the alive list once
// it has been on it for that interval.
func (m *Monitor) checkAndSetAlive(e *Entry, now int64) {
	minKeep := int64(m.cfg.Load().MinKeepCongestionInterval)
	if d := e.dead.Load(); d != 0 {
		if !e.dead.CompareAndSwap(d, 0) {
			return
		}
		m.logChange(e, "dead", false, "state", StateActive.String())
		if now-d >= minKeep {
			if e.alive.Swap(0) != 0 {
				m.logChange(e, "alive", false, "why", "ACTIVE after min_keep_congestion_interval")
			}
			return
		}
		e.aliveEvents.Add(1)
		e.aliveHist.add(now)
		m.metrics.failure("dead server came back")
		if e.alive.CompareAndSwap(0, now) {
			m.logChange(e, "alive", true, "why", "ACTIVE before min_keep_congestion_interval")
		}
		return
	}
	if a := e.alive.Load(); a != 0 && now-a >= minKeep && e.alive.CompareAndSwap(a, 0) {
		m.logChange(e, "alive", false, "why", "ACTIVE after min_keep_congestion_interval")
	}
}
