package admin

import (
	"obgate/internal/topology"
	"obgate/mysqlproto"
	"obgate/reactor"
	"obgate/route"
)

// showProcesslist answers SHOW PROCESSLIST in OceanBase mode as ODP does
// with client_session_id_version 1: obgate lists its own client sessions,
// with the ids clients see in their handshake and can KILL. A user of the
// sys tenant sees every session of the cluster; any other user sees the
// sessions of the same tenant and login user (obgate does not know the
// PROCESS privilege, which would widen that on the server). With
// client_session_id_version 2, in mysql routing mode and for SHOW FULL
// PROCESSLIST the statement goes to the server, which then knows obgate's
// ids. It reports false when the statement is not answered here.
func (a *Admin) showProcesslist(sess *reactor.Session, reply *reactor.Reply) bool {
	cfg := a.srv.Config().Load()
	if sess.IsAdmin() || cfg.ServerRoutingMode == "mysql" || cfg.ClientSessionIDVersion != 1 {
		if sess.IsAdmin() {
			_ = a.send(reply, a.processlist(sess, true))
			return true
		}
		return false
	}
	_ = a.send(reply, a.processlist(sess, false))
	return true
}

func (a *Admin) processlist(sess *reactor.Session, all bool) *mysqlproto.ResultSet {
	rs := &mysqlproto.ResultSet{Columns: []mysqlproto.Column{
		mysqlproto.BigintColumn("Id"), mysqlproto.VarcharColumn("Tenant"),
		mysqlproto.VarcharColumn("User"), mysqlproto.VarcharColumn("Host"),
		mysqlproto.VarcharColumn("db"), mysqlproto.BigintColumn("trans_count"),
		mysqlproto.BigintColumn("svr_session_count"), mysqlproto.VarcharColumn("state"),
		mysqlproto.BigintColumn("tid"), mysqlproto.BigintColumn("pid"),
	}}
	me := sess.Identity()
	for _, s := range a.srv.Sessions() {
		if s.Admin || (!all && !mayListSession(me, s.Identity)) {
			continue
		}
		svr, tid := int64(0), int64(-1)
		if t, ok := a.srv.Session(s.ID); ok {
			svr = int64(len(t.ServerSessions()))
			tid = int64(t.SocketFD()) // as SHOW PROXYSESSION's tid
		}
		rs.Rows = append(rs.Rows, []any{
			uint64(s.ID), s.Identity.Tenant, s.Identity.User, s.ClientAddr, nullIfEmpty(s.DB),
			s.TransCount, svr, odpState(s.State), tid, int64(a.pid),
		})
	}
	return rs
}

// mayListSession applies ODP's visibility rule for SHOW PROCESSLIST.
func mayListSession(me, other route.Identity) bool {
	if me.Cluster != other.Cluster {
		return false
	}
	if me.Tenant == topology.TenantSys {
		return true
	}
	return me.Tenant == other.Tenant && me.User == other.User
}
