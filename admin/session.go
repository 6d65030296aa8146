package admin

import (
	"strconv"

	"obgate/mysqlproto"
	"obgate/reactor"
)

// odpState maps a session state to ODP's client-session state names.
func odpState(s reactor.SessionState) string {
	switch s {
	case reactor.StateHandshake:
		return "MCS_INIT"
	case reactor.StateCommand:
		return "MCS_ACTIVE_READER"
	case reactor.StateIdle:
		return "MCS_KEEP_ALIVE"
	case reactor.StateClosing:
		return "MCS_HALF_CLOSED"
	}
	return "MCS_CLOSED"
}

// showSessions answers SHOW PROXYSESSION with ODP's columns. Normal users
// see only sessions of their own login name.
//
// tid is, in ODP, the net thread serving the session. obgate has no such
// threads: netpoll's pollers share connections without saying which holds
// which, and a goroutine's OS thread changes from one statement to the
// next. tid is the session's client socket descriptor instead (SHOW
// PROXYNET CONNECTION's socket_fd, lsof's FD): real, and fixed from the
// login to the close; -1 once the socket is gone.
func (a *Admin) showSessions(sess *reactor.Session, c command) *mysqlproto.ResultSet {
	rs := &mysqlproto.ResultSet{Columns: []mysqlproto.Column{
		mysqlproto.BigintColumn("proxy_sessid"), mysqlproto.BigintColumn("Id"),
		mysqlproto.VarcharColumn("Cluster"), mysqlproto.VarcharColumn("Tenant"),
		mysqlproto.VarcharColumn("User"), mysqlproto.VarcharColumn("Host"),
		mysqlproto.VarcharColumn("db"), mysqlproto.BigintColumn("trans_count"),
		mysqlproto.BigintColumn("svr_session_count"), mysqlproto.VarcharColumn("state"),
		mysqlproto.BigintColumn("tid"), mysqlproto.BigintColumn("pid"),
		mysqlproto.VarcharColumn("using_ssl"),
	}}
	me := sess.Info()
	for _, s := range a.srv.Sessions() {
		if !sess.IsAdmin() && s.User != me.User {
			continue
		}
		if c.hasLike && !matchLike(c.like, s.User) {
			continue
		}
		svr, tid := int64(0), int64(-1)
		if s.ServerAddr != "" {
			svr = 1
		}
		if t, ok := a.srv.Session(s.ID); ok {
			if ss := t.ServerSessions(); ss != nil {
				svr = int64(len(ss))
			}
			tid = int64(t.SocketFD())
		}
		rs.Rows = append(rs.Rows, []any{
			uint64(s.ID), uint64(s.ID), s.Identity.Cluster, s.Identity.Tenant, s.Identity.User,
			s.ClientAddr, nullIfEmpty(s.DB), s.TransCount, svr, odpState(s.State),
			tid, int64(a.pid), boolWord(s.TLS),
		})
	}
	return rs
}

