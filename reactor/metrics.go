package reactor

import (
	"errors"
	"strconv"
	"sync"
	"time"

	"obgate/config"
	"obgate/metrics"
	"obgate/mysqlproto"
	"obgate/route"

	vm "github.com/VictoriaMetrics/metrics"
)

// reactorMetrics holds the series reactor updates, looked up once so the
// per-statement path only does atomic adds.
type reactorMetrics struct {
	newClientOK            *vm.Counter
	newClientFail          *vm.Counter
	serverConnectFailures  *vm.Counter
	serverChecksumFailures *vm.Counter
	serverBreaks           *vm.Counter
	preparesReused         *vm.Counter
	bytesFromClient        *vm.Counter
	bytesToClient          *vm.Counter
	bytesFromServer        *vm.Counter
	latency                *vm.PrometheusHistogram
	quits                  [len(quitNames)]*vm.Counter
	panics                 [numPanicSites]*vm.Counter
	resent                 *vm.Counter
	// polledFinished counts commands that began and ended on the poller;
	// handOffs those it gave to a goroutine, by handOffLabels.
	polledFinished *vm.Counter
	handOffs       [len(handOffLabels)]*vm.Counter
	// handovers counts sessions sent, adopted and refused (handover.go).
	handoverSent, handoverAdopted, handoverRefused *vm.Counter
	sessionsMoved                                  *vm.Counter
	partitionHits                                  [2]*vm.Counter // ob_proxy_partition_hit feedback: [hit]
	refusedFD                                      *vm.Counter    // clients refused: no file descriptor left
	refusedMemory                                  *vm.Counter    // clients refused: memory over the high-water mark
	refusedHandshakes                              *vm.Counter    // clients refused: too many handshakes in progress
	refusedAdmin                                   *vm.Counter    // administrator logins refused: address blocked

	errMu    sync.RWMutex
	errCodes map[uint16]*vm.Counter // SQLErrors by code, made on first use; under errMu

	reg       *metrics.Registry
	appName   string   // the logicTenant label
	tenants   sync.Map // cluster + "\x00" + tenant + "\x00" + schema → *tenantMetrics
	unsubsCfg func()   // ends the config subscription
}

// tenantMetrics are the statement series of one cluster, tenant and
// schema (metrics.Group). Its slots fill on first use and may be emptied
// again by the registry's sweep (monitor_item_limit,
// monitor_item_max_idle_period); a session keeps the set of its current
// database (Session.series, stmtSeries).
type tenantMetrics struct {
	g     *metrics.Group
	stmts [route.NumStmtKinds][2][2]metrics.Slot // [kind][failed][partition missed]
	cost  [route.NumStmtKinds][3]metrics.Slot    // [kind][costTotal, costPrepare, costServer]
	// transactions counts finished transactions.
	transactions metrics.Slot
	// entries counts table-entry lookups of statements routed by table,
	// [routeHit][routeResult]: the cache had the table's location; the
	// statement's partition was found in it. An extra family.
	entries [2][2]metrics.Slot
}

// Indexes of tenantMetrics.cost, and their timeType labels.
const (
	costTotal = iota
	costPrepare
	costServer
)

var costTimeTypes = [3]string{metrics.TimeTotal, metrics.TimePrepare, metrics.TimeServer}

