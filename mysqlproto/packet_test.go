package mysqlproto

import (
	"bytes"
	"errors"
	"io"
	"testing"
)

// TestPacketBoundaries checks the continuation rule at and around 2^24-1.
func TestPacketBoundaries(t *testing.T) {
	sizes := []int{0, 1, MaxPayloadLen - 1, MaxPayloadLen, MaxPayloadLen + 1, 2 * MaxPayloadLen, 2*MaxPayloadLen + 212}
	for _, n := range sizes {
		payload := bytes.Repeat([]byte{0xab}, n)
		var wire bytes.Buffer
		p := NewPacketIO(nil, &wire)
		p.WritePacket(payload)
		if err := p.Flush(); err != nil {
			t.Fatal(err)
		}
		full := n / MaxPayloadLen
		wantPackets := full + 1
		wantLen := n + HeaderLen*wantPackets
		if wire.Len() != wantLen {
			t.Fatalf("n=%d: wire length %d, want %d", n, wire.Len(), wantLen)
		}
		if p.Sequence() != uint8(wantPackets) {
			t.Fatalf("n=%d: next sequence %d, want %d", n, p.Sequence(), wantPackets)
		}
		if n%MaxPayloadLen == 0 && n > 0 {
			tail := wire.Bytes()[wire.Len()-HeaderLen:]
			if !bytes.Equal(tail, []byte{0, 0, 0, byte(full)}) {
				t.Fatalf("n=%d: missing trailing empty packet, tail %x", n, tail)
			}
		}
		r := NewPacketIO(&wire, nil)
		r.SetMaxPacket(3 * MaxPayloadLen)
		got, err := r.ReadPacket()
		if err != nil {
			t.Fatalf("n=%d: %v", n, err)
		}
		if !bytes.Equal(got, payload) {
			t.Fatalf("n=%d: payload differs (len %d)", n, len(got))
		}
		if wire.Len() != 0 {
			t.Fatalf("n=%d: %d bytes left unread", n, wire.Len())
		}
	}
}

func TestPacketSequenceAndLimits(t *testing.T) {
	wire := []byte{1, 0, 0, 5, 'x'}
	r := NewPacketIO(bytes.NewReader(wire), nil)
	if _, err := r.ReadPacket(); !errors.Is(err, ErrPacketSequence) {
		t.Fatalf("got %v, want sequence error", err)
	}
	big := []byte{0xff, 0xff, 0xff, 0}
	r = NewPacketIO(bytes.NewReader(big), nil)
	r.SetMaxPacket(1024)
	if _, err := r.ReadPacket(); !errors.Is(err, ErrPacketTooLarge) {
		t.Fatalf("got %v, want too large", err)
	}
	r = NewPacketIO(bytes.NewReader([]byte{5, 0, 0, 0, 'a'}), nil)
	if _, err := r.ReadPacket(); !errors.Is(err, io.ErrUnexpectedEOF) {
		t.Fatalf("got %v, want unexpected EOF", err)
	}
}
