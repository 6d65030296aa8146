package mysqlproto

import (
	"bytes"
	"compress/zlib"
	"errors"
	"io"
	"testing"
)

// Tests of the compressed and OB20 framers against peers that lie about
// lengths: announced frame sizes and uncompressed lengths are claims.

// TestCompressedFramerMemoryFollowsArrivedBytes: a frame header that
// announces 16 MiB of payload, followed by 10 bytes and silence, costs a
// few KiB.
func TestCompressedFramerMemoryFollowsArrivedBytes(t *testing.T) {
	wire := make([]byte, CompressedHeaderLen, CompressedHeaderLen+10)
	PutCompressedHeader(wire, MaxPayloadLen, 0, 0)
	wire = append(wire, bytes.Repeat([]byte{1}, 10)...)
	got := allocatedBytes(func() {
		f := NewCompressedFramer(&stallingReader{data: wire}, io.Discard, FramerServer, CompressNone)
		if _, err := f.ReadFrame(); !errors.Is(err, errStalled) {
			t.Errorf("ReadFrame: %v, want the stall", err)
		}
	})
	if got > 16<<10 {
		t.Fatalf("a frame announcing 16 MiB with 10 bytes sent allocated %d bytes", got)
	}
}

// TestOB20FramerMemoryFollowsArrivedBytes: a well-formed OB20 header that
// announces a 16 MiB payload, followed by 100 bytes and silence, costs
// about the read-ahead, not the announced frame.
func TestOB20FramerMemoryFollowsArrivedBytes(t *testing.T) {
	hdr := make([]byte, OB20FrameHeaderLen)
	PutOB20Header(hdr, OB20Header{ConnectionID: 9, RequestID: 5, Seq: 1, PayloadLen: OB20MaxPayload})
	wire := append(hdr, bytes.Repeat([]byte{1}, 100)...)
	got := allocatedBytes(func() {
		f := clientAt(&stallingReader{data: wire})
		if _, _, _, err := f.ReadFrame(); !errors.Is(err, errStalled) {
			t.Errorf("ReadFrame: %v, want the stall", err)
		}
	})
	if got > 4*DefaultReadAhead {
		t.Fatalf("a frame announcing %d bytes with 100 sent allocated %d bytes", OB20MaxPayload, got)
	}
}

// TestOB20FramerGrowsWithArrivedBytes: while a large frame trickles in,
// the read buffer stays within about twice what arrived, and the frame
// still reads whole.
func TestOB20FramerGrowsWithArrivedBytes(t *testing.T) {
	wire := responseFrames(1, 3<<20)
	for _, sent := range []int{1000, 64 << 10, 1 << 20} {
		f := clientAt(&stallingReader{data: wire[:sent], step: 1500})
		if _, _, _, err := f.ReadFrame(); !errors.Is(err, errStalled) {
			t.Fatalf("sent %d: %v, want the stall", sent, err)
		}
		if limit := 2*sent + DefaultReadAhead; len(f.in.buf) > limit {
			t.Fatalf("sent %d of %d bytes: buffer of %d, want at most %d", sent, len(wire), len(f.in.buf), limit)
		}
	}
	f := clientAt(&stallingReader{data: wire, step: 1500})
	if _, _, pk, err := f.ReadFrame(); err != nil || len(pk) != HeaderLen+3<<20 {
		t.Fatalf("whole frame: %d packet bytes, %v", len(pk), err)
	}
}

// zlibOf deflates data at the best compression.
func zlibOf(data []byte) []byte {
	var b bytes.Buffer
	w, _ := zlib.NewWriterLevel(&b, zlib.BestCompression)
	_, _ = w.Write(data)
	_ = w.Close()
	return b.Bytes()
}

// TestInflateRejectsImpossibleLength: an uncompressed length more than
// deflate can yield from the payload is refused before inflating. Here
// 8 MiB of zeros deflate to about 8 KiB, and the header claims 16 MiB: an
// inflater that trusted the claim would produce 8 MiB before noticing.
func TestInflateRejectsImpossibleLength(t *testing.T) {
	payload := zlibOf(make([]byte, 8<<20))
	if len(payload)*maxDeflateRatio >= MaxPayloadLen {
		t.Fatalf("test stream of %d bytes could honestly yield 16 MiB", len(payload))
	}
	var err error
	got := allocatedBytes(func() {
		var d Decompressor
		_, err = d.AppendInflated(nil, payload, MaxPayloadLen)
	})
	if !errors.Is(err, ErrCompressedFrame) {
		t.Fatalf("AppendInflated: %v, want %v", err, ErrCompressedFrame)
	}
	if got > 64<<10 {
		t.Fatalf("refusing a %d-byte stream that claims %d bytes allocated %d bytes", len(payload), MaxPayloadLen, got)
	}
}

// TestInflateStopsAtClaimedLength: a zlib bomb whose header claims less
// than the stream yields is cut off at the claim (plus the inflater's own
// window), and is an error.
func TestInflateStopsAtClaimedLength(t *testing.T) {
	payload := zlibOf(make([]byte, 8<<20))
	const claim = 64 << 10
	var out []byte
	var err error
	got := allocatedBytes(func() {
		var d Decompressor
		out, err = d.AppendInflated(nil, payload, claim)
	})
	if !errors.Is(err, ErrCompressedFrame) || len(out) != claim {
		t.Fatalf("AppendInflated: %d bytes, %v; want %d and %v", len(out), err, claim, ErrCompressedFrame)
	}
	if got > 512<<10 {
		t.Fatalf("inflating a bomb cut at %d bytes allocated %d bytes", claim, got)
	}
	// The same stream framed: the framer reports the error too.
	frame := make([]byte, CompressedHeaderLen, CompressedHeaderLen+len(payload))
	PutCompressedHeader(frame, len(payload), 0, claim)
	frame = append(frame, payload...)
	f := NewCompressedFramer(bytes.NewReader(frame), io.Discard, FramerServer, CompressNone)
	if _, err := f.ReadFrame(); !errors.Is(err, ErrCompressedFrame) {
		t.Fatalf("framed bomb: %v, want %v", err, ErrCompressedFrame)
	}
}

// TestInflateHonestLengthsStillWork: the bounds do not refuse a stream
// that honestly inflates to its claim, at the highest ratio deflate
// reaches.
func TestInflateHonestLengthsStillWork(t *testing.T) {
	for _, n := range []int{1, 1000, MaxPayloadLen} {
		data := make([]byte, n)
		data[n-1] = 7
		var d Decompressor
		out, err := d.AppendInflated(nil, zlibOf(data), n)
		if err != nil || !bytes.Equal(out, data) {
			t.Fatalf("%d bytes: %d out, %v", n, len(out), err)
		}
	}
}
