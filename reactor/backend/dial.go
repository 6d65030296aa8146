package backend

import (
	"context"
	"fmt"
	"net"
	"time"

	"obgate/mysqlproto"
)

// Dial opens a connection to addr with d and reads its handshake within
// d.Timeout (and ctx's deadline). With onPoller the connection moves onto
// netpoll (a PolledConn) before the handshake is read. The Conn returned
// has no owner yet (Registry.Add).
func Dial(ctx context.Context, addr string, d net.Dialer, onPoller bool) (*Conn, *mysqlproto.Handshake, *mysqlproto.PacketIO, error) {
	timeout := d.Timeout
	conn, err := d.DialContext(ctx, "tcp", addr)
	if err != nil {
		return nil, nil, nil, err
	}
	if onPoller {
		nc, err := AttachNetpoll(conn.(*net.TCPConn))
		if err != nil {
			conn.Close()
			return nil, nil, nil, err
		}
		conn = nc
	}
	deadline := time.Now().Add(timeout)
	if dl, ok := ctx.Deadline(); ok && dl.Before(deadline) {
		deadline = dl
	}
	_ = conn.SetDeadline(deadline)
	pio := mysqlproto.NewPacketIO(conn, conn)
	greeting, err := pio.ReadPacket()
	if err != nil {
		conn.Close()
		return nil, nil, nil, fmt.Errorf("read handshake from %s: %w", addr, err)
	}
	if len(greeting) > 0 && greeting[0] == mysqlproto.ERRHeader {
		conn.Close()
		e, _ := mysqlproto.ParseERR(greeting)
		return nil, nil, nil, mysqlproto.SQLErrorFromERR(e)
	}
	h, err := mysqlproto.ParseHandshake(greeting)
	if err != nil {
		conn.Close()
		return nil, nil, nil, fmt.Errorf("handshake from %s: %w", addr, err)
	}
	_ = conn.SetDeadline(time.Time{})
	return &Conn{NetConn: conn, Sock: conn, Addr: addr, ThreadID: h.ConnectionID}, h, pio, nil
}
