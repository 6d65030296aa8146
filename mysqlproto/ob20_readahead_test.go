package mysqlproto

import (
	"bytes"
	"io"
	"testing"
)

// countingReader records the reads a framer makes.
type countingReader struct {
	r     io.Reader
	reads int
	asked []int // len(p) of each read
	taken int   // bytes returned
}

func (c *countingReader) Read(p []byte) (int, error) {
	c.reads++
	c.asked = append(c.asked, len(p))
	n, err := c.r.Read(p)
	c.taken += n
	return n, err
}

// responseFrames builds count response frames of request 5 on connection 9,
// each carrying one MySQL packet with a payload of size bytes.
func responseFrames(count, size int) []byte {
	var wire bytes.Buffer
	w := NewOB20Framer(nil, &wire, FramerServer, 9)
	w.requestID = 5
	w.nextSeq = 1
	for i := range count {
		pkt := AppendPacketForTest(bytes.Repeat([]byte{byte('a' + i%26)}, size))
		if err := w.WriteFrame(pkt, nil, OB20LastPacket); err != nil {
			panic(err)
		}
	}
	return wire.Bytes()
}

// clientAt returns a client framer expecting the frames responseFrames
// builds.
func clientAt(r io.Reader) *OB20Framer {
	f := NewOB20Framer(r, nil, FramerClient, 9)
	f.SetNextRequestID(5)
	f.BeginRequest()
	f.nextSeq = 1 // as after writing the request's one frame
	return f
}

// TestOB20FramerReadsFramesInOneRead: header and payload of a frame, and
// the frames after it when they have arrived, come with one read of the
// connection.
func TestOB20FramerReadsFramesInOneRead(t *testing.T) {
	wire := responseFrames(3, 100)
	cr := &countingReader{r: bytes.NewReader(wire)}
	f := clientAt(cr)
	for i := range 3 {
		_, _, pk, err := f.ReadFrame()
		if err != nil {
			t.Fatalf("frame %d: %v", i, err)
		}
		if len(pk) != HeaderLen+100 || pk[HeaderLen] != byte('a'+i) {
			t.Fatalf("frame %d: packets %q", i, pk)
		}
	}
	if cr.reads != 1 {
		t.Fatalf("%d reads for 3 frames that had all arrived (asked %v), want 1", cr.reads, cr.asked)
	}
	if f.Buffered() == 0 {
		t.Fatal("nothing buffered after ReadFrame, want the last frame's packets")
	}
}

// TestOB20FramerReadAheadIsBounded: no read asks for more than the
// read-ahead bound past what is unconsumed, or for more than the rest of a
// frame larger than that, so a slow reader leaves the rest in the kernel.
func TestOB20FramerReadAheadIsBounded(t *testing.T) {
	const ahead = 8 << 10
	small := responseFrames(200, 100)
	cr := &countingReader{r: bytes.NewReader(small)}
	f := clientAt(cr)
	f.SetReadBuffer(ahead, nil)
	if _, _, _, err := f.ReadFrame(); err != nil {
		t.Fatal(err)
	}
	if cr.taken > ahead {
		t.Fatalf("took %d bytes from the connection for one small frame, want at most %d", cr.taken, ahead)
	}
	for _, n := range cr.asked {
		if n > ahead {
			t.Fatalf("asked for %d bytes at once, want at most %d", n, ahead)
		}
	}

	big := append(responseFrames(1, 3*ahead), small...)
	cr = &countingReader{r: bytes.NewReader(big)}
	f = clientAt(cr)
	f.SetReadBuffer(ahead, nil)
	h, _, _, err := f.ReadFrame()
	if err != nil {
		t.Fatal(err)
	}
	if cr.taken > h.FrameLen() {
		t.Fatalf("took %d bytes from the connection for a %d-byte frame", cr.taken, h.FrameLen())
	}
}

// countingPool lends plain slices and counts what is out.
type countingPool struct{ out, gets int }

func (p *countingPool) Get(n int) []byte { p.out++; p.gets++; return make([]byte, n) }
func (p *countingPool) Put([]byte)       { p.out-- }

// TestOB20FramerPooledBuffer: a pooled read buffer is held only while
// bytes are buffered, and bytes read ahead count as buffered.
func TestOB20FramerPooledBuffer(t *testing.T) {
	wire := responseFrames(2, 100)
	pool := &countingPool{}
	f := clientAt(bytes.NewReader(wire))
	f.SetReadBuffer(0, pool)
	pio := NewPacketIO(f, nil)
	if _, err := pio.ReadPacket(); err != nil {
		t.Fatal(err)
	}
	if pool.out != 1 || f.Buffered() != len(wire)/2 {
		t.Fatalf("after the first frame: %d buffers out, %d bytes buffered; want 1 and the second frame's %d", pool.out, f.Buffered(), len(wire)/2)
	}
	pio.ResetSequence()
	if _, err := pio.ReadPacket(); err != nil {
		t.Fatal(err)
	}
	if pool.out != 0 || f.Buffered() != 0 {
		t.Fatalf("after the last frame: %d buffers out, %d bytes buffered; want none", pool.out, f.Buffered())
	}
	if pool.gets != 1 {
		t.Fatalf("%d buffers borrowed for two frames read at once, want 1", pool.gets)
	}
}

// TestOB20FramerTruncatedFrame: a connection that ends inside a frame is
// an unexpected EOF, also when the frame's start arrived in the same read
// as the previous one.
func TestOB20FramerTruncatedFrame(t *testing.T) {
	wire := responseFrames(2, 100)
	f := clientAt(bytes.NewReader(wire[:len(wire)-10]))
	if _, _, _, err := f.ReadFrame(); err != nil {
		t.Fatal(err)
	}
	if _, _, _, err := f.ReadFrame(); err != io.ErrUnexpectedEOF {
		t.Fatalf("truncated second frame: %v, want %v", err, io.ErrUnexpectedEOF)
	}
	f = clientAt(bytes.NewReader(nil))
	if _, _, _, err := f.ReadFrame(); err != io.EOF {
		t.Fatalf("empty connection: %v, want %v", err, io.EOF)
	}
}

// BenchmarkOB20FramerRead reads small response frames the way a proxy
// reads a server: header and payload of each.
func BenchmarkOB20FramerRead(b *testing.B) {
	frame := responseFrames(1, 200)
	r := bytes.NewReader(frame)
	f := clientAt(r)
	b.SetBytes(int64(len(frame)))
	b.ReportAllocs()
	for b.Loop() {
		r.Reset(frame)
		f.nextSeq = 1
		if _, _, _, err := f.ReadFrame(); err != nil {
			b.Fatal(err)
		}
	}
}
