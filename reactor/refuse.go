package reactor

import (
	"encoding/binary"
	"net"
	"time"

	"obgate/mysqlproto"
)

// A client that arrives when obgate has no file descriptor left, for its
// own connection or for the server connection its login needs, is told
// ERR 1040 "Too many connections" (ER_CON_COUNT_ERROR, SQLSTATE 08004),
// which is what MySQL answers at max_connections and what drivers and
// pools know to back off from. Each refusal is counted in
// obgate_client_refused_total{reason="fd_exhausted"}; the log gets one
// warning per burst (see internal/burstlog), never one per client.

// tooManyConnections is the message of ERR 1040.
const tooManyConnections = "Too many connections"

// refuseWriteTimeout bounds the write of a refusal to a client that does
// not read; the packet fits any socket buffer, so it normally never waits.
const refuseWriteTimeout = time.Second

// greetingERR is an ERR packet sent in place of the server greeting
// (sequence id 0). It carries no SQLSTATE marker: before the greeting the
// client has not said it speaks protocol 4.1, and MySQL servers send it
// this way then.
func greetingERR(code uint16, msg string) []byte {
	payload := binary.LittleEndian.AppendUint16([]byte{mysqlproto.ERRHeader}, code)
	payload = append(payload, msg...)
	pkt, _ := mysqlproto.AppendPacket(nil, 0, payload)
	return pkt
}

// refuseAtGreeting answers conn, accepted with the spare descriptor after
// acceptErr, with ERR 1040 and closes it. It runs on the Serve goroutine.
func (srv *Server) refuseAtGreeting(conn net.Conn, acceptErr error) {
	_ = conn.SetWriteDeadline(time.Now().Add(refuseWriteTimeout))
	_, _ = conn.Write(greetingERR(mysqlproto.ERConCountError, tooManyConnections))
	_ = conn.Close()
	srv.countRefusal(acceptErr)
}

// refuseNoFD refuses a login whose server connection could not be opened
// because descriptors ran out (dialErr): ERR 1040 after the client's
// login, then the session ends. It runs on the login goroutine.
func (srv *Server) refuseNoFD(cpio *mysqlproto.PacketIO, dialErr error) error {
	_ = cpio.WritePacketFlush(mysqlproto.NewSQLError(mysqlproto.ERConCountError, tooManyConnections).AppendPacket(nil))
	srv.countRefusal(dialErr)
	return quit(QuitLimit, dialErr)
}

// countRefusal counts one client refused for want of descriptors and
// notes it for the burst warning. Any goroutine.
func (srv *Server) countRefusal(err error) {
	srv.metrics.refusedFD.Inc()
	srv.refusals.Note(err)
}
