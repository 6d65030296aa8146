package mysqlproto

import (
	"bytes"
	"strconv"
	"testing"
)

// BenchmarkReadPacket reads one logical packet of each size from memory,
// the way the handshake and the internal client read: the PacketIO is
// reused, so steady reads of a size it has seen do not allocate.
func BenchmarkReadPacket(b *testing.B) {
	for _, size := range []int{64, 4 << 10, 64 << 10, 1 << 20} {
		wire, _ := AppendPacket(nil, 0, bytes.Repeat([]byte{'x'}, size))
		b.Run(strconv.Itoa(size), func(b *testing.B) {
			r := bytes.NewReader(wire)
			p := NewPacketIO(r, nil)
			b.SetBytes(int64(size))
			b.ReportAllocs()
			for b.Loop() {
				r.Reset(wire)
				p.ResetSequence()
				if _, err := p.ReadPacket(); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkReadPacketFresh reads one small packet with a new PacketIO each
// time, as a login does.
func BenchmarkReadPacketFresh(b *testing.B) {
	wire, _ := AppendPacket(nil, 1, bytes.Repeat([]byte{'x'}, 180))
	r := bytes.NewReader(wire)
	b.ReportAllocs()
	for b.Loop() {
		r.Reset(wire)
		p := NewPacketIO(r, nil)
		p.SetSequence(1)
		if _, err := p.ReadPacket(); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkCompressedFramerRead reads one frame, raw or deflated, with a
// reused framer.
func BenchmarkCompressedFramerRead(b *testing.B) {
	for _, tc := range []struct {
		name  string
		level int
		size  int
	}{{"raw200", CompressNone, 200}, {"zlib64K", 1, 64 << 10}} {
		wire := NewCompressor(tc.level).AppendFrame(nil, 0, bytes.Repeat([]byte("select 1;"), tc.size/9))
		b.Run(tc.name, func(b *testing.B) {
			r := bytes.NewReader(wire)
			f := NewCompressedFramer(r, nil, FramerServer, tc.level)
			b.SetBytes(int64(tc.size))
			b.ReportAllocs()
			for b.Loop() {
				r.Reset(wire)
				if _, err := f.ReadFrame(); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
