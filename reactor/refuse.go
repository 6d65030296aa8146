package reactor

import (
	"encoding/binary"
	"net"
	"time"

	vm "github.com/VictoriaMetrics/metrics"

	"obgate/internal/burstlog"
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

// fdRefusals refuses clients for want of descriptors, and counts and
// notes each refusal (the Server's noFD). Any goroutine.
type fdRefusals struct {
	count *vm.Counter   // obgate_client_refused_total{reason="fd_exhausted"}
	burst *burstlog.Log // the warning, once per burst
}

// atGreeting answers conn, accepted with the spare descriptor after
// acceptErr, with ERR 1040 and closes it. It runs on the Serve goroutine.
func (r fdRefusals) atGreeting(conn net.Conn, acceptErr error) {
	_ = conn.SetWriteDeadline(time.Now().Add(refuseWriteTimeout))
	_, _ = conn.Write(greetingERR(mysqlproto.ERConCountError, tooManyConnections))
	_ = conn.Close()
	r.note(acceptErr)
}

// atLogin refuses a login whose server connection could not be opened
// because descriptors ran out (dialErr): ERR 1040 after the client's
// login, then the session ends. It runs on the login goroutine.
func (r fdRefusals) atLogin(cpio *mysqlproto.PacketIO, dialErr error) error {
	_ = cpio.WritePacketFlush(mysqlproto.NewSQLError(mysqlproto.ERConCountError, tooManyConnections).AppendPacket(nil))
	r.note(dialErr)
	return quit(QuitLimit, dialErr)
}

// note counts one client refused for want of descriptors and notes it
// for the burst warning.
func (r fdRefusals) note(err error) {
	r.count.Inc()
	r.burst.Note(err)
}