func newReactorMetrics(r *metrics.Registry, srv *Server) *reactorMetrics {
	m := &reactorMetrics{
		newClientOK:            r.Counter(metrics.NewClientConnections, "connectionResult", metrics.ResultSuccess),
		newClientFail:          r.Counter(metrics.NewClientConnections, "connectionResult", metrics.ResultFail),
		serverConnectFailures:  r.Counter(metrics.ServerConnectFailures),
		handoverSent:           r.Counter(metrics.SessionHandovers, "direction", "sent"),
		handoverAdopted:        r.Counter(metrics.SessionHandovers, "direction", "adopted"),
		handoverRefused:        r.Counter(metrics.SessionHandovers, "direction", "refused"),
		serverChecksumFailures: r.Counter(metrics.ServerFailures, "reason", "checksum"),
		serverBreaks:           r.Counter(metrics.ServerFailures, "reason", "connection"),
		preparesReused:         r.Counter(metrics.PreparesReused),
		bytesFromClient:        r.ExtraCounter(metrics.RequestByte, "transType", metrics.TransRequest, "sessionType", metrics.SessionClient),
		bytesToClient:          r.ExtraCounter(metrics.RequestByte, "transType", metrics.TransResponse, "sessionType", metrics.SessionClient),
		bytesFromServer:        r.ExtraCounter(metrics.RequestByte, "transType", metrics.TransResponse, "sessionType", metrics.SessionServer),
		latency:                r.Histogram(metrics.LatencyBuckets, metrics.SQLLatency),
		refusedFD:              r.Counter(metrics.ClientRefused, "reason", metrics.RefusedFDExhausted),
		refusedMemory:          r.Counter(metrics.ClientRefused, "reason", metrics.RefusedMemory),
		refusedHandshakes:      r.Counter(metrics.ClientRefused, "reason", metrics.RefusedHandshakes),
		refusedAdmin:           r.Counter(metrics.ClientRefused, "reason", metrics.RefusedAdminBlocked),
		resent:                 r.Counter(metrics.StatementsResent),
		sessionsMoved:          r.Counter(metrics.SessionsMoved),
		partitionHits: [2]*vm.Counter{
			r.Counter(metrics.PartitionHits, "partitionHit", "false"),
			r.Counter(metrics.PartitionHits, "partitionHit", "true"),
		},
	}
	r.GaugeFunc(func() float64 {
		hit, miss := m.partitionHits[1].Get(), m.partitionHits[0].Get()
		if hit+miss == 0 {
			return 1
		}
		return float64(hit) / float64(hit+miss)
	}, metrics.PartitionHitRatio)
	m.polledFinished = r.Counter(metrics.PollerFinished)
	for i, label := range handOffLabels {
		m.handOffs[i] = r.Counter(metrics.PollerHandOffs, "step", label)
	}
	for i := range m.panics {
		m.panics[i] = r.Counter(metrics.Panics, "where", panicSite(i).String())
	}
	m.reg = r
	m.errCodes = map[uint16]*vm.Counter{}
	m.watchConfig(srv.cfg, &srv.mem)
	for i := range m.quits {
		m.quits[i] = r.Counter("obgate_session_quit_total", "reason", QuitSource(i).String())
	}
	r.GaugeFunc(func() float64 { return float64(srv.mem.limit.Load()) }, metrics.MemoryLimit)
	r.GaugeFunc(func() float64 { return float64(srv.mem.inUse.Load()) }, metrics.MemoryInUse)
	r.GaugeFunc(func() float64 {
		if srv.mem.high.Load() {
			return 1
		}
		return 0
	}, metrics.MemoryHigh)
	r.GaugeFunc(func() float64 { return float64(srv.clients.Load()) }, metrics.CurrentSession, "sessionType", metrics.SessionClient)
	r.GaugeFunc(func() float64 { return float64(srv.servers.Total.Load()) }, metrics.CurrentSession, "sessionType", metrics.SessionServer)
	srv.servers.NewAddr = func(addr string) {
		r.GaugeFunc(func() float64 { return float64(srv.servers.Count(addr)) }, metrics.ServerSessions, "server", addr)
	}
	return m
}

// watchConfig applies the items that limit the registry's label sets, and
// proxy_mem_limited, now and at each change of the running configuration.
func (m *reactorMetrics) watchConfig(store *config.Store, mem *memGuard) {
	apply := func(c *config.Config) {
		mem.applyMemLimit(c) // proxy_mem_limited, with the metric items
		m.reg.SetLimits(c.MonitorItemLimit, c.MonitorItemMaxIdlePeriod)
		m.reg.SetExtra(c.EnableExtraPrometheusMetric)
	}
	cfg := store.Load()
	m.appName = cfg.AppName
	apply(cfg)
	m.unsubsCfg = store.Subscribe(func(_, c *config.Config) { apply(c) })
}

// forTenant returns the statement series of a cluster, tenant and schema
// (cluster and tenant "" in mysql routing mode), creating the set on
// first use; its series are created as they are first counted. Tenants
// come from successful logins and schemas from databases the server
// accepted, and sets without series cost a few kilobytes of slots; the
// series themselves are what monitor_item_limit bounds.
func (m *reactorMetrics) forTenant(cluster, tenant, schema string) *tenantMetrics {
	key := cluster + "\x00" + tenant + "\x00" + schema
	if tm, ok := m.tenants.Load(key); ok {
		return tm.(*tenantMetrics)
	}
	tm := &tenantMetrics{g: m.reg.Group("logicTenant", m.appName, "logicSchema", "",
		"cluster", cluster, "tenant", tenant, "schema", schema)}
	actual, _ := m.tenants.LoadOrStore(key, tm)
	return actual.(*tenantMetrics)
}

// statement counts one statement: kind, failed and missed select the
// series; cost holds its total, prepare and server times.
func (tm *tenantMetrics) statement(kind route.StmtKind, failed, missed bool, cost *[3]time.Duration) {
	f, h := 0, 0
	if failed {
		f = 1
	}
	if missed {
		h = 1
	}
	if c := tm.stmts[kind][f][h].Counter(); c != nil {
		c.Inc()
	} else if c := tm.createStmt(kind, f, h); c != nil {
		c.Inc()
	}
	for i, d := range cost {
		us := int(d / time.Microsecond)
		if us <= 0 && i != costTotal {
			continue
		}
		if c := tm.cost[kind][i].Counter(); c != nil {
			c.Add(us)
		} else if c := tm.createCost(kind, i); c != nil {
			c.Add(us)
		}
	}
}

func (tm *tenantMetrics) createStmt(kind route.StmtKind, f, h int) *vm.Counter {
	res := metrics.ResultSuccess
	if f == 1 {
		res = metrics.ResultFail
	}
	return tm.g.Create(&tm.stmts[kind][f][h], false, metrics.SQLRequestTotal,
		"sqlType", kind.String(), "sqlResult", res, "partitionHit", strconv.FormatBool(h == 0))
}

