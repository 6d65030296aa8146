package config

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"

	"obgate/internal/safefile"
)

// Problems lists what obgate would refuse to start with, or could not
// serve with, in a configuration whose values are each valid: a routing
// mode without servers to route to, a cluster named twice, and TLS files
// that an enabled TLS side needs but that do not load. --check-config
// reports them (Check), and ALTER PROXYCONFIG refuses a change that makes
// one of them fail (Store.Set), so that a running obgate is never put
// where a restart would fail. TLS files are read now, with safefile's
// limits; any goroutine may call it.
func (c *Config) Problems() []error {
	var out []error
	for _, p := range c.problems() {
		out = append(out, p.err)
	}
	return out
}

// problem is one failed rule of Problems.
type problem struct {
	rule string // which rule failed; a rule fails at most once
	err  error
}

// tlsPairHint tells an administrator whose ALTER PROXYCONFIG of one half
// of a certificate and key was refused how to switch both.
const tlsPairHint = "; to switch to another certificate and key, rewrite the files in place (obgate reads them again at each use) or turn TLS off while both paths change"

func (c *Config) problems() []problem {
	var out []problem
	add := func(rule string, err error) { out = append(out, problem{rule, err}) }
	switch c.ServerRoutingMode {
	case "oceanbase":
		names := clusterNames(c.ClusterRootserviceList)
		if len(c.RootserviceAddrs()) == 0 && len(names) == 0 {
			add("servers", errors.New("server_routing_mode=oceanbase needs rootservice_list (-r) and rootservice_cluster_name (-c), or cluster_rootservice_list"))
		} else if len(c.RootserviceAddrs()) > 0 && names[c.RootserviceClusterName] {
			add("cluster_twice", fmt.Errorf("cluster %q is given both by rootservice_cluster_name and in cluster_rootservice_list", c.RootserviceClusterName))
		}
	case "mysql":
		if len(c.RootserviceAddrs()) == 0 && len(c.TestServerAddrs()) == 0 {
			add("servers", errors.New("server_routing_mode=mysql needs rootservice_list (-r) or test_server_addr"))
		}
	default:
		add("mode", fmt.Errorf("server_routing_mode=%s is not supported; use oceanbase or mysql", c.ServerRoutingMode))
	}
	if c.EnableClientSSL {
		if _, err := loadKeyPair(c.ClientSSLCertFile, c.ClientSSLKeyFile); err != nil {
			add("client_tls", fmt.Errorf("enable_client_ssl: loading client_ssl_cert_file and client_ssl_key_file: %w", err))
		}
	}
	if c.EnableServerSSL {
		if err := checkServerTLSFiles(c); err != nil {
			add("server_tls", fmt.Errorf("enable_server_ssl: %w", err))
		}
	}
	return out
}

// brokenBy returns the problems of after whose rule holds in before,
// joined; nil if none. A change is judged by what it breaks: a rule that
// failed already (a certificate a renewal tool is halfway through
// rewriting) does not block it, since a restart would have failed on that
// rule anyway.
func brokenBy(before, after *Config) error {
	failed := map[string]bool{}
	for _, p := range before.problems() {
		failed[p.rule] = true
	}
	var fresh []error
	for _, p := range after.problems() {
		if failed[p.rule] {
			continue
		}
		if p.rule == "client_tls" || p.rule == "server_tls" {
			p.err = fmt.Errorf("%w%s", p.err, tlsPairHint)
		}
		fresh = append(fresh, p.err)
	}
	return errors.Join(fresh...)
}

// loadKeyPair is tls.LoadX509KeyPair reading through safefile, so that a
// FIFO or a huge file named as a certificate fails instead of blocking.
func loadKeyPair(certFile, keyFile string) (tls.Certificate, error) {
	cert, err := safefile.ReadFile(certFile, safefile.MaxPEM)
	if err != nil {
		return tls.Certificate{}, err
	}
	key, err := safefile.ReadFile(keyFile, safefile.MaxPEM)
	if err != nil {
		return tls.Certificate{}, err
	}
	return tls.X509KeyPair(cert, key)
}

// checkServerTLSFiles checks what the TLS towards servers reads: the CA
// bundle if one is named, and the client certificate and key if both are
// (one without the other presents none, as the reactor does).
func checkServerTLSFiles(c *Config) error {
	if c.ServerSSLCAFile != "" {
		pem, err := safefile.ReadFile(c.ServerSSLCAFile, safefile.MaxPEM)
		if err != nil {
			return fmt.Errorf("server_ssl_ca_file: %w", err)
		}
		if !x509.NewCertPool().AppendCertsFromPEM(pem) {
			return fmt.Errorf("server_ssl_ca_file %s holds no PEM certificate", c.ServerSSLCAFile)
		}
	}
	if c.ServerSSLCertFile != "" && c.ServerSSLKeyFile != "" {
		if _, err := loadKeyPair(c.ServerSSLCertFile, c.ServerSSLKeyFile); err != nil {
			return fmt.Errorf("loading server_ssl_cert_file and server_ssl_key_file: %w", err)
		}
	}
	return nil
}

// ParseClusterList reads cluster_rootservice_list:
// name=ip:port;ip:port entries separated by '|', each name once, each
// with at least one address, into the addresses of each cluster.
func ParseClusterList(s string) (map[string][]string, error) {
	out := map[string][]string{}
	for entry := range listEntries(s, "|") {
		name, list, ok := cutAssignment(entry)
		if !ok {
			return nil, fmt.Errorf("entry %q: want name=ip:port;ip:port", entry)
		}
		if _, dup := out[name]; dup {
			return nil, fmt.Errorf("cluster %q is listed twice", name)
		}
		addrs := splitList(list)
		if len(addrs) == 0 {
			return nil, fmt.Errorf("cluster %q has no address", name)
		}
		if _, err := checkAddrList(list); err != nil {
			return nil, fmt.Errorf("cluster %q: %w", name, err)
		}
		out[name] = addrs
	}
	return out, nil
}

// checkClusterList validates cluster_rootservice_list (ParseClusterList).
func checkClusterList(s string) (string, error) {
	if _, err := ParseClusterList(s); err != nil {
		return "", err
	}
	return s, nil
}

// clusterNames returns the cluster names of a valid
// cluster_rootservice_list.
func clusterNames(s string) map[string]bool {
	names := map[string]bool{}
	m, _ := ParseClusterList(s)
	for name := range m {
		names[name] = true
	}
	return names
}
