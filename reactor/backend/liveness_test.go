package backend

import (
	"bytes"
	"io"
	"net"
	"testing"
	"time"

	"obgate/mysqlproto"
)

// tcpPair returns both ends of a loopback TCP connection.
func tcpPair(t *testing.T) (client, server net.Conn) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	accepted := make(chan net.Conn, 1)
	go func() {
		c, _ := ln.Accept()
		accepted <- c
	}()
	client, err = net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	server = <-accepted
	if server == nil {
		t.Fatal("accept failed")
	}
	t.Cleanup(func() { client.Close(); server.Close() })
	return client, server
}

// waitPeerClosed waits until a peek sees the peer's FIN (a peek consumes
// nothing).
func waitPeerClosed(t *testing.T, b *Conn) {
	t.Helper()
	deadline := time.Now().Add(hangLimitUnit)
	for !b.serverIO().peerClosed() {
		if time.Now().After(deadline) {
			t.Fatal("the peek never saw the peer close the connection")
		}
		time.Sleep(time.Millisecond)
	}
}

// hangLimitUnit bounds waits for the kernel in these tests; it is a
// give-up limit, not a measured time.
const hangLimitUnit = 10 * time.Second

// TestAlivePeeksOnlyAfterIdle: a server session used less than
// peekIdleAfter ago is taken as alive without looking at its socket; one
// idle for longer is peeked at, which finds a closed one; bytes outside a
// response mark it out of step whenever it was used.
func TestAlivePeeksOnlyAfterIdle(t *testing.T) {
	conn, peer := tcpPair(t)
	b := &Conn{NetConn: conn, Sock: conn, Addr: "test"}
	used := time.Now()
	b.LastUsed.Store(used.UnixNano())
	if !b.aliveAt(used.Add(PeekIdleAfter)) {
		t.Fatal("an idle session with a standing connection is not alive")
	}
	peer.Close()
	waitPeerClosed(t, b)
	if !b.aliveAt(used.Add(PeekIdleAfter / 2)) {
		t.Fatal("a session used moments ago was peeked at (it is reported broken), want no peek inside the window")
	}
	if b.aliveAt(used.Add(PeekIdleAfter)) {
		t.Fatal("a session idle for the whole window whose server closed it is alive")
	}
	b.LastUsed.Store(0)
	if b.aliveAt(used) {
		t.Fatal("a session never used whose server closed it is alive")
	}
	b.Close()
	b.LastUsed.Store(used.UnixNano())
	if b.aliveAt(used) {
		t.Fatal("a closed session is alive")
	}
}

// TestAliveOutOfStep: bytes the framer read ahead of a response, which a
// session between statements must not have, make it not alive even when
// it was just used.
func TestAliveOutOfStep(t *testing.T) {
	conn, _ := tcpPair(t)
	// The server answers with an OK and, in the same write, a frame nobody
	// asked for.
	okPkt, _ := mysqlproto.AppendPacket(nil, 1, mysqlproto.AppendOK(nil, mysqlproto.OK{Status: mysqlproto.StatusAutocommit}, 0))
	var wire []byte
	for seq := uint8(1); seq <= 2; seq++ {
		wire = mysqlproto.AppendOB20Frame(wire, mysqlproto.OB20Header{ConnectionID: 9, RequestID: 5, Seq: seq,
			Flags: mysqlproto.OB20LastPacket}, nil, okPkt)
	}
	fr := mysqlproto.NewOB20Framer(bytes.NewReader(wire), io.Discard, mysqlproto.FramerClient, 9)
	fr.SetNextRequestID(5)
	b := &Conn{NetConn: conn, Sock: conn, Addr: "test", OB20: fr}
	ping, _ := mysqlproto.AppendPacket(nil, 0, []byte{byte(mysqlproto.ComPing)})
	if err := b.WriteRequest(ping, true, true); err != nil {
		t.Fatal(err)
	}
	p := make([]byte, len(okPkt))
	if n, err := b.Read(p); err != nil || n != len(okPkt) {
		t.Fatalf("read %d bytes, %v; want the OK's %d", n, err, len(okPkt))
	}
	b.Touch()
	if got := b.serverIO().buffered(); got != len(wire)/2 {
		t.Fatalf("%d bytes buffered after the answer, want the unasked frame's %d", got, len(wire)/2)
	}
	if b.aliveAt(b.LastUsedAt()) {
		t.Fatal("a session with bytes outside a response is alive")
	}
}
