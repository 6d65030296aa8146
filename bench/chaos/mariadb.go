package chaos

import (
	"context"
	"strings"
	"syscall"
	"time"
)

// mariaScenario runs against two independent MariaDB servers with the same
// schema: obgate in mysql routing mode, then HAProxy (TCP mode, its own
// health check) as the reference, each with fresh servers.
func mariaScenario() *Scenario {
	return &Scenario{Name: "mariadb", MySQL: true,
		Title: "two MariaDB servers: SIGSTOP one, SIGCONT it, then SIGKILL it",
		play:  playMaria, afterLoad: reviveKilled, judge: judgeMaria}
}

func (s *Suite) runMaria(ctx context.Context, sc *Scenario, target string) *Result {
	r, err := s.newRun(sc, target)
	if err != nil {
		r.res.Error = err.Error()
		return r.res
	}
	s.progress("%s/%s: starting two MariaDB servers", sc.Name, target)
	pair, err := StartMariaPair(ctx, s.set.TableSize)
	if err != nil {
		r.res.Error = "MariaDB: " + err.Error()
		return r.res
	}
	defer pair.Close()
	r.pair = pair
	r.ledgerDBs = pair.Addrs()
	r.res.Server, r.res.ServerAddr = "db1", pair.Servers[1].Addr()
	// Sessions on the server that is never broken (the other is dead by
	// the time the leak check runs).
	r.backend = func(ctx context.Context) int { return mariaSessions(ctx, pair.Servers[0].Addr()) }
	var p *Proxy
	switch target {
	case "obgate":
		// By default, probes as often as HAProxy's check (inter 1s fall
		// 3): every server, a handshake within 1 s, three strikes.
		scOpts := sc.Opts
		if scOpts == nil {
			scOpts = []string{"server_detect_mode=2", "detect_server_timeout=1s"}
		}
		opts := append(append([]string{"server_routing_mode=mysql"}, scOpts...), s.set.ExtraOpts...)
		r.res.Options = opts
		bin := s.set.Obgate
		if sc.Upgrades {
			s.progress("%s/%s: building the versions to upgrade to", sc.Name, target)
			if bin, err = r.prepareUpgrades(ctx); err != nil {
				r.res.Error = "builds: " + err.Error()
				return r.res
			}
		}
		p, err = StartObgate(ctx, bin, r.dir, []string{"-r", strings.Join(pair.Addrs(), ";")}, opts, "root")
	default:
		p, err = StartHAProxy(ctx, s.set.HAProxy, r.dir, pair.Addrs(), "root")
	}
	if err != nil {
		r.res.Error = target + ": " + err.Error()
		return r.res
	}
	r.proxy = p
	r.res.Command = p.Argv
	s.progress("%s/%s: running", sc.Name, target)
	r.execute(ctx, "root")
	return r.res
}

// mariaSessions counts the client sessions of a MariaDB server other than
// the asking one.
func mariaSessions(ctx context.Context, addr string) int {
	db, err := directDB(addr)
	if err != nil {
		return -1
	}
	defer db.Close()
	ctx, cancel := context.WithTimeout(ctx, 3*time.Second)
	defer cancel()
	var n int
	err = db.QueryRowContext(ctx, `SELECT COUNT(*) FROM information_schema.PROCESSLIST
		WHERE ID <> CONNECTION_ID() AND COMMAND <> 'Daemon' AND USER NOT IN ('system user', 'event_scheduler')`).Scan(&n)
	if err != nil {
		return -1
	}
	return n
}

func playMaria(ctx context.Context, r *run) error {
	if err := sleepCtx(ctx, r.warm()); err != nil {
		return err
	}
	if err := r.fault("SIGSTOP db1", func() error { return r.pair.Signal(1, syscall.SIGSTOP) }); err != nil {
		return err
	}
	stallErr := sleepCtx(ctx, r.set.phase(15*time.Second, 5*time.Second))
	if err := r.repair("SIGCONT db1", func() error { return r.pair.Signal(1, syscall.SIGCONT) }); err != nil {
		return err
	}
	if stallErr != nil {
		return stallErr
	}
	if err := sleepCtx(ctx, r.set.phase(5*time.Second, 3*time.Second)); err != nil {
		return err
	}
	if err := r.fault("SIGKILL db1", func() error { return r.pair.Signal(1, syscall.SIGKILL) }); err != nil {
		return err
	}
	return sleepCtx(ctx, r.set.phase(6*time.Second, 4*time.Second))
}

// reviveKilled starts the killed server again on its datadir so that its
// ledger can be read (its commits reached the OS before the kill).
func reviveKilled(ctx context.Context, r *run) error {
	return r.pair.Revive(ctx, 1)
}

func judgeMaria(r *run) {
	r.checkNoReadErrors()
	// A write in flight when the server froze (SIGSTOP) may have been
	// applied before it froze: its outcome is unknown and the client must
	// be told (ERR 4012, "Transaction result is unknown"), like a write in flight at the SIGKILL.
	var at []float64
	for _, e := range r.res.Events {
		if e.What == "SIGKILL db1" || e.What == "SIGSTOP db1" {
			at = append(at, e.At)
		}
	}
	if len(at) > 0 {
		r.checkWritesOnlyInFlight("the SIGSTOP or the SIGKILL", at...)
	}
	r.checkLedger()
	r.checkLeak()
}
