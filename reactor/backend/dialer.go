package backend

import (
	"context"
	"errors"
	"syscall"
	"time"

	vm "github.com/VictoriaMetrics/metrics"

	"obgate/config"
	"obgate/health"
	"obgate/internal/burstlog"
	"obgate/internal/tlsconf"
	"obgate/mysqlproto"
	"obgate/reactor/connio"
)

// Dialer opens the connections of server sessions and tells each
// server's health entry how a connect went: the one place where a
// connect's outcome is judged. Its fields are set once, before the first
// Dial; any goroutine may then call Dial.
type Dialer struct {
	Config *config.Store
	Health *health.Monitor
	TLS    *tlsconf.Server // enable_server_ssl's configuration per server
	// OnPoller says plain connections (not TLS ones) join netpoll: the
	// pollers take server connections.
	OnPoller bool
	// NoTLS notes servers refused for offering no TLS, one line per
	// burst; Failed counts the connects that failed.
	NoTLS  *burstlog.Log
	Failed *vm.Counter
}

// Dial opens a server session's connection to addr of cluster (""
// in mysql routing mode), reads its handshake and plans its TLS, and
// tells the server's health entry how that went. The handshake must come
// within short_async_task_timeout, and within detect_server_timeout when
// that is shorter: a server that cannot greet in that time would be found
// dead by the detect task anyway, and a statement should not wait longer
// for it. The Conn returned has its health entry and no owner yet
// (Registry.Add).
func (d *Dialer) Dial(ctx context.Context, cluster, addr string) (*Conn, *mysqlproto.Handshake, *mysqlproto.PacketIO, error) {
	cfg := d.Config.Load()
	entry := d.Health.Entry(cluster, addr)
	timeout := min(cfg.ShortAsyncTaskTimeout, cfg.DetectServerTimeout)
	start := time.Now()
	tlsCfg, required, err := d.TLS.For(cfg, addr)
	if err != nil {
		// obgate's own files, not the server's failure.
		return nil, nil, nil, err
	}
	be, h, pio, err := Dial(ctx, addr, connio.ServerDialer(cfg, timeout), d.OnPoller && tlsCfg == nil)
	if err == nil {
		err = be.PlanTLS(h, tlsCfg, required)
	}
	switch {
	case err == nil:
		entry.ConnectSucceeded()
		be.Health = entry
		return be, h, pio, nil
	case IsFDExhausted(err):
		// obgate's own shortage, not the server's.
	case errors.Is(err, ErrServerNoTLS):
		// obgate's settings refused it: the server works. Every dial
		// would say so: one line per burst.
		d.NoTLS.Note(err)
	case ctx.Err() != nil:
		// The client gave up (or its login deadline passed) while obgate
		// was connecting: a failure only when the connect had taken
		// min_congested_connect_timeout already, as ODP counts it.
		if time.Since(start) >= cfg.MinCongestedConnectTimeout {
			entry.AliveFailed("connect_abandoned")
		}
	default:
		var se *mysqlproto.SQLError
		if errors.As(err, &se) {
			// The server greeted with an ERR: it is alive but refuses
			// sessions now (too many connections, starting up).
			entry.AliveFailed("connect_refused_by_server")
		} else {
			entry.ConnectFailed()
		}
	}
	d.Failed.Inc()
	return nil, nil, nil, err
}

// IsFDExhausted reports whether err says the process (EMFILE) or the
// system (ENFILE) has no file descriptor left.
func IsFDExhausted(err error) bool {
	return errors.Is(err, syscall.EMFILE) || errors.Is(err, syscall.ENFILE)
}
