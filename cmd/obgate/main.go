// Command obgate is a drop-in replacement for OceanBase Database Proxy
// (ODP, obproxy): applications connect to it with any MySQL driver as if
// it were the database.
//
// Usage follows obproxy: obgate -p 2883 -r 'ip:port;ip:port' -c cluster
// -o name=value,... (see obgate -h). obgate --check-config with the same
// options checks the config file and the options and exits.
package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/signal"
	"slices"
	"syscall"

	"obgate/admin"
	"obgate/config"
	"obgate/internal/assemble"
	"obgate/internal/warnlog"
	"obgate/metrics"
	"obgate/reactor"
)

// version is set at build time with -ldflags "-X main.version=...".
var version = "0.1.0-dev"

func main() {
	os.Exit(run(os.Args[1:]))
}

func run(args []string) int {
	opts, err := config.ParseArgs(args)
	if err != nil {
		if slices.Contains(args, "--check-config") {
			fmt.Fprintf(os.Stderr, "%v\nobgate: bad command line\n", err)
			return 2
		}
		fmt.Fprintf(os.Stderr, "obgate: %v\n\n%s", err, config.Usage())
		return 2
	}
	if opts.CheckConfig {
		return checkConfig(opts, os.Stdout, os.Stderr)
	}
	if opts.Help {
		fmt.Print(config.Usage())
		return 0
	}
	if opts.Version {
		fmt.Printf("obgate %s\n", version)
		return 0
	}
	store, err := config.Load(opts)
	if err != nil {
		fmt.Fprintf(os.Stderr, "obgate: %v\n", err)
		return 1
	}
	// Before anything is opened or started: on success this does not
	// return, and the new image loads the configuration again.
	slackErr := applyTimerSlack(store.Load().TimerSlack)
	level := new(slog.LevelVar)
	level.Set(store.Load().LogLevel())
	// Warnings and errors are also kept in memory for SHOW WARNLOG.
	warnings := warnlog.NewRing(warnlog.DefaultSize)
	log := slog.New(warnlog.NewHandler(warnings, slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: level})))
	reg := metrics.New()
	guard := newLoopGuard(log, reg)
	store.Subscribe(guard.subscriber(func(_, c *config.Config) { level.Set(c.LogLevel()) }))
	gov := newProcsGovernor(log)
	gov.set(store.Load().GoMaxProcs)
	store.Subscribe(guard.subscriber(func(old, c *config.Config) {
		if old == nil || old.GoMaxProcs != c.GoMaxProcs {
			gov.set(c.GoMaxProcs)
		}
	}))
	// Warnings name items and files, never a value: nothing secret is
	// logged (SHOW PROXYCONFIG masks passwords; the file holds them).
	for _, w := range store.Warnings() {
		log.Warn("config file", "warning", w)
	}
	if slackErr != nil {
		log.Warn("timer_slack not applied; obgate runs with the slack it was started with", "err", slackErr)
	}
	up := newUpgrader(log, store, args)
	up.guard = guard
	if err := serve(store, log, warnings, reg, guard, up, gov); err != nil {
		log.Error("obgate stopped", "err", err)
		return 1
	}
	return 0
}

