package main

import (
	"log/slog"
	"syscall"

	"obgate/config"
)

// fdOverhead is what obgate holds besides client and server connections:
// standard streams, listeners, the metrics server and its scrapes, the
// runtime's and netpoll's pollers, the descriptor kept in reserve for
// refusing clients, internal connections of cluster refresh.
const fdOverhead = 64

// fdNeed estimates how many file descriptors client_max_connections
// clients can take: each holds its own connection and at least one to a
// server; in OceanBase mode a session may hold one per server it used,
// counted here as the root servers (the servers obgate knows before the
// first refresh). It returns 0 when client_max_connections is 0
// (unlimited).
func fdNeed(cfg *config.Config) (need, perClient uint64) {
	if cfg.ClientMaxConnections <= 0 {
		return 0, 0
	}
	perClient = 2
	if cfg.ServerRoutingMode != "mysql" {
		perClient = 1 + uint64(max(1, len(cfg.RootserviceAddrs())))
	}
	return uint64(cfg.ClientMaxConnections)*perClient + fdOverhead, perClient
}

// fdSoftLimit decides the soft RLIMIT_NOFILE to ask for: the hard limit
// when the soft one is below need (0: unknown need, raise anyway), the
// current one otherwise.
func fdSoftLimit(cur, hard, need uint64) uint64 {
	if cur < hard && (need == 0 || cur < need) {
		return hard
	}
	return cur
}

// checkFDLimit compares the file-descriptor limit with what cfg can need
// at startup, raises the soft limit to the hard one when that helps, and
// warns with the numbers when the limit is still too low: past it, new
// clients are refused with ERR 1040 while the others are served. It runs
// once, on the main goroutine, before listening.
func checkFDLimit(cfg *config.Config, log *slog.Logger) {
	var lim syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &lim); err != nil {
		log.Warn("cannot read the file descriptor limit (RLIMIT_NOFILE)", "err", err)
		return
	}
	need, per := fdNeed(cfg)
	if want := fdSoftLimit(lim.Cur, lim.Max, need); want != lim.Cur {
		raised := syscall.Rlimit{Cur: want, Max: lim.Max}
		if err := syscall.Setrlimit(syscall.RLIMIT_NOFILE, &raised); err != nil {
			log.Warn("cannot raise the file descriptor limit", "soft", lim.Cur, "hard", lim.Max, "err", err)
		} else {
			log.Info("raised the file descriptor limit", "from", lim.Cur, "to", want)
			lim.Cur = want
		}
	}
	if need == 0 || lim.Cur >= need {
		return
	}
	fit := uint64(0)
	if lim.Cur > fdOverhead {
		fit = (lim.Cur - fdOverhead) / per
	}
	log.Warn("file descriptor limit (RLIMIT_NOFILE) is too low for client_max_connections; raise it (ulimit -n, LimitNOFILE=) or lower client_max_connections",
		"limit", lim.Cur, "hard_limit", lim.Max, "needed", need,
		"client_max_connections", cfg.ClientMaxConnections, "fds_per_client", per,
		"clients_that_fit", fit, "routing_mode", cfg.ServerRoutingMode)
}