func (tm *tenantMetrics) createCost(kind route.StmtKind, i int) *vm.Counter {
	return tm.g.Create(&tm.cost[kind][i], false, metrics.SQLCostTotal,
		"sqlType", kind.String(), "timeType", costTimeTypes[i])
}

// countStatement counts one finished statement of the session and its
// times: the latency histogram, and the tenant's odp_sql_request_total
// and odp_sql_cost_total. The request went to a server when the last
// relay began after start (its sentAt and firstAt, relay.go); otherwise
// obgate answered it itself and only the total counts.
func (s *Session) countStatement(kind route.StmtKind, failed bool, start time.Time) {
	tm := s.series.of(s.srv.metrics, s.published.db)
	if int(kind) >= len(tm.stmts) {
		kind = route.StmtOther
	}
	now := time.Now()
	var cost [3]time.Duration
	cost[costTotal] = now.Sub(start)
	if r := &s.st.rr; !r.sentAt.Before(start) {
		cost[costPrepare] = r.sentAt.Sub(start)
		if r.firstAt.Before(r.sentAt) {
			cost[costServer] = now.Sub(r.sentAt) // no answer came
		} else {
			cost[costServer] = r.firstAt.Sub(r.sentAt)
		}
	}
	missed := s.st.partitionMissed
	s.st.partitionMissed = false
	tm.statement(kind, failed, missed, &cost)
	s.srv.metrics.latency.Update(cost[costTotal].Seconds())
}

// serverFailure counts a server session that broke under a statement.
func (m *reactorMetrics) serverFailure(err error) {
	if errors.Is(err, mysqlproto.ErrOB20PayloadChecksum) || errors.Is(err, mysqlproto.ErrOB20HeaderChecksum) {
		m.serverChecksumFailures.Inc()
		return
	}
	m.serverBreaks.Inc()
}

func (m *reactorMetrics) quit(src QuitSource) {
	if int(src) < len(m.quits) {
		m.quits[src].Inc()
	}
}

// countTransaction counts a finished transaction.
func (tm *tenantMetrics) countTransaction() {
	if c := tm.transactions.Counter(); c != nil {
		c.Inc()
	} else if c := tm.g.Create(&tm.transactions, false, metrics.TransactionTotal); c != nil {
		c.Inc()
	}
}

// stmtSeries finds a session's statement series (tenantMetrics): by
// cluster and tenant in OceanBase mode (set at login, where both were
// checked), "" and "" otherwise (mysql routing mode, where login names
// may carry any tenant, and sessions that did not log in); by the current
// database in both. A change of any of them forgets the series found, so
// that the next statement finds the new one. Owner goroutine only.
type stmtSeries struct {
	tm              *tenantMetrics // nil: find again
	cluster, tenant string
}

// of is the series for database db, found once.
func (ss *stmtSeries) of(m *reactorMetrics, db string) *tenantMetrics {
	if ss.tm == nil {
		ss.tm = m.forTenant(ss.cluster, ss.tenant, db)
	}
	return ss.tm
}

// forget drops the series found: the database changed.
func (ss *stmtSeries) forget() { ss.tm = nil }

// setTenant names the cluster and tenant of the series (an OceanBase-mode
// login or adoption).
func (ss *stmtSeries) setTenant(cluster, tenant string) {
	ss.cluster, ss.tenant, ss.tm = cluster, tenant, nil
}

// partitionHit counts one ob_proxy_partition_hit feedback.
func (m *reactorMetrics) partitionHit(hit bool) {
	if hit {
		m.partitionHits[1].Inc()
	} else {
		m.partitionHits[0].Inc()
	}
}

// countEntry counts the table-entry lookup of a statement routed by
// table (odp_entry_total, an extra family).
func (tm *tenantMetrics) countEntry(found, located bool) {
	h, r := 0, 0
	if found {
		h = 1
	}
	if located {
		r = 1
	}
	sl := &tm.entries[h][r]
	if c := sl.Counter(); c != nil {
		c.Inc()
	} else if c := tm.g.Create(sl, true, metrics.EntryTotal, "entryType", "table_entry",
		"routeHit", strconv.FormatBool(found), "routeResult", strconv.FormatBool(located)); c != nil {
		c.Inc()
	}
}

// sqlError counts an ERR packet with code that answered a client command.
// Any goroutine; a read lock once the code's counter exists.
func (m *reactorMetrics) sqlError(code uint16) {
	m.errMu.RLock()
	c := m.errCodes[code]
	m.errMu.RUnlock()
	if c == nil {
		m.errMu.Lock()
		if c = m.errCodes[code]; c == nil {
			c = m.reg.Counter(metrics.SQLErrors, "code", strconv.Itoa(int(code)))
			m.errCodes[code] = c
		}
		m.errMu.Unlock()
	}
	c.Inc()
}

// retried counts a statement sent elsewhere after a server ERR.
func (m *reactorMetrics) retried(code uint16) {
	m.reg.Counter(metrics.StatementsRetried, "code", strconv.Itoa(int(code))).Inc()
}
