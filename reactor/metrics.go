package reactor

import (
	"errors"
	"strconv"
	"sync"
	"time"

	vm "github.com/VictoriaMetrics/metrics"
	"obgate/metrics"
	"obgate/mysqlproto"
	"obgate/route"
)

// reactorMetrics holds the series reactor updates, looked up once so the
// per-statement path only does atomic adds.
type reactorMetrics struct {
	newClientOK            *vm.Counter
	newClientFail          *vm.Counter
	serverConnectFailures  *vm.Counter
	serverChecksumFailures *vm.Counter
	serverBreaks           *vm.Counter
	bytesFromClient        *vm.Counter
	bytesToClient          *vm.Counter
	bytesFromServer        *vm.Counter
	latency                *vm.PrometheusHistogram
	quits                  [len(quitNames)]*vm.Counter
	panics                 [numPanicSites]*vm.Counter
	resent                 *vm.Counter
	sessionsMoved          *vm.Counter
	partitionHits          [2]*vm.Counter // ob_proxy_partition_hit feedback: [hit]
	refusedFD              *vm.Counter    // clients refused: no file descriptor left

	reg     *metrics.Registry
	tenants sync.Map // cluster + "\x00" + tenant → *tenantMetrics
}

// tenantMetrics are the statement series of one cluster and tenant; a
// session finds its set once, at login.
type tenantMetrics struct {
	stmts        [route.NumStmtKinds][2]*vm.Counter // [kind][failed]
	transactions *vm.Counter
	// entries counts table-entry lookups of statements routed by table,
	// [routeHit][routeResult]: the cache had the table's location; the
	// statement's partition was found in it.
	entries [2][2]*vm.Counter
}

func newReactorMetrics(r *metrics.Registry, srv *Server) *reactorMetrics {
	m := &reactorMetrics{
		newClientOK:            r.Counter(metrics.NewClientConnections, "connectionResult", metrics.ResultSuccess),
		newClientFail:          r.Counter(metrics.NewClientConnections, "connectionResult", metrics.ResultFail),
		serverConnectFailures:  r.Counter(metrics.ServerConnectFailures),
		serverChecksumFailures: r.Counter(metrics.ServerFailures, "reason", "checksum"),
		serverBreaks:           r.Counter(metrics.ServerFailures, "reason", "connection"),
		bytesFromClient:        r.Counter(metrics.RequestByte, "transType", metrics.TransRequest, "sessionType", metrics.SessionClient),
		bytesToClient:          r.Counter(metrics.RequestByte, "transType", metrics.TransResponse, "sessionType", metrics.SessionClient),
		bytesFromServer:        r.Counter(metrics.RequestByte, "transType", metrics.TransResponse, "sessionType", metrics.SessionServer),
		latency:                r.Histogram(metrics.LatencyBuckets, metrics.SQLLatency),
		refusedFD:              r.Counter(metrics.ClientRefused, "reason", metrics.RefusedFDExhausted),
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
	for i := range m.panics {
		m.panics[i] = r.Counter(metrics.Panics, "where", panicSite(i).String())
	}
	m.reg = r
	m.forTenant("", "") // mysql routing mode's series exist from the start
	for i := range m.quits {
		m.quits[i] = r.Counter("obgate_session_quit_total", "reason", QuitSource(i).String())
	}
	r.GaugeFunc(func() float64 { return float64(srv.clients.Load()) }, metrics.CurrentSession, "sessionType", metrics.SessionClient)
	r.GaugeFunc(func() float64 { return float64(srv.servers.total.Load()) }, metrics.CurrentSession, "sessionType", metrics.SessionServer)
	srv.servers.newAddr = func(addr string) {
		r.GaugeFunc(func() float64 { return float64(srv.servers.count(addr)) }, metrics.ServerSessions, "server", addr)
	}
	return m
}

// forTenant returns the statement series of a cluster and tenant ("" and
// "" in mysql routing mode), creating them on first use. Tenants come from
// successful logins, so the number of series stays bounded.
func (m *reactorMetrics) forTenant(cluster, tenant string) *tenantMetrics {
	key := cluster + "\x00" + tenant
	if tm, ok := m.tenants.Load(key); ok {
		return tm.(*tenantMetrics)
	}
	tm := &tenantMetrics{transactions: m.reg.Counter(metrics.TransactionTotal, "cluster", cluster, "tenant", tenant)}
	for k := range route.NumStmtKinds {
		name := route.StmtKind(k).String()
		tm.stmts[k][0] = m.reg.Counter(metrics.SQLRequestTotal, "cluster", cluster, "tenant", tenant, "sqlType", name, "sqlResult", metrics.ResultSuccess)
		tm.stmts[k][1] = m.reg.Counter(metrics.SQLRequestTotal, "cluster", cluster, "tenant", tenant, "sqlType", name, "sqlResult", metrics.ResultFail)
	}
	for hit := range 2 {
		for res := range 2 {
			tm.entries[hit][res] = m.reg.Counter(metrics.EntryTotal, "cluster", cluster, "tenant", tenant,
				"entryType", "table_entry", "routeHit", strconv.FormatBool(hit == 1), "routeResult", strconv.FormatBool(res == 1))
		}
	}
	actual, _ := m.tenants.LoadOrStore(key, tm)
	return actual.(*tenantMetrics)
}

// countStatement counts one finished statement of the session and its
// latency.
func (s *Session) countStatement(kind route.StmtKind, failed bool, start time.Time) {
	tm := s.tenantMetrics()
	f := 0
	if failed {
		f = 1
	}
	if int(kind) >= len(tm.stmts) {
		kind = route.StmtOther
	}
	tm.stmts[kind][f].Inc()
	s.srv.metrics.latency.Update(time.Since(start).Seconds())
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

// countTransaction counts a finished transaction of the session.
func (s *Session) countTransaction() {
	s.tenantMetrics().transactions.Inc()
}

// tenantMetrics returns the session's statement series: by cluster and
// tenant in OceanBase mode (set at login, where both were checked),
// unlabelled otherwise (mysql routing mode, where login names may carry
// any tenant, and sessions that did not log in).
func (s *Session) tenantMetrics() *tenantMetrics {
	if s.tm == nil {
		s.tm = s.srv.metrics.forTenant("", "")
	}
	return s.tm
}

// partitionHit counts one ob_proxy_partition_hit feedback.
func (m *reactorMetrics) partitionHit(hit bool) {
	if hit {
		m.partitionHits[1].Inc()
	} else {
		m.partitionHits[0].Inc()
	}
}

// countEntry counts the table-entry lookup of a statement routed by table.
func (s *Session) countEntry(found, located bool) {
	h, r := 0, 0
	if found {
		h = 1
	}
	if located {
		r = 1
	}
	s.tenantMetrics().entries[h][r].Inc()
}

// retried counts a statement sent elsewhere after a server ERR.
func (m *reactorMetrics) retried(code uint16) {
	m.reg.Counter(metrics.StatementsRetried, "code", strconv.Itoa(int(code))).Inc()
}
