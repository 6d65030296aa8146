package main

import (
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"os"

	"obgate/config"
	"obgate/route"
)

// checkConfig runs --check-config: it checks the config file and the
// command line as config.Check does, then what serve would refuse at
// startup, and prints "ok" on stdout and returns 0, or prints each problem
// (file:line: message, or the flag and the message) on stderr and returns 1.
// It neither listens nor writes the config file.
func checkConfig(opts *config.Options, stdout, stderr io.Writer) int {
	cfg, problems := config.Check(opts)
	problems = append(problems, startupProblems(cfg)...)
	for _, p := range problems {
		fmt.Fprintln(stderr, p)
	}
	if n := len(problems); n > 0 {
		fmt.Fprintf(stderr, "obgate: %d problem(s) in the configuration\n", n)
		return 1
	}
	if _, err := os.Stat(opts.Path()); errors.Is(err, os.ErrNotExist) {
		fmt.Fprintf(stderr, "obgate: %s does not exist; checked the defaults and the command line\n", opts.Path())
	}
	fmt.Fprintln(stdout, "ok")
	return 0
}

// startupProblems lists what serve and reactor.NewServer would refuse in a
// configuration whose values are each valid: a routing mode obgate does
// not serve, no servers to route to, a bad cluster list, a TLS key pair
// that does not load.
func startupProblems(cfg *config.Config) []error {
	var out []error
	switch cfg.ServerRoutingMode {
	case "oceanbase":
		extra, err := route.ParseClusterList(cfg.ClusterRootserviceList)
		if err != nil {
			out = append(out, err)
		} else if len(cfg.RootserviceAddrs()) == 0 && len(extra) == 0 {
			out = append(out, errors.New("server_routing_mode=oceanbase needs rootservice_list (-r) and rootservice_cluster_name (-c), or cluster_rootservice_list"))
		} else if _, dup := extra[cfg.RootserviceClusterName]; dup && len(cfg.RootserviceAddrs()) > 0 {
			out = append(out, fmt.Errorf("cluster %q is given both by rootservice_cluster_name and in cluster_rootservice_list", cfg.RootserviceClusterName))
		}
	case "mysql":
		if len(cfg.RootserviceAddrs()) == 0 && len(cfg.TestServerAddrs()) == 0 {
			out = append(out, errors.New("server_routing_mode=mysql needs rootservice_list (-r) or test_server_addr"))
		}
	default:
		out = append(out, fmt.Errorf("server_routing_mode=%s is not supported; use oceanbase or mysql", cfg.ServerRoutingMode))
	}
	if cfg.EnableClientSSL {
		if _, err := tls.LoadX509KeyPair(cfg.ClientSSLCertFile, cfg.ClientSSLKeyFile); err != nil {
			out = append(out, fmt.Errorf("enable_client_ssl: loading client_ssl_cert_file and client_ssl_key_file: %w", err))
		}
	}
	return out
}
