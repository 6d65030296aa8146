package testproxy

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
	"obgate/internal/assemble"
	"obgate/internal/testkit"
	"obgate/internal/warnlog"
	"obgate/metrics"
	"obgate/reactor"
)

// Version is the version string an in-process obgate reports.
const Version = "9.9.9-testkit"

// Config returns a configuration for mysql routing mode: every session
// goes to server, clients are served with ioMode ("netpoll" or "net"), and
// the name/value pairs in kv are applied in order, as -o options would be.
func Config(server, ioMode string, kv ...string) (*config.Config, error) {
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
		return nil, fmt.Errorf("testproxy: odd number of name/value arguments: %q", pairs)
	}
	cfg := config.Default()
	for i := 0; i < len(pairs); i += 2 {
		var err error
		if cfg, err = cfg.With(pairs[i], pairs[i+1]); err != nil {
			return nil, fmt.Errorf("testproxy: %s=%s: %w", pairs[i], pairs[i+1], err)
		}
	}
	return cfg, nil
}

// OBConfig returns a configuration for OceanBase routing mode in
// front of the cluster whose root servers are rslist, with kv applied as
// in Config.
func OBConfig(rslist, cluster, ioMode string, kv ...string) (*config.Config, error) {
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

// Start starts an obgate with cfg on 127.0.0.1:0. It is shut down
// (with a short grace period) in tb.Cleanup if the test did not do it.
func Start(tb testing.TB, cfg *config.Config) *Proxy {
	tb.Helper()
	return StartIntercepted(tb, cfg, nil)
}

// StartIntercepted is Start with the admin interceptor passed
// through wrap (when not nil), whose result is the interceptor the server
// uses: tests put their own in front of it.
func StartIntercepted(tb testing.TB, cfg *config.Config, wrap func(reactor.Interceptor) reactor.Interceptor) *Proxy {
	tb.Helper()
	// As cmd/obgate: warnings are kept for SHOW WARNLOG too.
	warnings := warnlog.NewRing(warnlog.DefaultSize)
	log := slog.New(warnlog.NewHandler(warnings, testkit.NewLogger(tb).Handler()))
	store := config.NewStore(cfg)
	reg := metrics.New()
	diag := new(diagBuffer)
	diagLog := diag.logger()
	parts, err := assemble.Build(store, log, diagLog, reg)
	if err != nil {
		tb.Fatalf("testproxy: %v", err)
	}
	// Cleanups run last first: the parts close after the shutdown below.
	tb.Cleanup(parts.Close)
	srv, err := reactor.NewServer(reactor.Options{Config: store, Metrics: reg, Logger: log, Diagnosis: diagLog, Version: Version,
		Clusters: parts.Clusters, Health: parts.Health, Router: parts.Router, ServerTLS: parts.ServerTLS})
	if err != nil {
		tb.Fatalf("testproxy: reactor.NewServer: %v", err)
	}
	parts.StartDetect(srv.DetectTargets)
	adm := admin.New(srv, reg, log)
	adm.SetWarnLog(warnings)
	var icpt reactor.Interceptor = adm
	if wrap != nil {
		icpt = wrap(adm)
	}
	srv.SetInterceptor(icpt)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		tb.Fatalf("testproxy: listen: %v", err)
	}
	p := &Proxy{Server: srv, Admin: adm, Metrics: reg, Store: store, Addr: ln.Addr().String(),
		ln: ln, served: make(chan error, 1), diag: diag}
	go func() { p.served <- srv.Serve(ln) }()
	tb.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		if err := p.Shutdown(ctx); err != nil && !errors.Is(err, context.DeadlineExceeded) {
			tb.Errorf("testproxy: obgate shutdown: %v", err)
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
