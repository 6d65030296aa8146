package admin

import (
	"obgate/mysqlproto"
	"obgate/reactor"
)

// answerView answers ODP's diagnostic views (SHOW PROXYSTAT, PROXYINFO,
// PROXYMEMORY, PROXYNET, PROXYCLUSTER, PROXYRESOURCE, WARNLOG) on the
// calling session's goroutine. ok is false for any other command.
func (a *Admin) answerView(c command, reply *reactor.Reply) (ok bool, err error) {
	switch c.kind {
	case cmdShowStat:
		return true, a.send(reply, a.showStat(c))
	case cmdShowInfoBinary, cmdShowInfoUpgrade:
		return true, a.send(reply, a.showInfo(c))
	case cmdShowInfoIDC:
		return true, a.send(reply, a.showInfoIDC(c))
	case cmdShowMemory:
		return true, a.send(reply, a.showMemory(c))
	case cmdShowMemoryObjpool:
		return true, a.send(reply, a.showObjpool(c))
	case cmdShowNetThread:
		return true, a.send(reply, a.showNetThread())
	case cmdShowNetConnection:
		return true, a.send(reply, a.showNetConnection(c))
	case cmdShowCluster:
		return true, a.send(reply, a.showCluster(c))
	case cmdShowClusterIDC:
		return true, a.send(reply, a.showClusterIDC(c))
	case cmdShowResource:
		return true, a.send(reply, a.showResource(c))
	case cmdShowWarnlog:
		rs, se := a.showWarnlog(c)
		if se != nil {
			return true, reply.Error(se)
		}
		return true, a.send(reply, rs)
	}
	return false, nil
}

// killServerSession answers KILL PROXYSESSION cs_id ss_id: it closes
// that server session of that client session (ss_id is the server's
// connection id, SHOW PROXYSESSION ATTRIBUTE's server_sessid, since
// obgate numbers no server sessions of its own), as ODP does; the client
// session goes on with a new server session. Unknown ids get ERR 1094.
func (a *Admin) killServerSession(c command, reply *reactor.Reply) error {
	if c.id > 1<<32-1 || c.ssid > 1<<32-1 {
		return reply.Error(mysqlproto.NewSQLError(mysqlproto.ERNoSuchThread, "Unknown thread id: %d", max(c.id, c.ssid)))
	}
	if err := a.srv.KillServerSession(uint32(c.id), uint32(c.ssid)); err != nil {
		if se, ok := mysqlproto.AsSQLError(err); ok {
			return reply.Error(se)
		}
		return reply.Error(mysqlproto.NewSQLError(mysqlproto.ERUnknownError, "%v", err))
	}
	return reply.OK(0, "")
}