// serve wires the parts together and runs until SIGTERM or SIGINT; gov
// follows the server's load from then on, and guard contains panics in
// the loops serve starts.
func serve(store *config.Store, log *slog.Logger, warnings *warnlog.Ring, reg *metrics.Registry, guard *loopGuard,
	up *upgrader, gov *procsGovernor) error {
	cfg := store.Load()
	checkFDLimit(cfg, log)
	diag, diagPath, closeDiag, err := openDiagnosis(store, log)
	if err != nil {
		// A log directory obgate cannot write must not keep it from
		// serving: the lines go to the main log instead.
		log.Warn("diagnosis log unavailable; its lines go to the main log", "log_dir", cfg.LogDir, "err", err)
		diag, diagPath, closeDiag = log.With("log", "diagnosis"), "", func() {}
	}
	defer closeDiag()
	// The clusters, the health monitor and the router, with one TLS
	// configuration towards servers for server sessions and the side
	// connections (the proxyro@sys metadata login, probes). They are
	// closed after the server, below.
	parts, err := assemble.Build(store, log, diag, reg)
	if err != nil {
		return err
	}
	defer parts.Close()
	clusters := parts.Clusters
	ids, err := inheritedSessionIDs()
	if err != nil {
		return err
	}
	srv, err := reactor.NewServer(reactor.Options{Config: store, Metrics: reg, Logger: log, Diagnosis: diag, Version: version,
		Clusters: clusters, Health: parts.Health, Router: parts.Router, SessionIDs: ids, ServerTLS: parts.ServerTLS})
	if err != nil {
		return err
	}
	parts.StartDetect(srv.DetectTargets)
	stopGov := make(chan struct{})
	defer close(stopGov)
	go gov.run(srv.OffPollerIO, stopGov, guard)
	adm := admin.New(srv, reg, log)
	adm.SetWarnLog(warnings)
	srv.SetInterceptor(adm)

	// A hot upgrade's new process takes over its parent's listeners.
	ln, mln, err := inheritedListeners()
	if err != nil {
		return err
	}
	if ln == nil {
		if ln, err = net.Listen("tcp", cfg.ListenAddr()); err != nil {
			return err
		}
	} else {
		log.Info("hot upgrade: serving on the listeners of the old process", "addr", ln.Addr().String())
	}
	var metricsSrv *http.Server
	if cfg.EnablePrometheus {
		if mln == nil {
			if mln, err = net.Listen("tcp", cfg.PrometheusAddr()); err != nil {
				ln.Close()
				return err
			}
		}
		pprofOn := func() bool { return store.Load().EnablePprof }
		mux := metricsMux(reg, probes{srv: srv, clusters: clusters}, pprofOn)
		handler := containHTTP(mux, reg.Counter(metrics.Panics, "where", "http").Inc, log)
		metricsSrv = newMetricsServer(handler, metricsLimits)
		go func() {
			if err := metricsSrv.Serve(mln); err != nil && !errors.Is(err, http.ErrServerClosed) {
				log.Error("metrics server stopped", "err", err)
			}
		}()
		log.Info("metrics listening", "addr", mln.Addr().String(), "pprof", cfg.EnablePprof)
	}
	if !cfg.EnablePrometheus && mln != nil {
		mln.Close() // handed down by a parent that served metrics
		mln = nil
	}
	log.Info("obgate listening", "addr", ln.Addr().String(), "version", version, "app_name", cfg.AppName,
		"routing_mode", cfg.ServerRoutingMode, "servers", cfg.RootserviceList+cfg.TestServerAddr,
		"client_io_mode", cfg.ClientIOMode, "diagnosis_log", diagPath)

	up.attach(ln, mln, srv.SessionIDs)
	adm.SetUpgrader(up)
	if hc := up.handoverFromParent(); hc != nil {
		// The old process hands its sessions over on it once it commits.
		go func() {
			err := adoptSessions(guard, func() error { return srv.AdoptSessions(hc) })
			hc.Close()
			log.Info("hot upgrade: the old process hands over no more sessions", "end", err)
		}()
	}
	serveErr := make(chan error, 1)
	go func() { serveErr <- srv.Serve(ln) }()
	up.serving()
	sig := make(chan os.Signal, 2)
	signal.Notify(sig, syscall.SIGTERM, syscall.SIGINT)
	usr2 := make(chan os.Signal, 1)
	signal.Notify(usr2, syscall.SIGUSR2)
	defer signal.Stop(usr2)
	stop := waitForStop(stopEvents{serveErr: serveErr, sig: sig, usr2: usr2, exit: up.exit}, guard, func() {
		log.Info("SIGUSR2: hot upgrade to the binary at " + up.exe)
		up.signalUpgrade()
	})
	switch {
	case stop.err != nil:
		return stop.err
	case stop.signal != nil:
		log.Info("stopping: draining sessions", "signal", stop.signal.String(), "timeout", store.Load().HotUpgradeExitTimeout)
	default:
		// Handing over is one call that must not take the process down
		// with it: a panic there leaves the sessions to the drain.
		handed := false
		if hc := up.handoverToChild(); hc != nil {
			handed = guard.do(whereSignals, func() { srv.HandOverSessions(hc) })
		}
		if handed {
			log.Info("stopping: handing sessions over to the new process, draining the rest", "reason", stop.exit,
				"timeout", store.Load().HotUpgradeExitTimeout)
		} else {
			log.Info("stopping: draining sessions", "reason", stop.exit, "timeout", store.Load().HotUpgradeExitTimeout)
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), store.Load().HotUpgradeExitTimeout)
	defer cancel()
	go func() {
		<-sig // a second signal stops at once
		log.Info("second signal: closing every session now")
		cancel()
	}()
	var stuck *reactor.StuckSessionsError
	if err := srv.Shutdown(ctx); errors.As(err, &stuck) {
		// The reactor logged each one; what they hold goes with the process.
		log.Error("drain timed out; some sessions did not end when closed", "count", len(stuck.Sessions))
	} else if err != nil {
		log.Warn("drain timed out; remaining sessions were closed", "err", err)
	}
	if metricsSrv != nil {
		_ = metricsSrv.Close()
	}
	log.Info("obgate stopped")
	return nil
}
