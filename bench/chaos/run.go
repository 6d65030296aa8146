package chaos

import (
	"context"
	"database/sql"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"obgate/bench/suite"
)

// Settings configure a suite.
type Settings struct {
	// Obgate, OBSim and HAProxy are the programs run.
	Obgate, OBSim, HAProxy string
	// Workers is the number of load clients, Writers how many of them
	// write (0: a quarter, at least one).
	Workers, Writers int
	// Rate bounds the load's statements per second (0: unbounded).
	Rate int
	// TableSize is the number of rows of sbtest1.
	TableSize int
	// Scale multiplies every phase of every scenario.
	Scale float64
	// Quick selects the short phases.
	Quick bool
	// WorkDir receives the processes' logs; OutDir a JSON file per run and
	// PlotDir a PNG per run ("" writes none).
	WorkDir, OutDir, PlotDir string
	// ExtraOpts are -o options for every obgate.
	ExtraOpts []string
	// Root is the repository, from which the upgrade scenarios build the
	// versions they upgrade to ("": copies of Obgate).
	Root string
	// Progress receives a line per step; nil discards them.
	Progress io.Writer
}

// LoadWriters is how many of the load's clients write.
func (s Settings) LoadWriters() int {
	if s.Writers > 0 {
		return min(s.Writers, s.Workers)
	}
	return max(1, s.Workers/4)
}

// phase picks the full or quick length of a phase, scaled.
func (s Settings) phase(full, quick time.Duration) time.Duration {
	d := full
	if s.Quick {
		d = quick
	}
	if s.Scale > 0 {
		d = time.Duration(float64(d) * s.Scale)
	}
	return d
}

// Suite runs scenarios; the simulated cluster is started on first use and
// shared by the scenarios that need it.
type Suite struct {
	set Settings
	sim *SimEnv
}

// NewSuite returns a suite with settings set.
func NewSuite(set Settings) *Suite {
	if set.Workers <= 0 {
		set.Workers = 16
	}
	if set.TableSize <= 0 {
		set.TableSize = 5000
	}
	if set.Scale <= 0 {
		set.Scale = 1
	}
	return &Suite{set: set}
}

// Close stops the shared cluster.
func (s *Suite) Close() {
	if s.sim != nil {
		s.sim.Close()
		s.sim = nil
	}
}

func (s *Suite) progress(format string, args ...any) {
	if s.set.Progress != nil {
		fmt.Fprintf(s.set.Progress, "chaos: "+format+"\n", args...)
	}
}

// Run carries out a scenario and returns a result per target (obgate,
// and HAProxy for the MariaDB scenario). A result's Error says when the
// run could not be carried out; failed expectations are in its Checks.
func (s *Suite) Run(ctx context.Context, sc *Scenario) []*Result {
	var out []*Result
	if sc.MySQL {
		for _, target := range []string{"obgate", "haproxy"} {
			out = append(out, s.runMaria(ctx, sc, target))
		}
	} else {
		out = []*Result{s.runSim(ctx, sc)}
	}
	for _, res := range out {
		s.publish(sc, res)
	}
	return out
}

// publish writes a run's JSON and plot where the settings say.
func (s *Suite) publish(sc *Scenario, res *Result) {
	if s.set.OutDir != "" {
		if err := os.MkdirAll(s.set.OutDir, 0o755); err == nil {
			path := filepath.Join(s.set.OutDir, res.Scenario+"-"+res.Target+".json")
			if err := suite.WriteJSON(path, res); err != nil {
				res.Notes = append(res.Notes, "json: "+err.Error())
			} else {
				res.JSONPath = path
			}
		}
	}
	if s.set.PlotDir != "" && len(res.Series) > 0 {
		name := "chaos-" + res.Scenario
		if sc.MySQL {
			name += "-" + res.Target
		}
		path := filepath.Join(s.set.PlotDir, name+".png")
		if err := os.MkdirAll(s.set.PlotDir, 0o755); err != nil {
			res.Notes = append(res.Notes, "plot: "+err.Error())
		} else if err := WritePlot(res, path); err != nil {
			res.Notes = append(res.Notes, "plot: "+err.Error())
		} else {
			res.PlotPath = path
		}
	}
}

