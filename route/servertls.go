package route

import (
	"crypto/tls"
	"sync/atomic"

	"obgate/config"
	"obgate/internal/tlsconf"
)

// The metadata connections (proxyro@sys) follow enable_server_ssl as
// server sessions do: the same TLS configuration, the same "try best"
// unless server_ssl_verify requires TLS.

// tlsHook is the TLS configuration of the metadata connections
// (SetServerTLS).
type tlsHook = atomic.Pointer[tlsconf.ServerFunc]

// SetServerTLS makes the clusters' proxyro@sys connections follow
// enable_server_ssl as server sessions do, with f (the same function
// reactor dials servers with). nil, the default, connects in clear. Any
// goroutine, at any time; it applies to the next connection.
func (cs *Clusters) SetServerTLS(f tlsconf.ServerFunc) {
	if f == nil {
		cs.tls.Store(nil)
		return
	}
	cs.tls.Store(&f)
}

// serverTLS returns the TLS configuration of a metadata connection to
// addr, and whether it may go on in clear when the server offers none.
func (c *Cluster) serverTLS(cfg *config.Config, addr string) (*tls.Config, bool, error) {
	if c.tls == nil {
		return nil, false, nil
	}
	f := c.tls.Load()
	if f == nil {
		return nil, false, nil
	}
	tc, required, err := (*f)(cfg, addr)
	return tc, !required, err
}
