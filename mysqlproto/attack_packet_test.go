package mysqlproto

import (
	"bytes"
	"errors"
	"runtime"
	"testing"
)

// Tests of PacketIO against peers that lie about lengths. A length read
// from the wire is a claim: memory must follow the bytes that arrived, not
// the length announced.

// errStalled stands for a peer that stopped sending: the read would block
// (or time out) from here on.
var errStalled = errors.New("peer stalled")

// stallingReader hands out its bytes in reads of at most step bytes (all at
// once when step is 0), then fails every read with errStalled. It counts
// the bytes taken.
type stallingReader struct {
	data  []byte
	step  int
	taken int
}

func (r *stallingReader) Read(p []byte) (int, error) {
	if len(r.data) == 0 {
		return 0, errStalled
	}
	if r.step > 0 && len(p) > r.step {
		p = p[:r.step]
	}
	n := copy(p, r.data)
	r.data = r.data[n:]
	r.taken += n
	return n, nil
}

// allocatedBytes reports the bytes f allocates on the heap, the least of a
// few runs (a background allocation during one run does not count).
func allocatedBytes(f func()) uint64 {
	var best uint64
	for i := range 5 {
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		f()
		runtime.ReadMemStats(&after)
		if d := after.TotalAlloc - before.TotalAlloc; i == 0 || d < best {
			best = d
		}
	}
	return best
}

// lyingLogin is the start of a login packet that announces announced
// payload bytes and carries sent of them.
func lyingLogin(announced, sent int) []byte {
	b := make([]byte, HeaderLen, HeaderLen+sent)
	PutHeader(b, announced, 1)
	return append(b, bytes.Repeat([]byte{'a'}, sent)...)
}

// TestReadPacketMemoryFollowsArrivedBytesNotAnnouncedLength is the attack
// found by hand: connections that announce a 1 MiB login and send 68
// bytes must not cost 1 MiB each. ReadPacket may allocate a few KiB ahead
// of the bytes that arrived, never the announced length.
func TestReadPacketMemoryFollowsArrivedBytesNotAnnouncedLength(t *testing.T) {
	const conns = 300
	wire := lyingLogin(1<<20, 68)
	var errs int
	got := allocatedBytes(func() {
		errs = 0
		for range conns {
			p := NewPacketIO(&stallingReader{data: wire}, nil)
			p.SetSequence(1)
			if _, err := p.ReadPacket(); errors.Is(err, errStalled) {
				errs++
			}
		}
	})
	if errs != conns {
		t.Fatalf("%d of %d reads ended with the stall, want all", errs, conns)
	}
	const perConn = 8 << 10 // the first step and the PacketIO itself
	if got > conns*perConn {
		t.Fatalf("%d connections announcing 1 MiB and sending 68 bytes allocated %d bytes (%d each), want at most %d each",
			conns, got, got/conns, perConn)
	}
}

// TestReadPacketGrowsWithArrivedBytes: while a large packet arrives in
// small reads, the buffer never holds more than about twice what arrived
// (plus the first step).
func TestReadPacketGrowsWithArrivedBytes(t *testing.T) {
	for _, sent := range []int{0, 1, 4 << 10, 100 << 10, 700 << 10} {
		r := &stallingReader{data: lyingLogin(MaxPayloadLen-1, sent), step: 1000}
		p := NewPacketIO(r, nil)
		p.SetSequence(1)
		if _, err := p.ReadPacket(); !errors.Is(err, errStalled) {
			t.Fatalf("sent %d: %v, want the stall", sent, err)
		}
		if limit := 2*sent + 2*packetReadStep; cap(p.rbuf) > limit {
			t.Fatalf("sent %d of %d announced bytes: buffer of %d bytes, want at most %d", sent, MaxPayloadLen-1, cap(p.rbuf), limit)
		}
		if r.taken != HeaderLen+sent {
			t.Fatalf("sent %d: took %d bytes", sent, r.taken)
		}
	}
}

// TestReadPacketLargeStillWhole: growing in steps still yields the whole
// packet, across continuation packets, and takes nothing of the next one.
func TestReadPacketLargeStillWhole(t *testing.T) {
	payload := make([]byte, MaxPayloadLen+300<<10)
	for i := range payload {
		payload[i] = byte(i * 7)
	}
	wire, _ := AppendPacket(nil, 0, payload)
	wire, _ = AppendPacket(wire, 0, []byte("next"))
	r := &stallingReader{data: wire, step: 60 << 10}
	p := NewPacketIO(r, nil)
	p.SetMaxPacket(2 * MaxPayloadLen)
	got, err := p.ReadPacket()
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, payload) {
		t.Fatalf("payload of %d bytes differs", len(got))
	}
	if want := len(wire) - HeaderLen - 4; r.taken != want {
		t.Fatalf("took %d bytes, want %d (nothing of the next packet)", r.taken, want)
	}
}

// TestReadPacketLoginCap: with the login cap the proxy applies, a packet
// announcing more is refused with ErrPacketTooLarge after its header,
// without reading (or allocating for) the rest; one at the cap is read.
func TestReadPacketLoginCap(t *testing.T) {
	for _, tc := range []struct {
		announced int
		err       error
	}{{MaxLoginPacket + 1, ErrPacketTooLarge}, {MaxPayloadLen, ErrPacketTooLarge}, {MaxLoginPacket, nil}} {
		r := &stallingReader{data: lyingLogin(tc.announced, min(tc.announced, MaxLoginPacket))}
		p := NewPacketIO(r, nil)
		p.SetMaxPacket(MaxLoginPacket)
		p.SetSequence(1)
		_, err := p.ReadPacket()
		if !errors.Is(err, tc.err) {
			t.Fatalf("announced %d: %v, want %v", tc.announced, err, tc.err)
		}
		if tc.err != nil && (r.taken != HeaderLen || cap(p.rbuf) != 0) {
			t.Fatalf("announced %d: took %d bytes and a %d-byte buffer before refusing, want the header only", tc.announced, r.taken, cap(p.rbuf))
		}
	}
	// A logical packet that reaches the cap through a continuation packet
	// is refused at the header of the packet that crosses it.
	wire := lyingLogin(MaxPayloadLen, MaxPayloadLen)
	wire = append(wire, 20, 0, 0, 2)
	r := &stallingReader{data: wire}
	p := NewPacketIO(r, nil)
	p.SetMaxPacket(MaxPayloadLen + 10)
	p.SetSequence(1)
	if _, err := p.ReadPacket(); !errors.Is(err, ErrPacketTooLarge) {
		t.Fatalf("continuation past the cap: %v, want %v", err, ErrPacketTooLarge)
	}
	if r.taken != len(wire) {
		t.Fatalf("continuation past the cap: took %d bytes, want the %d up to its header", r.taken, len(wire))
	}
}
