package chaos

import (
	"context"
	"errors"
	"sort"
	"sync"
	"time"

	"obgate/tools/obsim"
)

// poller runs fn every period until stopped.
type poller struct {
	cancel context.CancelFunc
	done   chan struct{}
}

func startPoller(ctx context.Context, period time.Duration, fn func(ctx context.Context)) *poller {
	ctx, cancel := context.WithCancel(ctx)
	p := &poller{cancel: cancel, done: make(chan struct{})}
	go func() {
		defer close(p.done)
		t := time.NewTicker(period)
		defer t.Stop()
		for {
			fn(ctx)
			select {
			case <-ctx.Done():
				return
			case <-t.C:
			}
		}
	}()
	return p
}

func (p *poller) stop() {
	if p != nil {
		p.cancel()
		<-p.done
	}
}

// logWatch follows obsim's statement log and keeps, per node, when the
// load's proxied sessions sent something (logins included; obgate's own
// metadata and probe sessions excluded).
type logWatch struct {
	ctl    *obsim.ControlClient
	origin time.Time
	user   string

	mu       sync.Mutex
	contig   uint64          // every seq up to here was seen or given up on
	seen     map[uint64]bool // seqs above contig already read
	gapAge   int             // polls the oldest gap has stayed open
	started  bool
	times    map[string][]float64 // node → seconds since origin, in seq order
	lost     int                  // entries the log dropped before they were read
	err      error
	polls    int
	injected map[string]int // node → injected errors of the load's sessions
}

func newLogWatch(ctl *obsim.ControlClient, origin time.Time, user string) *logWatch {
	return &logWatch{ctl: ctl, origin: origin, user: user, seen: map[uint64]bool{},
		times: map[string][]float64{}, injected: map[string]int{}}
}

// wanted reports whether an entry is the load's: a proxied session of the
// load's user in the load's tenant.
func (w *logWatch) wanted(e obsim.LogEntry) bool {
	return e.Client == "proxy" && e.Tenant == Tenant && e.User == w.user
}

func (w *logWatch) poll(context.Context) {
	w.mu.Lock()
	since := w.contig
	w.mu.Unlock()
	entries, err := w.ctl.Log("", since, 0)
	w.mu.Lock()
	defer w.mu.Unlock()
	w.polls++
	if err != nil {
		w.err = err
		return
	}
	w.ingest(entries)
}

// ingest takes the entries of one poll; w.mu is held.
func (w *logWatch) ingest(entries []obsim.LogEntry) {
	if !w.started && len(entries) > 0 {
		w.started = true
		w.contig = entries[0].Seq - 1
	}
	for _, e := range entries {
		if e.Seq <= w.contig || w.seen[e.Seq] {
			continue
		}
		w.seen[e.Seq] = true
		if !w.wanted(e) {
			continue
		}
		w.times[e.Node] = append(w.times[e.Node], e.Time.Sub(w.origin).Seconds())
		if e.Injected {
			w.injected[e.Node]++
		}
	}
	w.advance()
}

// advance moves contig over the seqs seen. A gap is an entry still being
// written (seqs are taken before the entry is stored) or one the ring
// dropped; one that stays open for a few polls counts as lost.
func (w *logWatch) advance() {
	for w.seen[w.contig+1] {
		delete(w.seen, w.contig+1)
		w.contig++
		w.gapAge = 0
	}
	if len(w.seen) == 0 {
		return
	}
	if w.gapAge++; w.gapAge < 4 {
		return
	}
	low := uint64(0)
	for seq := range w.seen {
		if low == 0 || seq < low {
			low = seq
		}
	}
	w.lost += int(low - w.contig - 1)
	w.contig = low - 1
	w.gapAge = 0
	w.advance()
}

// nodeTimes returns the sorted request times of node.
func (w *logWatch) nodeTimes(node string) []float64 {
	w.mu.Lock()
	defer w.mu.Unlock()
	t := append([]float64(nil), w.times[node]...)
	sort.Float64s(t)
	return t
}

