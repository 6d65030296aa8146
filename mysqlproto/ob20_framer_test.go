package mysqlproto

import (
	"bytes"
	"errors"
	"io"
	"net"
	"testing"
)

// TestOB20FramerServerAnswersVector feeds the spec's client frame V1 to a
// server framer and checks that the answer is byte for byte V3.
func TestOB20FramerServerAnswersVector(t *testing.T) {
	var out bytes.Buffer
	f := NewOB20Framer(bytes.NewReader(readHexFile(t, "ob20_v1.hex")), &out, FramerServer, 12345)
	pio := NewPacketIO(f, f)
	req, err := pio.ReadPacket()
	if err != nil || string(req) != "\x03select 1" {
		t.Fatalf("request %q %v", req, err)
	}
	pio.WritePacket(AppendOK(nil, OK{Status: StatusAutocommit}, ClientProtocol41))
	if err := pio.Flush(); err != nil {
		t.Fatal(err)
	}
	if want := readHexFile(t, "ob20_v3.hex"); !bytes.Equal(out.Bytes(), want) {
		t.Fatalf("response\n got %x\nwant %x", out.Bytes(), want)
	}
}

// TestOB20FramerClientWritesVectors has a client framer produce V1, V2 and
// V4 and read V3 back.
func TestOB20FramerClientWritesVectors(t *testing.T) {
	var out bytes.Buffer
	f := NewOB20Framer(bytes.NewReader(readHexFile(t, "ob20_v3.hex")), &out, FramerClient, 12345)
	f.SetNextRequestID(1)
	f.BeginRequest()
	if err := f.WriteFrame(selectOnePacket(), nil, 0); err != nil {
		t.Fatal(err)
	}
	if want := readHexFile(t, "ob20_v1.hex"); !bytes.Equal(out.Bytes(), want) {
		t.Fatalf("V1\n got %x\nwant %x", out.Bytes(), want)
	}
	h, extra, packets, err := f.ReadFrame()
	if err != nil || h.Seq != 1 || extra != nil || len(packets) != 11 {
		t.Fatalf("read V3: %+v %v", h, err)
	}

	out.Reset()
	f.SetNextRequestID(1)
	f.BeginRequest()
	if _, err := f.Write(selectOnePacket()); err != nil {
		t.Fatal(err)
	}
	if want := readHexFile(t, "ob20_v2.hex"); !bytes.Equal(out.Bytes(), want) {
		t.Fatalf("V2\n got %x\nwant %x", out.Bytes(), want)
	}

	out.Reset()
	g := NewOB20Framer(nil, &out, FramerClient, 0x0A0B0C0D)
	g.SetNextRequestID(7)
	g.BeginRequest()
	extraInfo := AppendOB20ExtraItem(nil, OB20ExtraTraceInfo, []byte("client_ip=127.0.0.1"))
	if err := g.WriteFrame(selectOnePacket(), extraInfo, OB20LastPacket|OB20NewExtraInfo); err != nil {
		t.Fatal(err)
	}
	if want := readHexFile(t, "ob20_v4.hex"); !bytes.Equal(out.Bytes(), want) {
		t.Fatalf("V4\n got %x\nwant %x", out.Bytes(), want)
	}
}

func TestOB20FramerSplitsLargePayloads(t *testing.T) {
	var wire bytes.Buffer
	client := NewOB20Framer(nil, &wire, FramerClient, 9)
	client.SetMaxPayload(1000)
	client.BeginRequest()
	packet, _ := AppendPacket(nil, 0, bytes.Repeat([]byte{'q'}, 2500))
	extra := AppendOB20ExtraItem(nil, OB20ExtraTraceInfo, []byte("x"))
	if err := client.WriteFrame(packet, extra, OB20LastPacket|OB20NewExtraInfo); err != nil {
		t.Fatal(err)
	}
	server := NewOB20Framer(&wire, io.Discard, FramerServer, 9)
	var got []byte
	for i := 0; ; i++ {
		h, ex, pk, err := server.ReadFrame()
		if err != nil {
			t.Fatal(err)
		}
		if int(h.Seq) != i || int(h.PayloadLen) > 1000 {
			t.Fatalf("frame %d: %+v", i, h)
		}
		if (i == 0) != (ex != nil) {
			t.Fatalf("frame %d: extra %x", i, ex)
		}
		got = append(got, pk...)
		if h.Flags.Has(OB20LastPacket) {
			break
		}
	}
	if !bytes.Equal(got, packet) {
		t.Fatal("reassembled packets differ")
	}
}