// run is one scenario against one proxy.
type run struct {
	set    Settings
	sc     *Scenario
	res    *Result
	dir    string
	proxy  *Proxy
	origin time.Time
	endAt  float64
	ledger *Ledger
	load   *Load
	sim    *SimEnv // nil against MariaDB
	pair   *MariaPair

	logs  *logWatch
	mets  *metricWatch
	cong  *congestionWatch
	sess  *sessionWatch
	polls []*poller

	// backend counts the sessions the servers hold, for the leak check.
	backend func(ctx context.Context) int
	// ledgerDBs are direct connections to every database with a ledger.
	ledgerDBs []string
	// counts is the ledger as read at the end.
	counts map[string]int
	// extra holds scenario-specific findings for judge.
	extra map[string]any
}

func (s *Suite) newRun(sc *Scenario, target string) (*run, error) {
	r := &run{set: s.set, sc: sc, ledger: NewLedger(), extra: map[string]any{},
		res: &Result{Scenario: sc.Name, Title: sc.Title, Target: target, Started: time.Now()}}
	r.dir = filepath.Join(s.set.WorkDir, sc.Name+"-"+target)
	if err := os.MkdirAll(r.dir, 0o755); err != nil {
		return r, err
	}
	return r, nil
}

func (s *Suite) runSim(ctx context.Context, sc *Scenario) *Result {
	r, err := s.newRun(sc, "obgate")
	if err != nil {
		r.res.Error = err.Error()
		return r.res
	}
	if s.sim == nil {
		s.progress("starting MariaDB and the simulated cluster")
		if s.sim, err = StartSim(ctx, s.set.OBSim, s.set.WorkDir, s.set.TableSize); err != nil {
			r.res.Error = "simulated cluster: " + err.Error()
			return r.res
		}
	}
	r.sim = s.sim
	if err := r.sim.Prepare(ctx); err != nil {
		r.res.Error = "preparing the cluster: " + err.Error()
		return r.res
	}
	r.ledgerDBs = []string{r.sim.DB.Addr()}
	r.backend = func(context.Context) int {
		st, err := r.sim.Ctl.State()
		if err != nil {
			return -1
		}
		n := 0
		for _, node := range st.Nodes {
			n += node.Sessions
		}
		return n
	}
	opts := append(append([]string(nil), sc.Opts...), s.set.ExtraOpts...)
	r.res.Options = opts
	bin := s.set.Obgate
	if sc.Upgrades {
		s.progress("%s: building the versions to upgrade to", sc.Name)
		if bin, err = r.prepareUpgrades(ctx); err != nil {
			r.res.Error = "builds: " + err.Error()
			return r.res
		}
	}
	s.progress("%s: starting obgate", sc.Name)
	user := "root@" + Tenant + "#" + ClusterName
	p, err := StartObgate(ctx, bin, r.dir, []string{"-r", r.sim.RSList, "-c", ClusterName}, opts, user)
	if err != nil {
		r.res.Error = "obgate: " + err.Error()
		return r.res
	}
	r.proxy = p
	r.res.Command = p.Argv
	r.target(sc.Node)
	r.execute(ctx, user)
	return r.res
}

// target names the faulted node (obsim) and points the watchers at it.
func (r *run) target(node string) {
	r.res.Server = node
	if r.sim != nil {
		r.res.ServerAddr = r.sim.Node(node).Addr
	}
	if r.cong != nil {
		r.cong.mu.Lock()
		r.cong.server = r.res.ServerAddr
		r.cong.mu.Unlock()
	}
}

