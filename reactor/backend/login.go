package backend

// The logins obgate runs itself, on server sessions it opens without the
// client: every OceanBase-mode server session (the first with the
// client's own login, kept; the others with the kept login and no
// database), a mysql-mode session moving to another server, and a KILL
// sent as the client's user to another server. All go through OwnLogin.
// The client's first login in mysql routing mode is relayed instead:
// only the client can answer the server's authentication rounds then.

import (
	"context"
	"errors"
	"fmt"
	"time"

	"obgate/config"
	"obgate/health"
	"obgate/mysqlproto"
)

// errMoreAuth reports a server that asked for another authentication
// round (an auth switch or more data), which a login without the client
// cannot answer.
var errMoreAuth = errors.New("the server asked for another authentication round, which a login without the client cannot answer")

// LoginDeadline bounds a login obgate runs: short_async_task_timeout from
// now, or ctx's deadline when that is sooner.
func LoginDeadline(ctx context.Context, cfg *config.Config) time.Time {
	deadline := time.Now().Add(cfg.ShortAsyncTaskTimeout)
	if dl, ok := ctx.Deadline(); ok && dl.Before(deadline) {
		deadline = dl
	}
	return deadline
}

// OwnLogin sends resp on be, a server session just dialled (pio read its
// greeting), and reads the one answer a login without the client can
// have, all before deadline. It returns the OK packet, copied. Otherwise
// it closes be and returns the server's ERR as a *mysqlproto.SQLError
// (told to be's health entry when it says the server is failing),
// errMoreAuth, or the transport's error.
func OwnLogin(be *Conn, pio *mysqlproto.PacketIO, resp *mysqlproto.HandshakeResponse, deadline time.Time) ([]byte, error) {
	_ = be.NetConn.SetDeadline(deadline)
	resp.Capability &^= mysqlproto.ClientSSL
	if be.PendingTLS != nil {
		resp.Capability |= mysqlproto.ClientSSL
		var err error
		if pio, err = be.StartTLS(pio, resp.Capability, resp.MaxPacketSize, resp.Charset); err != nil {
			be.Close()
			return nil, err
		}
	}
	if err := pio.WritePacketFlush(resp.Append(nil)); err != nil {
		be.Close()
		return nil, fmt.Errorf("login to %s: %w", be.Addr, err)
	}
	p, err := pio.ReadPacket()
	switch {
	case err != nil:
		err = fmt.Errorf("login to %s: %w", be.Addr, err)
	case len(p) == 0:
		err = mysqlproto.ErrMalformed
	case p[0] == mysqlproto.OKHeader:
		_ = be.NetConn.SetDeadline(time.Time{})
		return append([]byte(nil), p...), nil
	case p[0] == mysqlproto.ERRHeader:
		e, _ := mysqlproto.ParseERR(p)
		if health.AliveFailureERR(e.Code) && be.Health != nil {
			be.Health.AliveFailed(health.ERRReason(e.Code))
		}
		err = mysqlproto.SQLErrorFromERR(e)
	default:
		err = fmt.Errorf("login to %s: %w", be.Addr, errMoreAuth)
	}
	be.Close()
	return nil, err
}
