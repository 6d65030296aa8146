package reactor

import (
	"strconv"
	"strings"
	"time"

	"obgate/internal/obpart"
	"obgate/mysqlproto"
	"obgate/reactor/backend"
)

// sweepInterval is how often the idle sweeper looks at every session. It
// bounds how late an idle limit is enforced, not how long it is.
const sweepInterval = time.Second

// defaultWaitTimeout is MySQL's and OceanBase's default wait_timeout.
const defaultWaitTimeout = 8 * time.Hour

// sweepLoop runs on its own goroutine until stop is closed: it closes
// idle server sessions of idle clients (server_idle_timeout, except the
// one a client used last) and, in OceanBase mode, idle clients past their
// wait_timeout, other idle clients past default_inactivity_timeout. A server there never closes an idle client, because a
// server session that it closes is replaced invisibly (flash-break), so
// obgate enforces the limit the client set, as ODP does.
func (srv *Server) sweepLoop(stop <-chan struct{}) {
	defer srv.panics.recoverBackground(panicSweeper)
	tick := time.NewTicker(sweepInterval)
	defer tick.Stop()
	for {
		select {
		case <-stop:
			return
		case now := <-tick.C:
			// A panic costs one pass, never the loop.
			srv.panics.guarded(panicSweeper, 0, func() { srv.sweep(now) })
		}
	}
}

// sweep makes one pass; any goroutine may run it (tests call it).
func (srv *Server) sweep(now time.Time) {
	srv.metrics.reg.Sweep(now) // idle label sets (monitor_item_max_idle_period)
	cfg := srv.cfg.Load()
	srv.eachSession(func(s *Session) {
		if s.State() != StateIdle {
			return
		}
		idle := now.UnixNano() - s.activity.lastActive.Load()
		if limit := time.Duration(s.activity.waitTimeout.Load()); limit > 0 {
			if idle > int64(limit) {
				srv.log.Debug("client idle past its wait_timeout", "session", s.id, "wait_timeout", limit)
				s.closeFor(closeNow, QuitTimeout, reasonWaitTimeout)
			}
			return
		}
		// No wait_timeout of the client's applies (mysql routing mode,
		// where the server enforces its own, or an administrator
		// session): default_inactivity_timeout does.
		if idle > int64(cfg.DefaultInactivityTimeout) {
			srv.log.Debug("client idle past default_inactivity_timeout", "session", s.id, "limit", cfg.DefaultInactivityTimeout)
			s.closeFor(closeNow, QuitTimeout, reasonInactivity)
		}
	})
	limit := cfg.ServerIdleTimeout
	srv.servers.Each(func(be *backend.Conn) bool {
		owner, ok := be.Owner.(*Session)
		// Not the current one: its owner drops the others before the
		// next statement; mysql mode's one is always current.
		if !ok || be.Current.Load() || owner.State() != StateIdle {
			return true
		}
		if now.Sub(be.LastUsedAt()) > limit {
			be.Close() // its owner drops it before the next statement
		}
		return true
	})
}

// updateWaitTimeout publishes the session's idle limit for the sweeper:
// the wait_timeout the client set, else the cluster's interactive_timeout
// for an interactive client or its wait_timeout, else MySQL's default. It
// runs on the session's goroutine when its variables changed.
func (o *obSession) updateWaitTimeout() {
	s := o.s
	val, ok := "", false
	for _, e := range o.vars.Sys() {
		if e.Name == "wait_timeout" {
			val, ok = e.Value, true
		}
	}
	if !ok {
		if t := o.cluster.Table(); t != nil {
			name := "wait_timeout"
			if s.caps.Has(mysqlproto.ClientInteractive) {
				name = "interactive_timeout"
			}
			val, ok = t.SysVars[name]
		}
	}
	d := defaultWaitTimeout
	if secs, err := strconv.ParseInt(val, 10, 64); ok && err == nil && secs > 0 {
		d = time.Duration(secs) * time.Second
	}
	s.activity.waitTimeout.Store(int64(d))
	o.updateTimeZone()
}

// updateTimeZone reads the session's time_zone, in which TIMESTAMP
// partition keys are read: the value the server reported for the session,
// else the cluster's global one. It runs with updateWaitTimeout.
func (o *obSession) updateTimeZone() {
	val, ok := "", false
	for _, e := range o.vars.Sys() {
		if e.Name == "time_zone" {
			val, ok = e.Value, true
		}
	}
	if !ok {
		if t := o.cluster.Table(); t != nil {
			val, ok = t.SysVars["time_zone"]
		}
	}
	if !ok {
		o.timeZone = nil
		return
	}
	if val != o.timeZoneText || o.timeZone == nil {
		o.timeZone, o.timeZoneText = obpart.ParseTimeZone(strings.Trim(val, "'")), val
	}
}
