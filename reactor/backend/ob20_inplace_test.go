package backend

import (
	"bytes"
	"errors"
	"net"
	"testing"

	"obgate/mysqlproto"
	"obgate/reactor/connio"
)

// ob20TestPackets returns a MySQL packet of n payload bytes.
func ob20TestPackets(n int, fill byte) []byte {
	p, _ := mysqlproto.AppendPacket(nil, 0, bytes.Repeat([]byte{fill}, n))
	return p
}

// TestOB20ServerIOInPlace sends requests from an ob20ServerIO on netpoll
// (frames encoded into netpoll's output buffer) to a plain peer that
// answers with small frames (unframed in netpoll's input buffer), a frame
// too large for the caller's buffer and for a view (through the framer's
// reader), and small ones again; every byte must arrive in order. A
// corrupt frame at the end must fail the read.
func TestOB20ServerIOInPlace(t *testing.T) {
	nc, peer := attachedPair(t)
	defer nc.Close()
	defer peer.Close()
	const connID = 77
	fr := mysqlproto.NewOB20Framer(nc, nc, mysqlproto.FramerClient, connID)
	sio := newOB20ServerIO(nc, fr, []byte("trace"), 0)

	small := ob20TestPackets(100, 's')
	big := ob20TestPackets(3*connio.ChunkSize, 'b')
	answers := [][]byte{small, small, big, small}
	want := bytes.Join(answers, nil)
	peerErr := make(chan error, 1)
	go func() {
		srv := mysqlproto.NewOB20Framer(peer, peer, mysqlproto.FramerServer, connID)
		h, extra, req, err := srv.ReadFrame()
		if err == nil && (!bytes.Equal(req, small) || string(extra) != "trace" || !h.Flags.Has(mysqlproto.OB20LastPacket)) {
			err = errors.New("request arrived changed")
		}
		for i, a := range answers {
			if err != nil {
				break
			}
			flags := mysqlproto.OB20Flags(0)
			if i == len(answers)-1 {
				flags = mysqlproto.OB20LastPacket
			}
			err = srv.WriteFrame(a, nil, flags)
		}
		peerErr <- err
	}()
	if err := sio.writeRequest(small, true, true); err != nil {
		t.Fatal(err)
	}
	var got []byte
	p := make([]byte, connio.ChunkSize)
	for len(got) < len(want) {
		n, err := sio.read(p)
		if err != nil {
			t.Fatalf("read after %d bytes: %v", len(got), err)
		}
		got = append(got, p[:n]...)
	}
	if !bytes.Equal(got, want) {
		t.Fatal("answer bytes differ from what the server sent")
	}
	if err := <-peerErr; err != nil {
		t.Fatal(err)
	}
	if sio.buffered() != 0 {
		t.Fatalf("%d bytes left buffered", sio.buffered())
	}

	// A frame whose payload checksum is wrong ends the session.
	bad := mysqlproto.AppendOB20Frame(nil, mysqlproto.OB20Header{ConnectionID: connID,
		RequestID: fr.RequestID(), Seq: fr.NextSequence(), Flags: mysqlproto.OB20LastPacket}, nil, small)
	bad[len(bad)-10] ^= 1
	if _, err := peer.Write(bad); err != nil {
		t.Fatal(err)
	}
	if _, err := sio.read(p); !errors.Is(err, mysqlproto.ErrOB20PayloadChecksum) {
		t.Fatalf("corrupt frame: err = %v", err)
	}
}

// TestOB20ClientIOInPlace runs an OceanBase client's requests through
// connio.OB20Client on both transports: small frames unframed in the
// transport's buffer, a request split over frames larger than connio.ChunkSize
// (the framer's reader), pipelined small ones after it, and the response
// framed back (lent netpoll buffer, or copied). A corrupt frame fails.
func TestOB20ClientIOInPlace(t *testing.T) {
	for _, transport := range []string{"netpoll", "net"} {
		t.Run(transport, func(t *testing.T) {
			a, peer := tcpPair(t)
			defer peer.Close()
			var raw connio.ClientIO
			if transport == "netpoll" {
				conn, err := NetpollFromTCP(a.(*net.TCPConn))
				if err != nil {
					t.Fatal(err)
				}
				_ = a.Close()
				raw = connio.NewNetpollClient(conn, nil)
			} else {
				nio := connio.NewNetClient(a, "net")
				defer nio.Free()
				raw = nio
			}
			const connID = 9
			c := connio.NewOB20Client(raw, connID)
			defer c.Free()
			defer c.Close()

			small := ob20TestPackets(50, 'q')
			big := ob20TestPackets(5*connio.ChunkSize/2, 'B')
			requests := [][]byte{small, big, small, small}
			drv := mysqlproto.NewOB20Framer(peer, peer, mysqlproto.FramerClient, connID)
			drv.SetMaxPayload(2 * connio.ChunkSize) // the big request takes two frames, the first over connio.ChunkSize
			// All but the last request are framed ahead and sent at once with
			// the last one (pipelined); the driver's own framer sends the last,
			// so that it expects the answer to that one.
			var wire []byte
			for i, r := range requests[:len(requests)-1] {
				var buf bytes.Buffer
				f := mysqlproto.NewOB20Framer(nil, &buf, mysqlproto.FramerClient, connID)
				f.SetMaxPayload(2 * connio.ChunkSize)
				f.SetNextRequestID(uint32(100 + i))
				f.BeginRequest()
				if err := f.WriteFrame(r, nil, mysqlproto.OB20LastPacket); err != nil {
					t.Fatal(err)
				}
				wire = append(wire, buf.Bytes()...)
			}
			sent := make(chan error, 1)
			go func() {
				_, err := peer.Write(wire)
				if err == nil {
					drv.BeginRequest()
					err = drv.WriteFrame(requests[len(requests)-1], nil, mysqlproto.OB20LastPacket)
				}
				sent <- err
			}()

			for i, want := range requests {
				got, err := c.Next(len(want))
				if err != nil {
					t.Fatalf("request %d: %v", i, err)
				}
				if !bytes.Equal(got, want) {
					t.Fatalf("request %d arrived changed", i)
				}
				c.Release()
			}

			if err := <-sent; err != nil {
				t.Fatal(err)
			}
			// The response to the last request, framed back.
			if err := c.Write(small); err != nil {
				t.Fatal(err)
			}
			if err := c.Flush(); err != nil {
				t.Fatal(err)
			}
			h, _, packets, err := drv.ReadFrame()
			if err != nil || !bytes.Equal(packets, small) || !h.Flags.Has(mysqlproto.OB20LastPacket) || h.ConnectionID != connID {
				t.Fatalf("response frame %+v %v", h, err)
			}

			bad := mysqlproto.AppendOB20Frame(nil, mysqlproto.OB20Header{ConnectionID: connID, RequestID: 1,
				Flags: mysqlproto.OB20LastPacket}, nil, small)
			bad[40] ^= 1
			if _, err := peer.Write(bad); err != nil {
				t.Fatal(err)
			}
			if _, err := c.Peek(4); !errors.Is(err, mysqlproto.ErrOB20PayloadChecksum) {
				t.Fatalf("corrupt frame: err = %v", err)
			}
		})
	}
}
