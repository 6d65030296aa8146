// Package admin answers ODP's internal commands on the SQL port: SHOW
// PROXYCONFIG, ALTER PROXYCONFIG SET, SHOW PROXYSESSION, KILL
// PROXYSESSION, PING PROXY, SELECT PROXY_VERSION() and the rest, and every
// statement of an administrator (root@proxysys) session.
//
// Who may run what follows ODP: administrators run everything; every user
// may run SHOW PROXYSESSION (seeing only their own sessions), PING PROXY,
// SELECT PROXY_VERSION() and SELECT PROXY_STATUS(); other internal
// commands from normal users are passed to the server, which rejects them.
//
// admin plugs into reactor through reactor.Interceptor; cmd wires it in.
package admin