// TestOB20FramerRejects covers checksum, sequence and id checks on both
// sides.
func TestOB20FramerRejects(t *testing.T) {
	v1 := readHexFile(t, "ob20_v1.hex")
	v3 := readHexFile(t, "ob20_v3.hex")
	corrupt := bytes.Clone(v1)
	corrupt[40] ^= 0x20 // inside "select 1"
	for _, tc := range []struct {
		name  string
		frame []byte
		role  FramerRole
		conn  uint32
		reqID uint32
		want  error
	}{
		{"server bad payload checksum", corrupt, FramerServer, 12345, 0, ErrOB20PayloadChecksum},
		{"server wrong connection", v1, FramerServer, 777, 0, ErrOB20Sequence},
		{"client wrong request id", v3, FramerClient, 12345, 2, ErrOB20Sequence},
		{"client wrong connection", v3, FramerClient, 1, 1, ErrOB20Sequence},
		{"client wrong sequence", AppendOB20Frame(nil, OB20Header{CompressedSeq: 3, ConnectionID: 12345,
			RequestID: 1, Seq: 3, Flags: OB20LastPacket}, nil, selectOnePacket()), FramerClient, 12345, 1, ErrOB20Sequence},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := NewOB20Framer(bytes.NewReader(tc.frame), io.Discard, tc.role, tc.conn)
			if tc.role == FramerClient {
				f.SetNextRequestID(tc.reqID)
				f.BeginRequest()
				f.nextSeq = 1
			}
			if _, _, _, err := f.ReadFrame(); !errors.Is(err, tc.want) {
				t.Fatalf("err = %v, want %v", err, tc.want)
			}
		})
	}
	// With verification off, a bad checksum passes (ODP's behaviour on
	// client requests).
	f := NewOB20Framer(bytes.NewReader(corrupt), io.Discard, FramerServer, 0)
	f.SetVerify(false)
	if _, _, _, err := f.ReadFrame(); err != nil {
		t.Fatalf("verify off: %v", err)
	}
}

// TestOB20FramerOverConn runs a few requests over a real connection pair.
func TestOB20FramerOverConn(t *testing.T) {
	a, b := net.Pipe()
	defer a.Close()
	defer b.Close()
	done := make(chan error, 1)
	go func() {
		server := NewOB20Framer(b, b, FramerServer, 42)
		pio := NewPacketIO(server, server)
		for range 3 {
			pio.ResetSequence()
			req, err := pio.ReadPacket()
			if err != nil {
				done <- err
				return
			}
			pio.WritePacket(AppendOK(nil, OK{AffectedRows: uint64(len(req))}, ClientProtocol41))
			if err := pio.Flush(); err != nil {
				done <- err
				return
			}
		}
		done <- nil
	}()
	client := NewOB20Framer(a, a, FramerClient, 42)
	client.SetNextRequestID(0xfffffe) // wraps to 0 on the third request
	pio := NewPacketIO(client, client)
	for i := range 3 {
		id := client.BeginRequest()
		pio.ResetSequence()
		pio.WritePacket(append([]byte{byte(ComQuery)}, "select 1"...))
		if err := pio.Flush(); err != nil {
			t.Fatal(err)
		}
		p, err := pio.ReadPacket()
		if err != nil {
			t.Fatalf("request %d (id %d): %v", i, id, err)
		}
		ok, _ := ParseOK(p, ClientProtocol41)
		if ok.AffectedRows != 9 || client.Header().RequestID != id {
			t.Fatalf("request %d: %+v header %+v", i, ok, client.Header())
		}
	}
	if err := <-done; err != nil {
		t.Fatal(err)
	}
}

func BenchmarkOB20FramerWrite(b *testing.B) {
	f := NewOB20Framer(nil, io.Discard, FramerServer, 1)
	packets := make([]byte, 16<<10)
	b.SetBytes(int64(len(packets)))
	b.ReportAllocs()
	for b.Loop() {
		_ = f.WriteFrame(packets, nil, OB20LastPacket)
	}
}

func BenchmarkOB20ParseFrame(b *testing.B) {
	payload := bytes.Repeat([]byte{0x5a}, 16<<10) // not all zero: that would checksum to 0, "not computed"
	frame := AppendOB20Frame(nil, OB20Header{ConnectionID: 1, RequestID: 2}, nil, payload)
	b.SetBytes(int64(len(frame)))
	b.ReportAllocs()
	for b.Loop() {
		if _, _, _, err := ParseOB20Frame(frame); err != nil {
			b.Fatal(err)
		}
	}
}

// TestOB20FramerShrinkBuffers checks that a framer gives back the buffer a
// large frame made it grow, and keeps a small one.
func TestOB20FramerShrinkBuffers(t *testing.T) {
	var wire bytes.Buffer
	w := NewOB20Framer(nil, &wire, FramerClient, 9)
	w.BeginRequest()
	big := bytes.Repeat([]byte{'x'}, 3<<20)
	if _, err := w.Write(AppendPacketForTest(big)); err != nil {
		t.Fatal(err)
	}
	r := NewOB20Framer(&wire, nil, FramerServer, 9)
	if _, _, _, err := r.ReadFrame(); err != nil {
		t.Fatal(err)
	}
	r.unread = nil
	if cap(r.in.buf) < 3<<20 {
		t.Fatalf("read buffer only %d bytes after a 3 MiB frame", cap(r.in.buf))
	}
	r.ShrinkBuffers()
	if cap(r.in.buf) != 0 {
		t.Fatalf("read buffer kept %d bytes", cap(r.in.buf))
	}
}

// AppendPacketForTest frames payload as one MySQL packet starting at 0.
func AppendPacketForTest(payload []byte) []byte {
	b, _ := AppendPacket(nil, 0, payload)
	return b
}
