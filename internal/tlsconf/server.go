package tlsconf

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"log/slog"
	"net"

	"obgate/config"
)

// ServerFunc returns the TLS configuration of a connection to the server
// at addr under cfg: nil when enable_server_ssl is off; required says that
// a server offering no TLS must be refused (server_ssl_verify other than
// none) rather than used in clear (ODP's "try best").
type ServerFunc func(cfg *config.Config, addr string) (c *tls.Config, required bool, err error)

// Server is the TLS configuration towards servers (enable_server_ssl,
// server_ssl_verify, server_ssl_ca_file, server_ssl_cert_file,
// server_ssl_key_file). Its methods are safe for concurrent use.
type Server struct {
	log   *slog.Logger
	files Reloading[*tls.Config]
	// sessions resumes TLS sessions to servers across connections and
	// across reloads of the files: a new connection then skips the full
	// handshake.
	sessions tls.ClientSessionCache
}

// NewServer returns the configuration source; log gets a line for each
// file that cannot be loaded.
func NewServer(log *slog.Logger) *Server {
	if log == nil {
		log = slog.Default()
	}
	s := &Server{log: log, sessions: tls.NewLRUClientSessionCache(1024)}
	s.files = Reloading[*tls.Config]{What: "server_ssl_ca_file, server_ssl_cert_file and server_ssl_key_file", Build: s.build}
	return s
}

// Required reports whether cfg asks for verified TLS to servers: a server
// that offers none is then refused.
func Required(cfg *config.Config) bool {
	return cfg.EnableServerSSL && cfg.ServerSSLVerify != "none"
}

// For is a ServerFunc: the configuration for a connection to addr now.
func (s *Server) For(cfg *config.Config, addr string) (*tls.Config, bool, error) {
	if !cfg.EnableServerSSL {
		return nil, false, nil
	}
	certFile, keyFile := cfg.ServerSSLCertFile, cfg.ServerSSLKeyFile
	if certFile == "" || keyFile == "" {
		certFile, keyFile = "", "" // one without the other presents none
	}
	base, err := s.files.Get(s.log, cfg.ServerSSLCAFile, certFile, keyFile)
	if err != nil {
		return nil, false, err
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
	return c, Required(cfg), nil
}

// build makes the base configuration from the CA bundle, client
// certificate and key (each nil when not set).
func (s *Server) build(pem [][]byte) (*tls.Config, error) {
	c := &tls.Config{MinVersion: tls.VersionTLS12, ClientSessionCache: s.sessions}
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
