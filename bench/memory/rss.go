package memory

import (
	"bytes"
	"fmt"
	"os"
	"strconv"
	"sync"
	"time"
)

// RSS returns the resident set size of process pid in bytes: VmRSS from
// /proc/<pid>/status.
func RSS(pid int) (int64, error) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/status")
	if err != nil {
		return 0, err
	}
	return parseVmRSS(b)
}

// parseVmRSS reads the "VmRSS:   1234 kB" line of /proc/<pid>/status.
func parseVmRSS(status []byte) (int64, error) {
	for line := range bytes.Lines(status) {
		rest, ok := bytes.CutPrefix(line, []byte("VmRSS:"))
		if !ok {
			continue
		}
		f := bytes.Fields(rest)
		if len(f) != 2 || string(f[1]) != "kB" {
			return 0, fmt.Errorf("proc status: odd VmRSS line %q", bytes.TrimSpace(line))
		}
		kb, err := strconv.ParseInt(string(f[0]), 10, 64)
		if err != nil {
			return 0, fmt.Errorf("proc status: VmRSS: %w", err)
		}
		return kb << 10, nil
	}
	// Kernel threads and zombies have no VmRSS line.
	return 0, fmt.Errorf("proc status: no VmRSS line (has the process exited?)")
}

// Sample is one RSS reading.
type Sample struct {
	At  time.Time `json:"at"`
	RSS int64     `json:"rss"`
}

// Sampler reads a process's RSS at a fixed interval on its own goroutine
// until Stop. Its methods are safe for concurrent use.
type Sampler struct {
	pid  int
	stop chan struct{}
	done chan struct{}

	mu      sync.Mutex
	samples []Sample
	err     error // the first failed reading; sampling stops there
}

// StartSampler takes a first reading at once, then one every interval.
func StartSampler(pid int, interval time.Duration) *Sampler {
	s := &Sampler{pid: pid, stop: make(chan struct{}), done: make(chan struct{})}
	s.take()
	go s.loop(interval)
	return s
}

func (s *Sampler) loop(interval time.Duration) {
	defer close(s.done)
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		select {
		case <-s.stop:
			return
		case <-t.C:
			if !s.take() {
				return
			}
		}
	}
}

// take records one reading and reports whether sampling may go on.
func (s *Sampler) take() bool {
	rss, err := RSS(s.pid)
	now := time.Now()
	s.mu.Lock()
	defer s.mu.Unlock()
	if err != nil {
		if s.err == nil {
			s.err = err
		}
		return false
	}
	s.samples = append(s.samples, Sample{At: now, RSS: rss})
	return true
}

// Now takes a reading immediately (in addition to the periodic ones) and
// returns it.
func (s *Sampler) Now() (int64, error) {
	if !s.take() {
		return 0, s.Err()
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.samples[len(s.samples)-1].RSS, nil
}

// Stop ends sampling and returns every reading, oldest first. It may be
// called more than once.
func (s *Sampler) Stop() []Sample {
	select {
	case <-s.stop:
	default:
		close(s.stop)
	}
	<-s.done
	return s.Samples()
}

// Samples returns a copy of the readings so far.
func (s *Sampler) Samples() []Sample {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Sample(nil), s.samples...)
}

// Err returns the error of the first failed reading, if any.
func (s *Sampler) Err() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.err
}

// Peak returns the largest reading taken in [from, to] (a zero to means no
// upper bound), or 0 if there is none.
func (s *Sampler) Peak(from, to time.Time) int64 {
	return PeakBetween(s.Samples(), from, to)
}

// PeakBetween returns the largest RSS of the samples taken in [from, to]
// (a zero to means no upper bound), or 0 if there is none.
func PeakBetween(samples []Sample, from, to time.Time) int64 {
	var peak int64
	for _, x := range samples {
		if x.At.Before(from) || (!to.IsZero() && x.At.After(to)) {
			continue
		}
		peak = max(peak, x.RSS)
	}
	return peak
}

// MiB converts a byte count to mebibytes.
func MiB(b int64) float64 { return float64(b) / (1 << 20) }

// KiB converts a byte count to kibibytes.
func KiB(b int64) float64 { return float64(b) / (1 << 10) }
