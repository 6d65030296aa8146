package reactor

// The TLS configurations obgate uses: towards clients (enable_client_ssl,
// client_ssl_cert_file, client_ssl_key_file) and towards servers
// (enable_server_ssl and the server_ssl_* parameters). Both follow the
// configuration and the files on disk as they are now (internal/tlsconf).

import (
	"crypto/tls"

	"obgate/config"
	"obgate/internal/tlsconf"
)

// tlsState holds the Server's reloading TLS material: its own towards
// clients, and the configuration towards servers, which it shares with
// the side connections (internal/tlsconf).
type tlsState struct {
	client tlsconf.Reloading[*tls.Config]
	server *tlsconf.Server
}

func (t *tlsState) init(server *tlsconf.Server) {
	t.client = tlsconf.Reloading[*tls.Config]{What: "client_ssl_cert_file and client_ssl_key_file", Build: buildClientTLS}
	t.server = server
}

// buildClientTLS makes the configuration TLS clients are served with from
// the certificate chain and key (PEM).
func buildClientTLS(pem [][]byte) (*tls.Config, error) {
	cert, err := tls.X509KeyPair(pem[0], pem[1])
	if err != nil {
		return nil, err
	}
	return &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12}, nil
}

// clientTLS returns the configuration to serve TLS clients with now, or
// nil when enable_client_ssl is off or its files never loaded (the
// greeting then offers no TLS). Goroutines of the login call it.
func (srv *Server) clientTLS(cfg *config.Config) *tls.Config {
	if !cfg.EnableClientSSL {
		return nil
	}
	c, err := srv.tls.client.Get(srv.log, cfg.ClientSSLCertFile, cfg.ClientSSLKeyFile)
	if err != nil {
		return nil // logged once by get
	}
	return c
}
