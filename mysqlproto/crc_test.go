package mysqlproto

import (
	"math/rand/v2"
	"testing"
)

// Bit-at-a-time definitions of both CRCs, written from their parameters
// (reflected polynomials 0xA001 and 0x82F63B78, init 0, no final XOR), to
// check the table-driven versions independently.
func crc16Bitwise(crc uint16, p []byte) uint16 {
	for _, b := range p {
		crc ^= uint16(b)
		for range 8 {
			if crc&1 != 0 {
				crc = crc>>1 ^ 0xA001
			} else {
				crc >>= 1
			}
		}
	}
	return crc
}

func crc32cBitwise(crc uint32, p []byte) uint32 {
	for _, b := range p {
		crc ^= uint32(b)
		for range 8 {
			if crc&1 != 0 {
				crc = crc>>1 ^ 0x82F63B78
			} else {
				crc >>= 1
			}
		}
	}
	return crc
}

// TestCRCCheckValues uses the check values of ob20-protocol.md §5 and §13.2.
func TestCRCCheckValues(t *testing.T) {
	check := []byte("123456789")
	if got := CRC16(0, check); got != 0xBB3D {
		t.Errorf("CRC16(123456789) = %#04x, want 0xBB3D", got)
	}
	for _, tc := range []struct {
		in   []byte
		want uint32
	}{
		{check, 0x58E3FA20},
		{nil, 0},
		{[]byte{1}, 0xF26B8303},
		{[]byte{2}, 0xE13B70F7},
		{[]byte{3}, 0x1350F3F4},
	} {
		if got := CRC32C(0, tc.in); got != tc.want {
			t.Errorf("CRC32C(%x) = %#08x, want %#08x", tc.in, got, tc.want)
		}
	}
}

func TestCRCAgainstBitwiseAndChaining(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for n := range 300 {
		p := make([]byte, n)
		for i := range p {
			p[i] = byte(r.Uint32())
		}
		if a, b := CRC16(0, p), crc16Bitwise(0, p); a != b {
			t.Fatalf("CRC16 len %d: %#x vs bitwise %#x", n, a, b)
		}
		if a, b := CRC32C(0, p), crc32cBitwise(0, p); a != b {
			t.Fatalf("CRC32C len %d: %#x vs bitwise %#x", n, a, b)
		}
		cut := n / 3
		if CRC16(CRC16(0, p[:cut]), p[cut:]) != CRC16(0, p) {
			t.Fatalf("CRC16 does not chain at len %d", n)
		}
		if CRC32C(CRC32C(0, p[:cut]), p[cut:]) != CRC32C(0, p) {
			t.Fatalf("CRC32C does not chain at len %d", n)
		}
	}
}

func BenchmarkCRC32C(b *testing.B) {
	p := make([]byte, 16<<10)
	b.SetBytes(int64(len(p)))
	b.ReportAllocs()
	for b.Loop() {
		CRC32C(0, p)
	}
}