// showSessionAttribute answers SHOW PROXYSESSION ATTRIBUTE [id] with
// name/value/info rows about one session (the caller's by default).
func (a *Admin) showSessionAttribute(sess *reactor.Session, c command, reply *reactor.Reply) error {
	target, err := a.targetSession(sess, c)
	if err != nil {
		return reply.Error(err)
	}
	s := target.Info()
	rs := &mysqlproto.ResultSet{Columns: []mysqlproto.Column{
		mysqlproto.VarcharColumn("attribute_name"), mysqlproto.VarcharColumn("value"), mysqlproto.VarcharColumn("info"),
	}}
	add := func(name, value, info string) {
		if c.hasLike && !matchLike(c.like, name) {
			return
		}
		rs.Rows = append(rs.Rows, []any{name, value, info})
	}
	add("proxy_sessid", strconv.FormatUint(uint64(s.ID), 10), "proxy session id")
	add("cs_id", strconv.FormatUint(uint64(s.ID), 10), "client session id")
	add("cluster", s.Identity.Cluster, "cluster name")
	add("tenant", s.Identity.Tenant, "tenant name")
	add("user", s.Identity.User, "user name")
	add("host_ip", hostPart(s.ClientAddr), "client ip")
	add("host_port", portPart(s.ClientAddr), "client port")
	add("db", s.DB, "current database")
	add("total_trans_cnt", strconv.FormatUint(s.TransCount, 10), "transactions")
	add("total_stmt_cnt", strconv.FormatUint(s.StmtCount, 10), "commands")
	add("active", boolWord(s.State == reactor.StateCommand), "running a command")
	add("in_trans", boolWord(s.InTrans), "inside a transaction")
	add("tid", strconv.Itoa(target.SocketFD()), "client socket descriptor")
	add("pid", strconv.Itoa(a.pid), "process id")
	add("transport", s.Transport, "client I/O")
	add("server_ip", hostPart(s.ServerAddr), "server session address")
	add("server_port", portPart(s.ServerAddr), "server session port")
	add("server_sessid", strconv.FormatUint(uint64(s.ServerID), 10), "server's connection id")
	for i, ss := range target.ServerSessions() {
		p := "server_session[" + strconv.Itoa(i) + "]."
		add(p+"addr", ss.Addr, "server address")
		add(p+"server_sessid", strconv.FormatUint(uint64(ss.ID), 10), "server's connection id")
		add(p+"protocol", ss.Protocol, "wire protocol")
		add(p+"using_ssl", boolWord(ss.TLS), "runs TLS (enable_server_ssl)")
		add(p+"current", boolWord(ss.Current), "used by the last statement")
		add(p+"in_trans", boolWord(ss.InTrans), "inside a transaction")
	}
	return a.send(reply, rs)
}

// showSessionVariables answers SHOW PROXYSESSION VARIABLES [ALL] [id]
// [LIKE] with ODP's columns and words: system variables ("changed sys
// var", or "sys var" with ALL), then user variables ("user var", no
// scope); modified_type says how obgate replays the variable on server
// sessions ("hot modified vars": compared by value, ODP's hot variables;
// "cold modified vars": by version). Without ALL ODP lists the system
// variables the client changed; with ALL every system variable the
// session holds, which in ODP is the server's whole set. obgate reads no
// server's set: it holds only what the client changed (and the current
// database, shown as the row "database"), so ALL lists the same variables,
// labelled as ODP labels ALL's rows.
func (a *Admin) showSessionVariables(sess *reactor.Session, c command, reply *reactor.Reply) error {
	target, err := a.targetSession(sess, c)
	if err != nil {
		return reply.Error(err)
	}
	rs := &mysqlproto.ResultSet{Columns: []mysqlproto.Column{
		mysqlproto.VarcharColumn("variable_name"), mysqlproto.VarcharColumn("value"),
		mysqlproto.VarcharColumn("info"), mysqlproto.VarcharColumn("modified_type"),
		mysqlproto.VarcharColumn("sys_variable_flag"),
	}}
	sysInfo := "changed sys var"
	if c.all {
		sysInfo = "sys var"
	}
	vars := target.Variables()
	for _, user := range []bool{false, true} {
		for _, v := range vars {
			if (v.Kind == "user") != user || (c.hasLike && !matchLike(c.like, v.Name)) {
				continue
			}
			info, mod, flag := sysInfo, "cold modified vars", "SESSION"
			switch {
			case user:
				info, flag = "user var", ""
			case v.Kind == "database":
				flag = ""
			case hotVariable(v.Name):
				mod = "hot modified vars"
			}
			rs.Rows = append(rs.Rows, []any{v.Name, v.Value, info, mod, flag})
		}
	}
	return a.send(reply, rs)
}

// hotVariable reports whether obgate replays name by value (reactor's hot
// variables, ODP's "hot modified vars").
func hotVariable(name string) bool {
	switch name {
	case "autocommit", "ob_query_timeout", "ob_log_level", "ob_last_schema_version":
		return true
	}
	return false
}

// targetSession is the session a SHOW PROXYSESSION ... [id] command is
// about: the caller's by default; another only for administrators or when
// it has the caller's login name.
func (a *Admin) targetSession(sess *reactor.Session, c command) (*reactor.Session, *mysqlproto.SQLError) {
	if !c.hasID {
		return sess, nil
	}
	t, ok := a.srv.Session(uint32(c.id))
	if !ok || (!sess.IsAdmin() && t.Info().User != sess.Info().User) {
		return nil, unknownThread(c.id)
	}
	return t, nil
}

func nullIfEmpty(s string) any {
	if s == "" {
		return nil
	}
	return s
}