// execute runs the scenario's timeline under load, then the checks, and
// stops the proxy.
func (r *run) execute(ctx context.Context, user string) {
	defer func() {
		if err := r.proxy.Stop(); err != nil {
			r.res.Notes = append(r.res.Notes, "stopping "+r.proxy.Kind+": "+err.Error())
		}
	}()
	if r.proxy.Kind == "obgate" {
		r.res.Config = readConfig(ctx, r.proxy)
	}
	// The baseline: obgate's background sessions are up, no client yet.
	if err := sleepCtx(ctx, time.Second); err != nil {
		r.res.Error = err.Error()
		return
	}
	r.res.Leak.Before = r.snapshot(ctx)

	r.origin = time.Now()
	if r.sim != nil {
		r.logs = newLogWatch(r.sim.Ctl, r.origin, "root")
		r.sess = &sessionWatch{ctl: r.sim.Ctl, origin: r.origin}
		r.polls = append(r.polls, startPoller(ctx, 250*time.Millisecond, r.logs.poll),
			startPoller(ctx, time.Second, r.sess.poll))
	}
	if r.proxy.MetricsPort != 0 {
		r.mets = &metricWatch{p: r.proxy, origin: r.origin}
		r.polls = append(r.polls, startPoller(ctx, 500*time.Millisecond, r.mets.poll))
	}
	if r.proxy.Kind == "obgate" {
		r.cong = &congestionWatch{p: r.proxy, origin: r.origin, server: r.res.ServerAddr}
		r.polls = append(r.polls, startPoller(ctx, time.Second, r.cong.poll))
	}
	writers := r.set.LoadWriters()
	load, err := StartLoad(LoadConfig{
		Addr: r.proxy.Addr(), User: user,
		Readers: r.set.Workers - writers, Writers: writers,
		TableSize: r.set.TableSize, Rate: r.set.Rate,
		Tag: r.sc.Name + "-" + r.proxy.Kind, Prepared: r.sc.Prepared,
	}, r.origin, r.ledger)
	if err != nil {
		r.stopWatchers()
		r.res.Error = "load: " + err.Error()
		return
	}
	r.load = load
	playErr := r.sc.play(ctx, r)
	r.endAt = time.Since(r.origin).Seconds()
	r.load.Stop()
	r.stopWatchers()
	if r.sim != nil {
		if err := r.sim.Ctl.Reset(); err != nil {
			r.res.Notes = append(r.res.Notes, "obsim reset: "+err.Error())
		}
	}
	r.collect()
	if playErr != nil {
		r.res.Error = playErr.Error()
	}
	r.measureLeak(ctx)
	if r.sc.afterLoad != nil {
		if err := r.sc.afterLoad(ctx, r); err != nil {
			r.res.Notes = append(r.res.Notes, err.Error())
		}
	}
	r.readLedger(ctx)
	if r.res.Error == "" {
		r.checkReached()
		r.sc.judge(r)
	}
}

func (r *run) stopWatchers() {
	for _, p := range r.polls {
		p.stop()
	}
	r.polls = nil
	if r.cong != nil {
		r.cong.close()
	}
}

