package reactor_test

import (
	"strings"
	"testing"

	"obgate/internal/testkit"
)

// TestAttackSideConnectionsFollowServerSSL: with enable_server_ssl every
// connection obgate opens to a server is TLS, not only the server
// sessions: the proxyro@sys metadata login (cluster bootstrap, refresh,
// location fetches) and the detect task's login probes
// (server_detect_mode=3) carry the cluster's metadata and a password
// hash's login.
func TestAttackSideConnectionsFollowServerSSL(t *testing.T) {
	c, certFile := startOBSimTLS(t)
	p := startOBProxy(t, c, "netpoll", "enable_server_ssl", "true", "server_ssl_verify", "verify_identity",
		"server_ssl_ca_file", certFile, "server_detect_mode", "3", "server_detect_refresh_interval", "100ms")
	_, conn := obConn(t, p)
	if _, err := conn.ExecContext(withDeadline(t), "SELECT v FROM kv WHERE id = ?", 1); err != nil {
		t.Fatal(err)
	}
	proxyro := func() (tls, plain int) {
		for _, e := range c.Log() {
			if e.Command == "login" && strings.HasPrefix(e.SQL, "proxyro") {
				if e.TLS {
					tls++
				} else {
					plain++
				}
			}
		}
		return tls, plain
	}
	// Probes log in on every node of the cluster now and again.
	testkit.Eventually(t, hangLimit, func() bool { n, _ := proxyro(); return n > len(c.Nodes()) },
		"proxyro@sys logins over TLS from the metadata connection and the probes")
	if tls, plain := proxyro(); plain > 0 {
		t.Errorf("%d proxyro@sys logins over TLS and %d in clear; want none in clear", tls, plain)
	}
}
