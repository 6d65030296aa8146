// Package tlsconf builds obgate's TLS configurations from its parameters
// and the PEM files they name, reloading the files when they change on
// disk (Reloading). Server is the configuration of every connection
// obgate opens to a server, the server sessions and the side connections
// alike (the proxyro@sys metadata login, the detect task's login probes,
// the mysql.user hash reader), so that enable_server_ssl means the same
// for all of them.
//
// It imports nothing of obgate's but config and internal/safefile.
package tlsconf
