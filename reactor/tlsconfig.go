package reactor

// The TLS configurations obgate uses: towards clients (enable_client_ssl,
// client_ssl_cert_file, client_ssl_key_file) and towards servers
// (enable_server_ssl and the server_ssl_* parameters). Both follow the
// configuration and the files on disk as they are now; see tlsfiles.go.

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"net"

	"obgate/config"
)

// tlsState holds the Server's reloading TLS material.
type tlsState struct {
	client reloadingFiles[*tls.Config]
	server reloadingFiles[*tls.Config]
	// sessions resumes TLS sessions to servers across connections and
	// across reloads of the files: a new server session then skips the
	// full handshake.
	sessions tls.ClientSessionCache
}

func (t *tlsState) init() {
	t.client = reloadingFiles[*tls.Config]{what: "client_ssl_cert_file and client_ssl_key_file", build: buildClientTLS}
	t.sessions = tls.NewLRUClientSessionCache(1024)
	t.server = reloadingFiles[*tls.Config]{what: "server_ssl_ca_file, server_ssl_cert_file and server_ssl_key_file", build: t.buildServerTLS}
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
	c, err := srv.tls.client.get(srv.log, cfg.ClientSSLCertFile, cfg.ClientSSLKeyFile)
	if err != nil {
		return nil // logged once by get
	}
	return c
}

// buildServerTLS makes the base configuration for connections to servers
// from the CA bundle, client certificate and key (each nil when not set).
func (t *tlsState) buildServerTLS(pem [][]byte) (*tls.Config, error) {
	c := &tls.Config{MinVersion: tls.VersionTLS12, ClientSessionCache: t.sessions}
	if pem[0] != nil {
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(pem[0]) {
			return nil, errors.New("server_ssl_ca_file holds no PEM certificate")
		}
		c.RootCAs = pool
	}
	if pem[1] != nil && pem[2] != nil {
		cert, err := tls.X509KeyPair(pem[1], pem[2])
		if err != nil {
			return nil, err
		}
		c.Certificates = []tls.Certificate{cert}
	}
	return c, nil
}

// serverTLSRequired reports whether cfg asks for verified TLS to servers:
// a server that offers none is then refused.
func serverTLSRequired(cfg *config.Config) bool {
	return cfg.EnableServerSSL && cfg.ServerSSLVerify != "none"
}

// serverTLS returns the configuration for a TLS connection to the server
// at addr under cfg, or nil when enable_server_ssl is off.
func (srv *Server) serverTLS(cfg *config.Config, addr string) (*tls.Config, error) {
	if !cfg.EnableServerSSL {
		return nil, nil
	}
	certFile, keyFile := cfg.ServerSSLCertFile, cfg.ServerSSLKeyFile
	if certFile == "" || keyFile == "" {
		certFile, keyFile = "", "" // one without the other presents none
	}
	base, err := srv.tls.server.get(srv.log, cfg.ServerSSLCAFile, certFile, keyFile)
	if err != nil {
		return nil, err
	}
	c := base.Clone()
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		host = addr
	}
	switch cfg.ServerSSLVerify {
	case "verify_identity":
		c.ServerName = host
	case "verify_ca":
		c.InsecureSkipVerify = true
		roots := c.RootCAs
		c.VerifyConnection = func(cs tls.ConnectionState) error { return verifyChain(cs, roots) }
	default:
		c.InsecureSkipVerify = true
	}
	return c, nil
}

// verifyChain checks that the server's certificate chains to roots (the
// system's when nil), whatever names it carries: server_ssl_verify=verify_ca.
func verifyChain(cs tls.ConnectionState, roots *x509.CertPool) error {
	if len(cs.PeerCertificates) == 0 {
		return errors.New("the server presented no certificate")
	}
	opts := x509.VerifyOptions{Roots: roots, Intermediates: x509.NewCertPool()}
	for _, c := range cs.PeerCertificates[1:] {
		opts.Intermediates.AddCert(c)
	}
	if _, err := cs.PeerCertificates[0].Verify(opts); err != nil {
		return fmt.Errorf("server certificate: %w", err)
	}
	return nil
}
