package reactor

import (
	"context"
	"errors"
	"log/slog"
	"time"

	"obgate/config"
	"obgate/mysqlproto"
	"obgate/reactor/backend"
	"obgate/route"
)

// countIn and countOut count bytes of the client relayed to servers and
// from them, for the metrics and the session's diagnosis line. Only the
// command's owner calls them.
func (s *Session) countIn(n int) {
	s.srv.metrics.bytesFromClient.Add(n)
	s.activity.bytesIn += int64(n)
}

func (s *Session) countOut(n int) {
	s.srv.metrics.bytesToClient.Add(n)
	s.activity.bytesOut += int64(n)
}

// The diagnosis log: one structured line for every client disconnect,
// failed login, server session lost under a live client, statement sent
// again, and route found wrong, so that an operator can follow one client
// (grep or jq for its cs_id) as ODP's users do with obproxy_diagnosis.log.
// Blocklist changes come from health (Monitor.SetDiagnosis). Lines carry
// ODP's field names (obutils/ob_connection_diagnosis_trace.cpp) and its
// trace types where they fit; connection_diagnosis_option bit 1 turns the
// log on (the default).
//
// Every method may be called from any goroutine; each writes one record
// and does nothing when the log is off. None runs on the statement fast
// path: they follow failures.

// ODP's trace types.
const (
	traceLogin          = "LOGIN_TRACE"
	traceProxyInternal  = "PROXY_INTERNAL_TRACE"
	traceServerInternal = "SERVER_INTERNAL_TRACE"
	traceClientVC       = "CLIENT_VC_TRACE"
	traceServerVC       = "SERVER_VC_TRACE"
	traceTimeout        = "TIMEOUT_TRACE"
)

// Who ended or broke something: the side field.
const (
	sideClient = "client"
	sideServer = "server"
	sideProxy  = "proxy"
)

// endCause is why a session ended, noted by whoever decided it (the owner's
// error, the sweeper, a KILL, the connection limit) before the close.
type endCause struct {
	src    QuitSource
	err    error
	reason string // finer than src where it helps: "wait_timeout", "lru_disconnect", ...
}

// noteEnd records why the session ends; the first cause noted wins, as the
// first is the one that started the close.
func (l *lifecycle) noteEnd(src QuitSource, err error, reason string) {
	l.endWhy.CompareAndSwap(nil, &endCause{src: src, err: err, reason: reason})
}

// closeFor asks the session to close (requestClose) and notes why.
func (s *Session) closeFor(level uint32, src QuitSource, reason string) {
	s.lifecycle.noteEnd(src, nil, reason)
	s.requestClose(level)
}

// diagLog is the diagnosis log (the Server's diag): lines go to log while
// connection_diagnosis_option's bit 1 is set. Any goroutine.
type diagLog struct {
	log *slog.Logger // nil for none
	cfg *config.Store
}

// on reports whether diagnosis lines are written now.
func (d diagLog) on() bool {
	return d.log != nil && d.cfg.Load().ConnectionDiagnosisOption&1 != 0
}

// diagSession returns the fields every line about a session has.
func (s *Session) diagSession() []slog.Attr {
	s.published.mu.Lock()
	user := s.published.user
	s.published.mu.Unlock()
	var addr string
	var id uint32
	if be := s.servers.Shared(); be != nil {
		addr, id = be.Addr, be.ThreadID
	}
	attrs := []slog.Attr{
		slog.Uint64("cs_id", uint64(s.id)),
		slog.String("client_addr", s.client.addr),
		slog.String("user_name", user),
	}
	tenant, cluster, proxySessID, hasID := s.side.diagNames()
	if hasID {
		attrs = append(attrs, slog.Uint64("proxy_session_id", proxySessID))
	}
	attrs = append(attrs, slog.String("tenant_name", tenant), slog.String("cluster_name", cluster))
	if addr != "" {
		attrs = append(attrs, slog.String("server_addr", addr), slog.Uint64("server_session_id", uint64(id)))
	}
	return attrs
}

