package connio

import (
	"net"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"obgate/config"
)

// TCP options of client and server connections, from ODP's
// {client,server}_tcp_{keepidle,keepintvl,keepcnt,user_timeout} items.

// keepAlive builds TCP keepalive settings from ODP's keepidle/keepintvl/
// keepcnt items (seconds; 0 leaves the system default).
func keepAlive(idle, intvl, cnt int64) net.KeepAliveConfig {
	return net.KeepAliveConfig{
		Enable:   true,
		Idle:     time.Duration(idle) * time.Second,
		Interval: time.Duration(intvl) * time.Second,
		Count:    int(cnt),
	}
}

// ServerDialer returns the dialer of server connections: keepalive as the
// server_tcp_keep* items say and, when server_tcp_user_timeout is set,
// TCP_USER_TIMEOUT set on the socket before it connects, so unacknowledged
// data to a server that vanished without a reset fails the connection
// within that many seconds instead of the kernel's retransmission
// schedule (about 15 minutes).
func ServerDialer(cfg *config.Config, timeout time.Duration) net.Dialer {
	d := net.Dialer{Timeout: timeout, KeepAliveConfig: keepAlive(cfg.ServerTCPKeepIdle, cfg.ServerTCPKeepIntvl, cfg.ServerTCPKeepCnt)}
	if secs := cfg.ServerTCPUserTimeout; secs > 0 {
		d.Control = func(_, _ string, rc syscall.RawConn) error {
			return setUserTimeout(rc, secs)
		}
	}
	return d
}

// TuneClientConn applies the client_tcp_* items to an accepted client
// connection. Failures are ignored: the options are tuning, and a socket
// that refuses them still works.
func TuneClientConn(tc *net.TCPConn, cfg *config.Config) {
	_ = tc.SetKeepAliveConfig(keepAlive(cfg.ClientTCPKeepIdle, cfg.ClientTCPKeepIntvl, cfg.ClientTCPKeepCnt))
	if secs := cfg.ClientTCPUserTimeout; secs > 0 {
		if rc, err := tc.SyscallConn(); err == nil {
			_ = setUserTimeout(rc, secs)
		}
	}
}

// setUserTimeout sets TCP_USER_TIMEOUT (milliseconds in the kernel) on a socket.
func setUserTimeout(rc syscall.RawConn, secs int64) error {
	var serr error
	err := rc.Control(func(fd uintptr) {
		serr = unix.SetsockoptInt(int(fd), unix.IPPROTO_TCP, unix.TCP_USER_TIMEOUT, int(secs*1000))
	})
	if err != nil {
		return err
	}
	return serr
}
