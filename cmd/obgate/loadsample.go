package main

import (
	"math"
	"runtime/metrics"
	"syscall"
	"time"
)

// What the CPU governor reads of the process each tick: the CPU time the
// kernel charged it (all threads, user and system, so the time spent in
// its sockets' system calls counts), how long its goroutines waited for a
// CPU (the runtime's scheduling-latency histogram), and whether any client
// I/O ran on Go's own network poller rather than on the event loops
// (reactor.Server.OffPollerIO).

// load is one tick's reading, as averages over the tick.
type load struct {
	cpus    float64 // CPUs obgate used: CPU time / wall time
	waiting float64 // goroutines ready to run but waiting for a CPU, on average
	// logins: a login started during the tick; goroutineSessions: a
	// session is served on a goroutine transport (net, TLS) at its end.
	logins, goroutineSessions bool
}

// offPollerIO reports the logins so far and the sessions now on a
// goroutine transport (reactor.Server.OffPollerIO).
type offPollerIO func() (logins uint64, goroutineSessions int64)

// schedLatencies is the runtime metric of the time goroutines spent
// runnable before they ran.
const schedLatencies = "/sched/latencies:seconds"

// latencySampling: the runtime records the scheduling latency of one in
// every 8 of a goroutine's transitions to runnable (the runtime's
// gTrackingPeriod), so the histogram's sum is an eighth of all waiting.
const latencySampling = 8

// loadSampler turns cumulative readings into averages over each tick.
// Only the governor's goroutine calls it.
type loadSampler struct {
	at      time.Time
	cpu     time.Duration // process CPU time at `at`
	waited  float64       // sampled seconds of scheduling latency at `at`
	logins  uint64        // logins started by `at`
	io      offPollerIO   // nil: none to read
	samples []metrics.Sample
	ok      bool // a first reading was taken
}

func newLoadSampler(io offPollerIO) *loadSampler {
	return &loadSampler{io: io, samples: []metrics.Sample{{Name: schedLatencies}}}
}

// next reads the process now and returns the averages since the previous
// call; the first call (or a reading that went backwards) reports ok =
// false.
func (s *loadSampler) next(now time.Time) (l load, ok bool) {
	cpu := processCPU()
	metrics.Read(s.samples)
	waited := histogramSum(s.samples[0].Value)
	var logins uint64
	var goroutineSessions int64
	if s.io != nil {
		logins, goroutineSessions = s.io()
	}
	prevOK, span := s.ok, now.Sub(s.at)
	dCPU, dWaited, dLogins := cpu-s.cpu, waited-s.waited, logins-s.logins
	s.at, s.cpu, s.waited, s.logins, s.ok = now, cpu, waited, logins, true
	if !prevOK || span <= 0 || dCPU < 0 || dWaited < 0 {
		return load{}, false
	}
	return load{
		cpus:              dCPU.Seconds() / span.Seconds(),
		waiting:           dWaited * latencySampling / span.Seconds(),
		logins:            dLogins > 0,
		goroutineSessions: goroutineSessions > 0,
	}, true
}

// processCPU is the user and system CPU time of every thread of the
// process so far.
func processCPU() time.Duration {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// histogramSum estimates the total of a Float64Histogram's samples (see
// sumBuckets). A metric the runtime does not have reads as 0.
func histogramSum(v metrics.Value) float64 {
	if v.Kind() != metrics.KindFloat64Histogram {
		return 0
	}
	return sumBuckets(v.Float64Histogram())
}

// sumBuckets counts each bucket's samples at the bucket's middle, or at
// its finite edge where the other is infinite.
func sumBuckets(h *metrics.Float64Histogram) float64 {
	var sum float64
	for i, n := range h.Counts {
		if n == 0 {
			continue
		}
		lo, hi := h.Buckets[i], h.Buckets[i+1]
		mid := (lo + hi) / 2
		switch {
		case math.IsInf(lo, -1):
			mid = hi
		case math.IsInf(hi, 1):
			mid = lo
		}
		sum += float64(n) * mid
	}
	return sum
}
