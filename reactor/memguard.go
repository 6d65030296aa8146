package reactor

import (
	"fmt"
	"log/slog"
	"runtime/debug"
	"runtime/metrics"
	"sync/atomic"
	"time"

	"obgate/config"
	"obgate/mysqlproto"
)

// The memory guard (proxy_mem_limited). The limit is the Go runtime's
// memory limit, so the collector works harder as the process nears it;
// above a high-water mark of it new clients are refused with a clear ERR
// instead of the process growing on, and below a lower mark they are let
// in again. Sessions already in are never cut: each one's memory is
// bounded (the relay stops reading a server for a client that does not
// read), so what grows under load is the number of sessions.
//
// A sampler goroutine reads the runtime's live-heap figure every
// memSampleInterval; admission reads one atomic flag.

const (
	memSampleInterval = 200 * time.Millisecond
	memHighPercent    = 90 // refuse new clients above this share of the limit
	memLowPercent     = 80 // admit them again below this one
)

// memGuard holds the guard's state; any goroutine may read it.
type memGuard struct {
	limit   atomic.Int64 // bytes; proxy_mem_limited
	inUse   atomic.Int64 // live heap and goroutine stacks at the last sample
	high    atomic.Bool  // over the high-water mark, not yet under the low one
	refused atomic.Uint64
	samples []metrics.Sample // owned by the sampler goroutine
}

// MemoryState is what SHOW PROXYMEMORY and the metrics show of the guard.
type MemoryState struct {
	Limit, InUse int64 // bytes
	High         bool  // new clients are refused
	Refused      uint64
}

// MemoryState returns the guard's state.
func (srv *Server) MemoryState() MemoryState { return srv.mem.state() }

func (g *memGuard) state() MemoryState {
	return MemoryState{Limit: g.limit.Load(), InUse: g.inUse.Load(), High: g.high.Load(), Refused: g.refused.Load()}
}

// applyMemLimit sets the runtime's memory limit from the config; it runs
// at start and on every config change.
func (g *memGuard) applyMemLimit(cfg *config.Config) {
	if g.limit.Swap(cfg.ProxyMemLimited) != cfg.ProxyMemLimited {
		debug.SetMemoryLimit(cfg.ProxyMemLimited)
	}
}

// sample reads the live heap and updates the flag, with hysteresis.
func (g *memGuard) sample() {
	if g.samples == nil {
		g.samples = []metrics.Sample{{Name: "/gc/heap/live:bytes"}, {Name: "/memory/classes/heap/stacks:bytes"}}
	}
	metrics.Read(g.samples)
	var use int64
	for _, s := range g.samples {
		if s.Value.Kind() == metrics.KindUint64 {
			use += int64(s.Value.Uint64())
		}
	}
	g.inUse.Store(use)
	limit := g.limit.Load()
	switch {
	case limit <= 0:
		g.high.Store(false)
	case use*100 > limit*memHighPercent:
		g.high.Store(true)
	case use*100 < limit*memLowPercent:
		g.high.Store(false)
	}
}

// memLoop samples until stop is closed; it runs on its own goroutine.
func (srv *Server) memLoop(stop <-chan struct{}) {
	sample := func() { srv.mem.sampleAndTell(srv.log) }
	tick := time.NewTicker(memSampleInterval)
	defer tick.Stop()
	for {
		select {
		case <-stop:
			return
		case <-tick.C:
			// A panic costs one sample, never the loop.
			srv.panics.guarded(panicMemorySampler, 0, sample)
		}
	}
}

// sampleAndTell takes one sample and tells log when the high-water state
// changed. The sampler goroutine.
func (g *memGuard) sampleAndTell(log *slog.Logger) {
	was := g.high.Load()
	g.sample()
	if now := g.high.Load(); now != was {
		st := g.state()
		if now {
			log.Warn("memory over the high-water mark of proxy_mem_limited: refusing new clients",
				"in_use", st.InUse, "limit", st.Limit, "high_water_percent", memHighPercent)
		} else {
			log.Info("memory back under proxy_mem_limited's low-water mark: admitting new clients",
				"in_use", st.InUse, "limit", st.Limit)
		}
	}
}

// memoryRefusal is the refusal of a new client while memory is high.
func (srv *Server) memoryRefusal() *loginRefusal {
	st := srv.MemoryState()
	srv.mem.refused.Add(1)
	srv.metrics.refusedMemory.Inc()
	return &loginRefusal{
		mysqlproto.NewSQLError(mysqlproto.EROutOfResources,
			"obgate is over its memory high-water mark (%d MiB in use of proxy_mem_limited %d MiB); try again later", st.InUse>>20, st.Limit>>20),
		QuitLimit, fmt.Errorf("memory %d of %d bytes", st.InUse, st.Limit),
	}
}