// collect turns the watchers' samples into the result's load figures,
// windows and series.
func (r *run) collect() {
	res := r.res
	res.DurationS = r.endAt
	res.Load = r.load.Stats()
	res.Series = res.Load.Series
	if r.cong != nil {
		res.Congestion = r.cong.report()
	}
	var nodeTimes []float64
	if r.logs != nil {
		nodeTimes = r.logs.nodeTimes(res.Server)
		r.logs.mu.Lock()
		res.LogLost = r.logs.lost
		if r.logs.err != nil {
			res.Notes = append(res.Notes, "obsim log: "+r.logs.err.Error())
		}
		r.logs.mu.Unlock()
	}
	var act []float64
	metricOK := false
	if r.mets != nil {
		act, metricOK = r.mets.activity(res.ServerAddr)
		r.mets.mu.Lock()
		if r.mets.absent && len(r.mets.samples) == 0 {
			res.Notes = append(res.Notes, "obgate has no "+ServerRequestsMetric+" metric: per-server figures from the obsim log only")
		}
		r.mets.mu.Unlock()
	}
	switch {
	case r.logs == nil:
	case r.sc.Blind == BlindDuring:
		res.Notes = append(res.Notes, "obsim's log cannot see requests sent to the node during the fault (it refuses connections)")
	case r.sc.Blind == BlindBacklog:
		res.Notes = append(res.Notes, "obsim's log cannot see requests sent to the node during the fault, and logs them when it ends")
	}
	for i, e := range res.Events {
		if e.Kind != "fault" {
			continue
		}
		w := Window{Fault: e.What, FaultAt: e.At, RecoverAt: -1}
		for _, f := range res.Events[i+1:] {
			if f.Kind == "recover" {
				w.RecoverAt = f.At
				break
			}
			if f.Kind == "fault" {
				break
			}
		}
		faultEnd := r.endAt
		if w.RecoverAt >= 0 {
			faultEnd = w.RecoverAt
		}
		drain := func(times []float64) *float64 {
			d := 0.0
			if last, ok := lastIn(times, w.FaultAt, faultEnd); ok {
				d = last - w.FaultAt
			}
			return &d
		}
		back := func(times []float64) *float64 {
			if w.RecoverAt < 0 {
				return nil
			}
			if first, ok := firstIn(times, w.RecoverAt, r.endAt+1); ok {
				d := first - w.RecoverAt
				return &d
			}
			return nil
		}
		switch {
		case r.logs != nil:
			w.Source = "obsim log"
			w.DrainS, w.ReturnS = drain(nodeTimes), back(nodeTimes)
			w.RequestsDuring = countIn(nodeTimes, w.FaultAt, faultEnd)
			if r.sc.Blind >= BlindDuring {
				w.DrainS, w.RequestsDuring = nil, -1
			}
			if r.sc.Blind >= BlindBacklog {
				w.ReturnS = nil
			}
			if metricOK {
				w.MetricDrainS, w.MetricReturnS = drain(act), back(act)
			}
		case metricOK:
			w.Source = "obgate metric"
			w.DrainS, w.ReturnS = drain(act), back(act)
			w.RequestsDuring = -1
		default:
			w.RequestsDuring = -1
		}
		res.Windows = append(res.Windows, w)
	}
	// Requests per second to the faulted server, for the plot.
	switch {
	case r.logs != nil:
		for i := range res.Series {
			res.Series[i].NodeRequests = int64(countIn(nodeTimes, float64(i), float64(i+1)))
		}
	case metricOK:
		per := r.mets.perSecond(res.ServerAddr, len(res.Series))
		for i := range res.Series {
			res.Series[i].NodeRequests = per[i]
		}
	}
}

// snapshot reads the proxy's and the servers' side of the leak check.
func (r *run) snapshot(ctx context.Context) Snapshot {
	s := r.proxy.snapshot(ctx)
	if r.backend != nil {
		s.BackendSessions = r.backend(ctx)
	}
	return s
}

// measureLeak waits for the proxy to settle after the clients left and
// compares it with the baseline.
func (r *run) measureLeak(ctx context.Context) {
	start := time.Now()
	settle := r.set.phase(3*time.Second, 2*time.Second)
	_ = sleepCtx(ctx, settle)
	deadline := start.Add(settle + 10*time.Second)
	l := &r.res.Leak
	for {
		l.After = r.snapshot(ctx)
		l.judge()
		if l.OK || time.Now().After(deadline) || ctx.Err() != nil {
			break
		}
		_ = sleepCtx(ctx, 500*time.Millisecond)
	}
	l.SettleS = time.Since(start).Seconds()
}

// readLedger reads the ledger of every database straight from the
// servers and compares it with the client's record.
func (r *run) readLedger(ctx context.Context) {
	r.counts = map[string]int{}
	for _, addr := range r.ledgerDBs {
		db, err := directDB(addr)
		if err == nil {
			err = readLedgerCtx(ctx, db, r.counts)
			db.Close()
		}
		if err != nil {
			r.res.Ledger = LedgerCheck{Error: addr + ": " + err.Error()}
			return
		}
	}
	r.res.Ledger = r.ledger.Check(r.counts)
}

func readLedgerCtx(ctx context.Context, db *sql.DB, counts map[string]int) error {
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	return readLedger(ctx, db, counts)
}