// diagError appends error_code and error_msg for err.
func diagError(attrs []slog.Attr, err error) []slog.Attr {
	if err == nil {
		return attrs
	}
	var se *mysqlproto.SQLError
	code := 0
	if errors.As(err, &se) {
		code = int(se.Code)
	}
	return append(attrs, slog.Int("error_code", code), slog.String("error_msg", err.Error()))
}

// diagWrite writes one line: msg is the event, the trace type leads.
func (d diagLog) write(event, trace, side string, attrs []slog.Attr) {
	head := make([]slog.Attr, 0, len(attrs)+3)
	head = append(head, slog.String("event", event))
	if trace != "" {
		head = append(head, slog.String("trace_type", trace))
	}
	if side != "" {
		head = append(head, slog.String("side", side))
	}
	d.log.LogAttrs(context.Background(), slog.LevelInfo, event, append(head, attrs...)...)
}

// traceOf maps why a session ended to ODP's trace type, the side that
// caused it, and (for timeouts) ODP's timeout event.
func traceOf(c endCause) (trace, side, timeoutEvent string) {
	switch c.src {
	case QuitClientNetwork:
		return traceClientVC, sideClient, ""
	case QuitClientProto:
		return traceProxyInternal, sideClient, ""
	case QuitServerNetwork:
		return traceServerVC, sideServer, ""
	case QuitServerProto:
		return traceServerInternal, sideServer, ""
	case QuitAuthFailed:
		return traceLogin, sideServer, ""
	case QuitNoServer:
		return traceLogin, sideServer, ""
	case QuitLimit:
		if c.reason == reasonLRU {
			return traceProxyInternal, sideProxy, ""
		}
		return traceLogin, sideProxy, ""
	case QuitTimeout:
		switch c.reason {
		case reasonWaitTimeout, reasonInactivity:
			return traceTimeout, sideClient, "CLIENT_WAIT_TIMEOUT"
		}
		return traceTimeout, sideClient, "CLIENT_CONNECT_TIMEOUT"
	case QuitKilled:
		return traceTimeout, sideClient, "CLIENT_FORCE_KILL"
	}
	return traceProxyInternal, sideProxy, "" // shutdown, panic, memory
}

// Finer reasons of endCause.
const (
	reasonWaitTimeout = "wait_timeout"
	reasonInactivity  = "default_inactivity_timeout"
	reasonLRU         = "lru_disconnect"
	reasonMemory      = "proxy_mem_limited"
)

// diagSessionEnded writes the disconnect line of a session; teardown calls
// it once. A client's own COM_QUIT is not a diagnosis, as in ODP.
func (s *Session) diagSessionEnded() {
	srv := s.srv
	if !srv.diag.on() {
		return
	}
	c := endCause{src: QuitClientNetwork}
	if p := s.lifecycle.endWhy.Load(); p != nil {
		c = *p
	}
	if c.src == QuitClientQuit {
		return
	}
	if !s.lifecycle.loggedIn.Load() && c.src == QuitClientNetwork && s.published.userName() == "" {
		// Closed before it sent a login: a TCP check (an L4 balancer's,
		// a port probe), not a client. ODP skips these too.
		return
	}
	trace, side, tev := traceOf(c)
	event := "disconnect"
	if !s.lifecycle.loggedIn.Load() {
		event = "login_failed"
		if trace != traceTimeout {
			trace = traceLogin
		}
	}
	attrs := s.diagSession()
	reason := c.src.String()
	if c.reason != "" {
		reason = c.reason
	}
	attrs = append(attrs, slog.String("reason", reason))
	if tev != "" {
		attrs = append(attrs, slog.String("timeout_event", tev))
		if t := reasonLimit(c.reason, time.Duration(s.activity.waitTimeout.Load()), s.srv.cfg.Load()); t > 0 {
			attrs = append(attrs, slog.Int64("timeout_us", t.Microseconds()))
		}
	}
	attrs = diagError(attrs, c.err)
	if cmd := s.activity.curCmd.Load(); cmd >= 0 {
		attrs = append(attrs, slog.String("request_cmd", mysqlproto.Command(cmd).String()))
	}
	attrs = append(attrs,
		slog.Uint64("statements", s.activity.stmtCount.Load()),
		slog.Int64("bytes_from_client", s.activity.bytesIn),
		slog.Int64("bytes_to_client", s.activity.bytesOut),
		slog.Int64("connected_us", time.Since(s.client.connectedAt).Microseconds()),
		slog.Int64("idle_us", time.Since(time.Unix(0, s.activity.lastActive.Load())).Microseconds()),
	)
	srv.diag.write(event, trace, side, attrs)
}

