package testkit

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	"obgate/admin"
	"obgate/config"
	"obgate/internal/tlsconf"
	"obgate/internal/warnlog"
	"obgate/metrics"
	"obgate/reactor"
	"obgate/route"
)

// ProxyVersion is the version string an in-process obgate reports.
const ProxyVersion = "9.9.9-testkit"

// ProxyConfig returns a configuration for mysql routing mode: every session
// goes to server, clients are served with ioMode ("netpoll" or "net"), and
// the name/value pairs in kv are applied in order, as -o options would be.
func ProxyConfig(server, ioMode string, kv ...string) (*config.Config, error) {
	return configWith(append([]string{
		"server_routing_mode", "mysql",
		"rootservice_list", server,
		"client_io_mode", ioMode,
	}, kv...))
}

// configWith applies name/value pairs to the default configuration in
// order, as -o options would be.
func configWith(pairs []string) (*config.Config, error) {
	if len(pairs)%2 != 0 {
		return nil, fmt.Errorf("testkit: odd number of name/value arguments: %q", pairs)
	}
	cfg := config.Default()
	for i := 0; i < len(pairs); i += 2 {
		var err error
		if cfg, err = cfg.With(pairs[i], pairs[i+1]); err != nil {
			return nil, fmt.Errorf("testkit: %s=%s: %w", pairs[i], pairs[i+1], err)
		}
	}
	return cfg, nil
}

// OBProxyConfig returns a configuration for OceanBase routing mode in
// front of the cluster whose root servers are rslist, with kv applied as
// in ProxyConfig.
func OBProxyConfig(rslist, cluster, ioMode string, kv ...string) (*config.Config, error) {
	return configWith(append([]string{
		"server_routing_mode", "oceanbase",
		"rootservice_list", rslist,
		"rootservice_cluster_name", cluster,
		"client_io_mode", ioMode,
	}, kv...))
}

// Proxy is an obgate running inside the test process, wired as cmd/obgate
// wires it: a reactor.Server with the admin interceptor, serving on a
// loopback port.
type Proxy struct {
	Server  *reactor.Server
	Admin   *admin.Admin
	Metrics *metrics.Registry
	Store   *config.Store
	// Addr is the listening address, "127.0.0.1:port".
	Addr string

	ln      net.Listener
	diag    *diagBuffer // the diagnosis log (DiagLines)
	served  chan error  // Serve's result
	once    sync.Once
	stopErr error
}

// StartProxy starts an obgate with cfg on 127.0.0.1:0. It is shut down
// (with a short grace period) in tb.Cleanup if the test did not do it.
func StartProxy(tb testing.TB, cfg *config.Config) *Proxy {
	tb.Helper()
	return StartProxyIntercepted(tb, cfg, nil)
}

// StartProxyIntercepted is StartProxy with the admin interceptor passed
// through wrap (when not nil), whose result is the interceptor the server
// uses: tests put their own in front of it.
func StartProxyIntercepted(tb testing.TB, cfg *config.Config, wrap func(reactor.Interceptor) reactor.Interceptor) *Proxy {
	tb.Helper()
	// As cmd/obgate: warnings are kept for SHOW WARNLOG too.
	warnings := warnlog.NewRing(warnlog.DefaultSize)
	log := slog.New(warnlog.NewHandler(warnings, NewLogger(tb).Handler()))
	store := config.NewStore(cfg)
	reg := metrics.New()
	serverTLS := tlsconf.NewServer(log)
	var clusters *route.Clusters
	if cfg.ServerRoutingMode != "mysql" {
		cs, err := route.NewClusters(store, log)
		if err != nil {
			tb.Fatalf("testkit: route.NewClusters: %v", err)
		}
		cs.SetServerTLS(serverTLS.For)
		clusters = cs
		tb.Cleanup(cs.Close)
	}
	diag := new(diagBuffer)
	srv, err := reactor.NewServer(reactor.Options{Config: store, Metrics: reg, Logger: log, Diagnosis: diag.logger(), Version: ProxyVersion, Clusters: clusters, ServerTLS: serverTLS})
	if err != nil {
		tb.Fatalf("testkit: reactor.NewServer: %v", err)
	}
	adm := admin.New(srv, reg, log)
	adm.SetWarnLog(warnings)
	var icpt reactor.Interceptor = adm
	if wrap != nil {
		icpt = wrap(adm)
	}
	srv.SetInterceptor(icpt)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		tb.Fatalf("testkit: listen: %v", err)
	}
	p := &Proxy{Server: srv, Admin: adm, Metrics: reg, Store: store, Addr: ln.Addr().String(),
		ln: ln, served: make(chan error, 1), diag: diag}
	go func() { p.served <- srv.Serve(ln) }()
	tb.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		if err := p.Shutdown(ctx); err != nil && !errors.Is(err, context.DeadlineExceeded) {
			tb.Errorf("testkit: obgate shutdown: %v", err)
		}
	})
	return p
}

// Shutdown stops the proxy with reactor.Server.Shutdown and waits for
// Serve to return. It returns Shutdown's error, or Serve's when Shutdown
// succeeded and Serve failed. Later calls return the first result.
func (p *Proxy) Shutdown(ctx context.Context) error {
	p.once.Do(func() {
		err := p.Server.Shutdown(ctx)
		// Serve may not have registered the listener yet when Shutdown ran;
		// closing it here makes Serve return either way.
		_ = p.ln.Close()
		// Serve returns ErrServerClosed when Shutdown came first: a test
		// that ended before Serve started is no failure.
		serr := <-p.served
		if err == nil && serr != nil && !errors.Is(serr, reactor.ErrServerClosed) {
			err = fmt.Errorf("Serve: %w", serr)
		}
		p.stopErr = err
	})
	return p.stopErr
}

// Close shuts the proxy down at once: running statements are cut off.
func (p *Proxy) Close() error {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	err := p.Shutdown(ctx)
	if errors.Is(err, context.Canceled) {
		err = nil
	}
	return err
}

// MetricsText returns the registry in Prometheus text format.
func (p *Proxy) MetricsText() string {
	var sb strings.Builder
	p.Metrics.WritePrometheus(&sb)
	return sb.String()
}