// event records a moment of the timeline.
func (r *run) event(kind, what string) {
	r.res.Events = append(r.res.Events, Event{Kind: kind, What: what, At: time.Since(r.origin).Seconds()})
}

// fault applies a fault and records it.
func (r *run) fault(what string, apply func() error) error {
	if err := apply(); err != nil {
		return fmt.Errorf("%s: %w", what, err)
	}
	r.event("fault", what)
	return nil
}

// repair undoes a fault and records it.
func (r *run) repair(what string, undo func() error) error {
	if err := undo(); err != nil {
		return fmt.Errorf("%s: %w", what, err)
	}
	r.event("recover", what)
	return nil
}

// window is warm-up, fault, hold, repair, observation.
func (r *run) window(ctx context.Context, warm time.Duration, what string, apply func() error,
	hold time.Duration, undoWhat string, undo func() error, after time.Duration) error {
	if err := sleepCtx(ctx, warm); err != nil {
		return err
	}
	if err := r.fault(what, apply); err != nil {
		return err
	}
	holdErr := sleepCtx(ctx, hold)
	if err := r.repair(undoWhat, undo); err != nil {
		return err
	}
	if holdErr != nil {
		return holdErr
	}
	return sleepCtx(ctx, after)
}

func sleepCtx(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

// configItems are the obgate settings the expectations depend on.
var configItems = []string{
	"server_state_refresh_interval", "min_keep_congestion_interval", "congestion_retry_interval",
	"congestion_failure_threshold", "congestion_fail_window", "server_detect_mode",
	"detect_server_timeout", "server_detect_refresh_interval", "enable_cached_server", "server_routing_mode",
}

// readConfig asks obgate (SHOW PROXYCONFIG LIKE) for configItems.
func readConfig(ctx context.Context, p *Proxy) map[string]string {
	a, err := openAdmin(p)
	if err != nil {
		return nil
	}
	defer a.Close()
	out := map[string]string{}
	for _, name := range configItems {
		qctx, cancel := context.WithTimeout(ctx, 3*time.Second)
		rows, err := a.db.QueryContext(qctx, "SHOW PROXYCONFIG LIKE '"+name+"'")
		if err == nil {
			cols, _ := rows.Columns()
			vals := make([]sql.NullString, len(cols))
			ptrs := make([]any, len(cols))
			for i := range vals {
				ptrs[i] = &vals[i]
			}
			for rows.Next() {
				if rows.Scan(ptrs...) == nil {
					for i, c := range cols {
						if strings.EqualFold(c, "value") {
							out[name] = vals[i].String
						}
					}
				}
			}
			rows.Close()
		}
		cancel()
	}
	return out
}

// obgate's defaults of the settings above (ODP's, but detect_server_timeout),
// used when obgate does not say.
var configDefaults = map[string]string{
	"server_state_refresh_interval": "20s", "min_keep_congestion_interval": "20s",
	"congestion_retry_interval": "20s", "congestion_failure_threshold": "5", "congestion_fail_window": "120s",
	"server_detect_mode": "1", "detect_server_timeout": "1s", "server_detect_refresh_interval": "1s",
}

// setting returns an obgate setting: as obgate reported it, else as the
// -o options gave it, else ODP's default.
func (r *run) setting(name string) string {
	if v, ok := r.res.Config[name]; ok && v != "" {
		return v
	}
	for _, o := range r.res.Options {
		if k, v, ok := strings.Cut(o, "="); ok && strings.TrimSpace(k) == name {
			return strings.TrimSpace(v)
		}
	}
	return configDefaults[name]
}

// duration reads a duration setting ("2s", or a bare number of
// microseconds as ODP writes them).
func (r *run) duration(name string) time.Duration {
	v := r.setting(name)
	if d, err := time.ParseDuration(v); err == nil {
		return d
	}
	if n, err := strconv.ParseInt(v, 10, 64); err == nil {
		return time.Duration(n) * time.Microsecond
	}
	d, _ := time.ParseDuration(configDefaults[name])
	return d
}
