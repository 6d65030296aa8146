package admin

import (
	"obgate/mysqlproto"
	"obgate/reactor"
)

// Who may act on what. root@proxysys administers the whole process.
// root@sys of a cluster may run ODP's internal commands too (ODP lets
// it), but an obgate that serves several clusters (cluster_rootservice_list)
// must not let one cluster's administrator act on another's clients:
// root@sys acts only on sessions of its own cluster, never on an
// administrator's, and changes the process-wide configuration (which
// init_sql, for one, applies to every cluster's server sessions) only
// while obgate serves that one cluster.

// mayActOn reports whether sess may act on target (KILL PROXYSESSION, a
// SHOW PROXYSESSION ... id of another session).
func mayActOn(sess, target *reactor.Session) bool {
	if sess.IsAdmin() {
		return true
	}
	if !sess.IsRootSys() || target.IsAdmin() {
		return false
	}
	return target.Identity().Cluster == sess.Identity().Cluster
}

// mayChangeConfig returns why sess may not run ALTER PROXYCONFIG, or nil.
func (a *Admin) mayChangeConfig(sess *reactor.Session) *mysqlproto.SQLError {
	if sess.IsAdmin() {
		return nil
	}
	if a.srv.Config().Load().ClusterRootserviceList != "" {
		return mysqlproto.NewSQLError(mysqlproto.ERSpecificAccessDenied,
			"Access denied; you need root@proxysys for this operation: obgate serves several clusters, and its configuration applies to all of them")
	}
	return nil
}

// unknownThread is the answer for a session that does not exist or that
// the caller may not see: the two are not told apart.
func unknownThread(id uint64) *mysqlproto.SQLError {
	return mysqlproto.NewSQLError(mysqlproto.ERNoSuchThread, "Unknown thread id: %d", id)
}
