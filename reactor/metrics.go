package reactor

import (
	"errors"
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
	transactions           *vm.Counter
	bytesFromClient        *vm.Counter
	bytesToClient          *vm.Counter
	bytesFromServer        *vm.Counter
	latency                *vm.PrometheusHistogram
	stmts                  [route.NumStmtKinds][2]*vm.Counter // [kind][failed]
	quits                  [len(quitNames)]*vm.Counter
}

func newReactorMetrics(r *metrics.Registry, srv *Server) *reactorMetrics {
	m := &reactorMetrics{
		newClientOK:            r.Counter(metrics.NewClientConnections, "connectionResult", metrics.ResultSuccess),
		newClientFail:          r.Counter(metrics.NewClientConnections, "connectionResult", metrics.ResultFail),
		serverConnectFailures:  r.Counter(metrics.ServerConnectFailures),
		serverChecksumFailures: r.Counter(metrics.ServerFailures, "reason", "checksum"),
		serverBreaks:           r.Counter(metrics.ServerFailures, "reason", "connection"),
		transactions:           r.Counter(metrics.TransactionTotal),
		bytesFromClient:        r.Counter(metrics.RequestByte, "transType", metrics.TransRequest, "sessionType", metrics.SessionClient),
		bytesToClient:          r.Counter(metrics.RequestByte, "transType", metrics.TransResponse, "sessionType", metrics.SessionClient),
		bytesFromServer:        r.Counter(metrics.RequestByte, "transType", metrics.TransResponse, "sessionType", metrics.SessionServer),
		latency:                r.Histogram(metrics.LatencyBuckets, metrics.SQLLatency),
	}
	for k := range route.NumStmtKinds {
		name := route.StmtKind(k).String()
		m.stmts[k][0] = r.Counter(metrics.SQLRequestTotal, "sqlType", name, "sqlResult", metrics.ResultSuccess)
		m.stmts[k][1] = r.Counter(metrics.SQLRequestTotal, "sqlType", name, "sqlResult", metrics.ResultFail)
	}
	for i := range m.quits {
		m.quits[i] = r.Counter("obgate_session_quit_total", "reason", QuitSource(i).String())
	}
	r.GaugeFunc(func() float64 { return float64(srv.clients.Load()) }, metrics.CurrentSession, "sessionType", metrics.SessionClient)
	r.GaugeFunc(func() float64 { return float64(srv.serverSessions.Load()) }, metrics.CurrentSession, "sessionType", metrics.SessionServer)
	return m
}

// statement counts one finished statement and its latency.
func (m *reactorMetrics) statement(kind route.StmtKind, failed bool, start time.Time) {
	f := 0
	if failed {
		f = 1
	}
	if int(kind) >= len(m.stmts) {
		kind = route.StmtOther
	}
	m.stmts[kind][f].Inc()
	m.latency.Update(time.Since(start).Seconds())
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
