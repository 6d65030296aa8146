package health

import (
	"context"
	"encoding/hex"
	"errors"
	"fmt"
	"net"
	"time"

	"obgate/config"
	"obgate/internal/tlsconf"
	"obgate/internal/topology"
	"obgate/mysqlproto"
)

// detectStatement is what a login probe runs (server_detect_mode=3).
const detectStatement = "select 'detect server alive' from dual"

// probe checks one server: a new TCP connection that must deliver the
// server's handshake within detect_server_timeout, as ODP's detect task
// does (a greeting that is an ERR, such as "too many connections", still
// shows a live server). With server_detect_mode=3 in OceanBase mode it
// then logs in as proxyro@sys and runs detectStatement, each round trip
// within detect_server_timeout, so a slow but working server is never
// failed for adding up round trips.
func probe(ctx context.Context, t Target, cfg *config.Config, serverTLS tlsconf.ServerFunc) error {
	timeout := cfg.DetectServerTimeout
	d := net.Dialer{Timeout: timeout}
	conn, err := d.DialContext(ctx, "tcp", t.Addr)
	if err != nil {
		return err
	}
	defer conn.Close()
	stop := context.AfterFunc(ctx, func() { _ = conn.Close() })
	defer stop()
	if cfg.ServerDetectMode >= 3 && t.Cluster != "" {
		return loginProbe(conn, cfg, t.Addr, serverTLS)
	}
	_ = conn.SetDeadline(time.Now().Add(timeout))
	greeting, err := mysqlproto.NewPacketIO(conn, conn).ReadPacket()
	if err != nil {
		return fmt.Errorf("no handshake: %w", err)
	}
	if len(greeting) == 0 {
		return errors.New("empty handshake packet")
	}
	if greeting[0] == mysqlproto.ERRHeader {
		return nil
	}
	_, err = mysqlproto.ParseHandshake(greeting)
	return err
}

// loginProbe logs in as proxyro@sys on conn to addr and runs
// detectStatement, over TLS as enable_server_ssl says (serverTLS).
func loginProbe(conn net.Conn, cfg *config.Config, addr string, serverTLS tlsconf.ServerFunc) error {
	timeout := cfg.DetectServerTimeout
	var stage1 []byte
	if cfg.ObserverSysPassword != "" {
		b, err := hex.DecodeString(cfg.ObserverSysPassword)
		if err != nil {
			return fmt.Errorf("observer_sys_password is not SHA1 hex: %w", err)
		}
		stage1 = b
	}
	// The handshake and the login answer are two round trips, each with
	// its own deadline.
	_ = conn.SetDeadline(time.Now().Add(timeout))
	opts := mysqlproto.ClientOptions{
		User:           topology.UserProxyRO + "@" + topology.TenantSys,
		PasswordStage1: stage1,
		Attrs:          []mysqlproto.ConnAttr{{Key: mysqlproto.AttrProxyVersion, Value: "obgate"}},
		OnHandshake: func(*mysqlproto.Handshake, *mysqlproto.HandshakeResponse) {
			_ = conn.SetDeadline(time.Now().Add(timeout))
		},
	}
	if serverTLS != nil {
		c, required, err := serverTLS(cfg, addr)
		if err != nil {
			// obgate's own TLS files: not the server's failure.
			return nil
		}
		opts.TLS, opts.TLSOptional = c, !required
	}
	cl, err := mysqlproto.NewClient(conn, opts)
	if errors.Is(err, mysqlproto.ErrServerNoTLS) {
		// obgate's settings refuse it (server_ssl_verify); it answered.
		return nil
	}
	if err != nil {
		return answered(fmt.Errorf("detect login: %w", err))
	}
	defer cl.Close()
	_ = conn.SetDeadline(time.Now().Add(timeout))
	if _, err := cl.Query(detectStatement); err != nil {
		return answered(fmt.Errorf("detect statement: %w", err))
	}
	return nil
}

// answered turns a server's ERR into success: a server that answers, even
// "access denied", is alive, and a wrong observer_sys_password must not
// list every server. Only "still starting" and "stopping" count against
// it.
func answered(err error) error {
	var se *mysqlproto.SQLError
	if errors.As(err, &se) && se.Code != mysqlproto.OBServerIsInit && se.Code != mysqlproto.OBServerIsStopping {
		return nil
	}
	return err
}
