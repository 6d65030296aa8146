package mysqlproto

import (
	"bytes"
	"compress/zlib"
	"errors"
	"io"
	"math/rand/v2"
	"testing"
)

// TestCompressGoldenStoredFrame is ob20-protocol.md §13.3 V8: the
// "checksum" protocol at level 0.
func TestCompressGoldenStoredFrame(t *testing.T) {
	want := readHexFile(t, "ob20_v8.hex")
	c := NewCompressor(CompressStored)
	c.SetMinLen(0)
	got := c.AppendFrame(nil, 0, selectOnePacket())
	if *updateOB20 {
		writeHexFile(t, "ob20_v8.hex", got)
	}
	if !bytes.Equal(got, want) {
		t.Fatalf("frame\n got %x\nwant %x", got, want)
	}
	seq, payload, uncompLen, n, ok := ParseCompressedFrame(want)
	if !ok || seq != 0 || uncompLen != len(selectOnePacket()) || n != len(want) {
		t.Fatalf("parse: seq %d uncomp %d n %d ok %v", seq, uncompLen, n, ok)
	}
	// The standard library inflates the stored stream as well.
	zr, err := zlib.NewReader(bytes.NewReader(payload))
	if err != nil {
		t.Fatal(err)
	}
	plain, err := io.ReadAll(zr)
	if err != nil || !bytes.Equal(plain, selectOnePacket()) {
		t.Fatalf("zlib: %x %v", plain, err)
	}
	var d Decompressor
	out, err := d.AppendInflated(nil, payload, uncompLen)
	if err != nil || !bytes.Equal(out, selectOnePacket()) {
		t.Fatalf("AppendInflated: %x %v", out, err)
	}
}

func TestCompressStoredZlibBlocks(t *testing.T) {
	for _, n := range []int{0, 1, storedBlockMax - 1, storedBlockMax, storedBlockMax + 1, 3*storedBlockMax + 7} {
		data := bytes.Repeat([]byte{0xa5, 0x11, 0x00}, n/3+1)[:n]
		z := AppendStoredZlib(nil, data)
		zr, err := zlib.NewReader(bytes.NewReader(z))
		if err != nil {
			t.Fatalf("n=%d: %v", n, err)
		}
		got, err := io.ReadAll(zr)
		if err != nil || !bytes.Equal(got, data) {
			t.Fatalf("n=%d: inflate %d bytes, err %v", n, len(got), err)
		}
	}
}

func TestCompressRoundTripLevels(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	data := make([]byte, 200<<10)
	for i := range data {
		data[i] = byte(r.IntN(8)) // compressible
	}
	for _, level := range []int{CompressNone, CompressStored, 1, 6, 9} {
		c := NewCompressor(level)
		var d Decompressor
		for _, n := range []int{0, 10, CompressMinLen, 4096, len(data)} {
			frame := c.AppendFrame(nil, 7, data[:n])
			seq, payload, uncompLen, fn, ok := ParseCompressedFrame(frame)
			if !ok || seq != 7 || fn != len(frame) {
				t.Fatalf("level %d n %d: parse failed", level, n)
			}
			if (level == CompressNone || n < CompressMinLen) != (uncompLen == 0) {
				t.Fatalf("level %d n %d: uncompressed length %d", level, n, uncompLen)
			}
			out, err := d.AppendInflated(nil, payload, uncompLen)
			if err != nil || !bytes.Equal(out, data[:n]) {
				t.Fatalf("level %d n %d: round trip failed: %v", level, n, err)
			}
		}
	}
}

func TestCompressRejectsBadPayloads(t *testing.T) {
	c := NewCompressor(6)
	frame := c.AppendFrame(nil, 0, bytes.Repeat([]byte("abc"), 100))
	_, payload, uncompLen, _, _ := ParseCompressedFrame(frame)
	var d Decompressor
	for name, tc := range map[string]struct {
		payload []byte
		n       int
	}{
		"header says more": {payload, uncompLen + 1},
		"header says less": {payload, uncompLen - 1},
		"corrupt":          {append(bytes.Clone(payload[:len(payload)-1]), payload[len(payload)-1]^1), uncompLen},
		"not zlib":         {[]byte("hello"), 5},
	} {
		if _, err := d.AppendInflated(nil, tc.payload, tc.n); !errors.Is(err, ErrCompressedFrame) {
			t.Errorf("%s: err = %v", name, err)
		}
	}
	// The decompressor is still usable after errors.
	if out, err := d.AppendInflated(nil, payload, uncompLen); err != nil || len(out) != uncompLen {
		t.Fatalf("after errors: %v", err)
	}
}

// TestCompressFramerConversation runs a command and its response through a
// client and a server framer, with a packet larger than one frame.
func TestCompressFramerConversation(t *testing.T) {
	var c2s, s2c bytes.Buffer
	client := NewCompressedFramer(&s2c, &c2s, FramerClient, 6)
	server := NewCompressedFramer(&c2s, &s2c, FramerServer, CompressStored)

	client.BeginRequest()
	cpio := NewPacketIO(client, client)
	cpio.WritePacket(append([]byte{byte(ComQuery)}, "select 1"...))
	if err := cpio.Flush(); err != nil {
		t.Fatal(err)
	}
	spio := NewPacketIO(server, server)
	req, err := spio.ReadPacket()
	if err != nil || string(req[1:]) != "select 1" {
		t.Fatalf("server read %q %v", req, err)
	}
	if server.LastSequence() != 0 {
		t.Fatalf("request frame seq %d", server.LastSequence())
	}
	big := bytes.Repeat([]byte{'x'}, MaxPayloadLen+10)
	spio.WritePacket(big)
	if err := spio.Flush(); err != nil {
		t.Fatal(err)
	}
	got, err := cpio.ReadPacket()
	if err != nil || !bytes.Equal(got, big) {
		t.Fatalf("client read %d bytes, %v", len(got), err)
	}
	if client.LastSequence() != 2 || !client.LastWasCompressed() {
		t.Fatalf("response frames end at seq %d", client.LastSequence())
	}

	// A response frame out of sequence is refused by a client.
	client.BeginRequest()
	bad := NewCompressor(CompressNone).AppendFrame(nil, 5, []byte{1, 0, 0, 1, 0})
	c := NewCompressedFramer(bytes.NewReader(bad), io.Discard, FramerClient, CompressNone)
	if _, err := c.ReadFrame(); !errors.Is(err, ErrPacketSequence) {
		t.Fatalf("out-of-order frame: %v", err)
	}
}

func BenchmarkCompressStoredFrame(b *testing.B) {
	c := NewCompressor(CompressStored)
	data := make([]byte, 16<<10)
	buf := make([]byte, 0, 32<<10)
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	for b.Loop() {
		buf = c.AppendFrame(buf[:0], 0, data)
	}
}