// metricWatch samples obgate's /metrics: the per-server request counter
// where obgate has it.
type metricWatch struct {
	p      *Proxy
	origin time.Time

	mu      sync.Mutex
	samples []metricSample
	absent  bool // the family was missing from a successful scrape
	err     error
}

type metricSample struct {
	t        float64
	requests map[string]float64
	sessions map[string]float64 // obgate's open server sessions; nil when not exported
}

func (m *metricWatch) poll(ctx context.Context) {
	text, err := m.p.scrape(ctx)
	t := time.Since(m.origin).Seconds()
	m.mu.Lock()
	defer m.mu.Unlock()
	if err != nil {
		if ctx.Err() == nil {
			m.err = err
		}
		return
	}
	reqs, ok := serverRequests(text)
	if !ok {
		m.absent = true
		return
	}
	sess, _ := serverSeries(text, ServerSessionsMetric)
	m.samples = append(m.samples, metricSample{t: t, requests: reqs, sessions: sess})
}

// sessionsDuring returns obgate's server-session counts of server sampled
// in [from, to], with their times; none when obgate does not export them.
func (m *metricWatch) sessionsDuring(server string, from, to float64) (ts []float64, counts []int) {
	m.mu.Lock()
	defer m.mu.Unlock()
	for _, s := range m.samples {
		if s.sessions == nil || s.t < from || s.t > to {
			continue
		}
		ts = append(ts, s.t)
		counts = append(counts, int(s.sessions[server]))
	}
	return ts, counts
}

// activity returns the intervals (prev, t] in which server's counter grew,
// as their end times, and whether the metric was there at all.
func (m *metricWatch) activity(server string) ([]float64, bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if len(m.samples) == 0 {
		return nil, false
	}
	var out []float64
	for i := 1; i < len(m.samples); i++ {
		if m.samples[i].requests[server] > m.samples[i-1].requests[server] {
			out = append(out, m.samples[i].t)
		}
	}
	return out, true
}

// perSecond spreads server's counter over whole seconds (each sample's
// increase goes to the second its sample fell in).
func (m *metricWatch) perSecond(server string, n int) []int64 {
	m.mu.Lock()
	defer m.mu.Unlock()
	if len(m.samples) == 0 {
		return nil
	}
	out := make([]int64, n)
	for i := 1; i < len(m.samples); i++ {
		s := int(m.samples[i].t)
		if s >= 0 && s < n {
			out[s] += int64(m.samples[i].requests[server] - m.samples[i-1].requests[server])
		}
	}
	return out
}

// CongestionSample is what SHOW PROXYCONGESTION said of the faulted server
// at one moment.
type CongestionSample struct {
	T      float64 `json:"t"`
	Found  bool    `json:"found"` // the server had a row
	Listed bool    `json:"listed"`
	CongestionRow
}

// congestionWatch asks obgate's admin interface about the faulted server
// once a second.
type congestionWatch struct {
	p      *Proxy
	origin time.Time
	server string

	mu          sync.Mutex
	admin       *adminConn
	samples     []CongestionSample
	unsupported bool
	errs        int
	lastErr     string
}

func (c *congestionWatch) poll(ctx context.Context) {
	c.mu.Lock()
	if c.unsupported {
		c.mu.Unlock()
		return
	}
	if c.admin == nil {
		a, err := openAdmin(c.p)
		if err != nil {
			c.errs++
			c.lastErr = err.Error()
			c.mu.Unlock()
			return
		}
		c.admin = a
	}
	a := c.admin
	c.mu.Unlock()
	qctx, cancel := context.WithTimeout(ctx, 3*time.Second)
	rows, err := a.congestion(qctx)
	cancel()
	t := time.Since(c.origin).Seconds()
	c.mu.Lock()
	defer c.mu.Unlock()
	if err != nil {
		if errors.Is(err, errCongestionUnsupported) {
			c.unsupported = true
		} else if ctx.Err() == nil {
			c.errs++
			c.lastErr = err.Error()
		}
		return
	}
	s := CongestionSample{T: t}
	for _, r := range rows {
		if r.Server == c.server {
			s.Found, s.Listed, s.CongestionRow = true, r.Listed(), r
		}
	}
	c.samples = append(c.samples, s)
}

