package admin

import (
	"log/slog"
	"os"
	"strings"

	vm "github.com/VictoriaMetrics/metrics"

	"obgate/internal/warnlog"
	"obgate/metrics"
	"obgate/mysqlproto"
	"obgate/reactor"
	"obgate/route"
)

// Admin answers internal commands for one obgate process.
type Admin struct {
	srv           *reactor.Server
	log           *slog.Logger
	configChanges *vm.Counter
	pid           int
	warnings      *warnlog.Ring // SHOW WARNLOG's records; nil: none kept
	upgrader      Upgrader      // hot_upgrade_cmd; nil: refused
}

// New returns the internal-command handler for srv; install it with
// srv.SetInterceptor before serving.
func New(srv *reactor.Server, reg *metrics.Registry, log *slog.Logger) *Admin {
	if log == nil {
		log = slog.Default()
	}
	return &Admin{srv: srv, log: log, configChanges: reg.Counter(metrics.ConfigChanges), pid: os.Getpid()}
}

// Intercept implements reactor.Interceptor.
func (a *Admin) Intercept(sess *reactor.Session, query []byte, _ route.StmtInfo, reply *reactor.Reply) bool {
	c := parseCommand(string(query))
	if stmt, ok := explainRoute(query); ok {
		c = command{kind: cmdExplainRoute, value: string(stmt)}
	}
	if c.kind == cmdUnknown {
		if sess.IsAdmin() {
			_ = reply.Error(mysqlproto.NewSQLError(mysqlproto.ERParseError,
				"obgate: not an internal command: %s", truncate(string(query), 80)))
			return true
		}
		return false
	}
	if c.kind == cmdShowProcesslist {
		return a.showProcesslist(sess, reply)
	}
	if !sess.IsAdmin() && !sess.IsRootSys() && !everyUser(c.kind) {
		return false // let the server answer, as ODP does for normal users
	}
	var err error
	switch c.kind {
	case cmdPing:
		err = reply.OK(0, "")
	case cmdProxyVersion:
		err = reply.ResultSet(oneValue("proxy_version()", a.srv.Version()))
	case cmdProxyStatus:
		status := "ACTIVE"
		if a.srv.Draining() {
			status = "INACTIVE"
		}
		err = reply.ResultSet(oneValue("proxy_status", status))
	case cmdShowConfig:
		err = a.send(reply, a.showConfig(c))
	case cmdAlterConfig:
		if se := a.mayChangeConfig(sess); se != nil {
			err = reply.Error(se)
		} else {
			err = a.alterConfig(c, reply)
		}
	case cmdShowSession:
		err = a.send(reply, a.showSessions(sess, c))
	case cmdShowSessionAttribute:
		err = a.showSessionAttribute(sess, c, reply)
	case cmdShowSessionVariables:
		err = a.showSessionVariables(sess, c, reply)
	case cmdShowRoute:
		err = a.send(reply, a.showRoute(c))
	case cmdShowRoutePartition:
		err = a.send(reply, a.showRoutePartition(c))
	case cmdExplainRoute:
		err = a.explainRoute(sess, []byte(c.value), reply)
	case cmdShowCongestion:
		err = a.send(reply, a.showCongestion(c))
	case cmdKillSession:
		err = a.killSession(sess, c, reply)
	case cmdSelectVars:
		err = reply.ResultSet(a.selectVars(c))
	case cmdNeedOK:
		err = reply.OK(0, "")
	default:
		var ok bool
		if ok, err = a.answerView(c, reply); !ok {
			err = reply.Error(mysqlproto.NewSQLError(mysqlproto.ERNotSupportedYet,
				"obgate does not support this internal command yet: %s", truncate(string(query), 80)))
		}
	}
	if err != nil {
		a.log.Debug("internal command reply failed", "session", sess.ID(), "err", err)
	}
	return true
}

// everyUser reports whether normal users may run the command.
func everyUser(k cmdKind) bool {
	switch k {
	case cmdShowSession, cmdShowSessionAttribute, cmdShowSessionVariables, cmdPing, cmdProxyVersion, cmdProxyStatus,
		cmdExplainRoute:
		return true
	}
	return false
}

// killSession answers KILL PROXYSESSION cs_id [ss_id], for a session the
// caller may act on (mayActOn); others are unknown to it.
func (a *Admin) killSession(sess *reactor.Session, c command, reply *reactor.Reply) error {
	if c.id > 1<<32-1 {
		return reply.Error(unknownThread(c.id))
	}
	if t, ok := a.srv.Session(uint32(c.id)); !ok || !mayActOn(sess, t) {
		return reply.Error(unknownThread(c.id))
	}
	if c.hasSSID {
		return a.killServerSession(c, reply)
	}
	if err := a.srv.KillSession(uint32(c.id)); err != nil {
		if se, ok := mysqlproto.AsSQLError(err); ok {
			return reply.Error(se)
		}
		return reply.Error(mysqlproto.NewSQLError(mysqlproto.ERUnknownError, "%v", err))
	}
	return reply.OK(0, "")
}

// selectVars answers SELECT @@var, ... in an administrator session, which
// clients send right after logging in (the mysql CLI asks for
// @@version_comment).
func (a *Admin) selectVars(c command) *mysqlproto.ResultSet {
	rs := &mysqlproto.ResultSet{}
	row := make([]any, 0, len(c.vars))
	cfg := a.srv.Config().Load()
	for _, v := range c.vars {
		rs.Columns = append(rs.Columns, mysqlproto.VarcharColumn(v))
		name := strings.ToLower(strings.TrimLeft(v, "@"))
		name = strings.TrimPrefix(name, "session.")
		name = strings.TrimPrefix(name, "global.")
		switch name {
		case "version_comment":
			row = append(row, "obgate "+a.srv.Version())
		case "version":
			row = append(row, a.srv.GreetingVersion(cfg))
		case "autocommit":
			row = append(row, int64(1))
		case "max_allowed_packet":
			row = append(row, cfg.MaxPacketSize)
		case "session_id", "connection_id":
			row = append(row, nil)
		default:
			row = append(row, nil)
		}
	}
	rs.Rows = [][]any{row}
	return rs
}

func oneValue(column string, value any) *mysqlproto.ResultSet {
	return &mysqlproto.ResultSet{
		Columns: []mysqlproto.Column{mysqlproto.VarcharColumn(column)},
		Rows:    [][]any{{value}},
	}
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "..."
}