// reasonLimit is the limit a timeout reason enforced, for a session
// whose wait_timeout is waitTimeout.
func reasonLimit(reason string, waitTimeout time.Duration, cfg *config.Config) time.Duration {
	switch reason {
	case reasonWaitTimeout:
		return waitTimeout
	case reasonInactivity:
		return cfg.DefaultInactivityTimeout
	case "":
		return cfg.ClientHandshakeTimeout
	}
	return 0
}

// diagServerLost writes a line for a server session that broke under a
// client that goes on (flash-break): the client's next statement gets a
// new one.
func (s *Session) diagServerLost(be *backend.Conn, why error) {
	if !s.srv.diag.on() {
		return
	}
	attrs := s.diagSession()
	attrs = append(attrs, slog.String("lost_server_addr", be.Addr), slog.Uint64("ss_id", uint64(be.ThreadID)),
		slog.Bool("in_transaction", s.activity.inTrans.Load()))
	attrs = diagError(attrs, why)
	s.srv.diag.write("server_session_lost", traceServerVC, sideServer, attrs)
}

// diagRetry writes a line for a statement sent again after failing on
// server from, now on server to: code is the server's ERR (0 for a broken
// connection).
func (st *statement) diagRetry(from, to string, code uint16, fail string) {
	s := st.s
	if !s.srv.diag.on() {
		return
	}
	trace := traceServerVC
	if code != 0 {
		trace = traceServerInternal
	}
	attrs := s.diagSession()
	attrs = append(attrs, slog.String("failed_server_addr", from), slog.String("retry_server_addr", to), slog.String("failure", fail),
		slog.Int("error_code", int(code)), slog.Int("resend", st.resends),
		slog.String("request_cmd", mysqlproto.Command(s.activity.curCmd.Load()).String()))
	s.srv.diag.write("retry", trace, sideServer, attrs)
}

// diagRouteMiss writes a line when a server's answer shows that the
// location a statement was routed by is wrong: the entry goes dirty and is
// fetched again. It is written once per entry going dirty.
func (s *Session) diagRouteMiss(e *route.TableEntry, how string, code uint16) {
	if !s.srv.diag.on() {
		return
	}
	attrs := s.diagSession()
	attrs = append(attrs, slog.String("table", e.Database+"."+e.Table), slog.String("how", how))
	if code != 0 {
		attrs = append(attrs, slog.Int("error_code", int(code)))
	}
	s.srv.diag.write("route_miss", traceServerInternal, sideServer, attrs)
}

// tellsClient reports whether the client gets an ERR packet for a session
// ending on se before its connection closes. For a server's failure that
// is connection_diagnosis_option bit 2 (ODP synthesises the ERR only then);
// obgate's answers to a client's own mistakes are always sent.
func tellsClient(cfg *config.Config, se *sessionError) bool {
	switch se.source {
	case QuitServerNetwork, QuitServerProto:
		return cfg == nil || cfg.ConnectionDiagnosisOption&2 != 0
	}
	return true
}