func (c *congestionWatch) close() {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.admin != nil {
		c.admin.Close()
		c.admin = nil
	}
}

// CongestionReport sums up the samples of a run.
type CongestionReport struct {
	Server string `json:"server"`
	// Available is false when obgate does not answer the command; every
	// expectation on it is then UNKNOWN.
	Available   bool               `json:"available"`
	Unavailable string             `json:"unavailable,omitempty"`
	Errors      int                `json:"errors,omitempty"`
	LastError   string             `json:"last_error,omitempty"`
	Samples     []CongestionSample `json:"samples,omitempty"`
}

func (c *congestionWatch) report() CongestionReport {
	c.mu.Lock()
	defer c.mu.Unlock()
	r := CongestionReport{Server: c.server, Available: !c.unsupported && len(c.samples) > 0,
		Errors: c.errs, LastError: c.lastErr, Samples: append([]CongestionSample(nil), c.samples...)}
	switch {
	case c.unsupported:
		r.Unavailable = errCongestionUnsupported.Error()
	case len(c.samples) == 0:
		r.Unavailable = "no answer to SHOW PROXYCONGESTION: " + c.lastErr
	}
	return r
}

// firstListed returns the first sample time in [from, to) at which the
// server was listed.
func (r CongestionReport) firstListed(from, to float64) (float64, bool) {
	for _, s := range r.Samples {
		if s.T >= from && s.T < to && s.Listed {
			return s.T, true
		}
	}
	return 0, false
}

// listedCount counts the samples in [from, to) that list the server.
func (r CongestionReport) listedCount(from, to float64) (listed, samples int) {
	for _, s := range r.Samples {
		if s.T >= from && s.T < to {
			samples++
			if s.Listed {
				listed++
			}
		}
	}
	return listed, samples
}

// clearedAt returns the first sample time at or after from from which on
// the server was never listed again.
func (r CongestionReport) clearedAt(from float64) (float64, bool) {
	at, ok := 0.0, false
	for _, s := range r.Samples {
		if s.T < from {
			continue
		}
		if s.Listed {
			ok = false
		} else if !ok {
			at, ok = s.T, true
		}
	}
	return at, ok
}

// sessionWatch samples obsim's per-node session counts.
type sessionWatch struct {
	ctl    *obsim.ControlClient
	origin time.Time

	mu      sync.Mutex
	samples []sessionSample
}

type sessionSample struct {
	t     float64
	nodes map[string]int
}

func (s *sessionWatch) poll(context.Context) {
	st, err := s.ctl.State()
	if err != nil {
		return
	}
	smp := sessionSample{t: time.Since(s.origin).Seconds(), nodes: map[string]int{}}
	for _, n := range st.Nodes {
		smp.nodes[n.Name] = n.Sessions
	}
	s.mu.Lock()
	s.samples = append(s.samples, smp)
	s.mu.Unlock()
}

// node returns (t, sessions) of node over [from, to).
func (s *sessionWatch) node(name string, from, to float64) (ts []float64, counts []int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, smp := range s.samples {
		if smp.t >= from && smp.t < to {
			ts = append(ts, smp.t)
			counts = append(counts, smp.nodes[name])
		}
	}
	return ts, counts
}

// lastIn returns the last time in [from, to) of sorted times.
func lastIn(times []float64, from, to float64) (float64, bool) {
	i := sort.SearchFloat64s(times, to) - 1
	if i >= 0 && times[i] >= from {
		return times[i], true
	}
	return 0, false
}

// firstIn returns the first time in [from, to) of sorted times.
func firstIn(times []float64, from, to float64) (float64, bool) {
	i := sort.SearchFloat64s(times, from)
	if i < len(times) && times[i] < to {
		return times[i], true
	}
	return 0, false
}

// countIn counts the times in [from, to).
func countIn(times []float64, from, to float64) int {
	return sort.SearchFloat64s(times, to) - sort.SearchFloat64s(times, from)
}
