package mysqlproto

import "testing"

// FuzzReadAt drives the positional readers every decoder is built from
// with arbitrary positions, negative ones included: they report false
// rather than panic, never return a position before pos or past the input,
// and never a slice longer than the input.
func FuzzReadAt(f *testing.F) {
	f.Add([]byte{0xfc, 1, 0, 'a', 0, 1, 2, 3, 4}, 0, 3)
	f.Add([]byte{0x81, 0x80, 0x01, 0}, 1, 2)
	f.Add([]byte{}, -1, -1)
	f.Add([]byte{0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01}, 0, 1<<30)
	f.Fuzz(func(t *testing.T, b []byte, pos, n int) {
		check := func(name string, s []byte, next int, ok bool) {
			if !ok {
				return
			}
			if next < pos || next > len(b) || len(s) > len(b) {
				t.Fatalf("%s at %d of %d: next %d, %d bytes", name, pos, len(b), next, len(s))
			}
		}
		_, next, ok := ReadLenEncInt(b, pos)
		check("ReadLenEncInt", nil, next, ok)
		s, next, ok := ReadLenEncString(b, pos)
		check("ReadLenEncString", s, next, ok)
		next, ok = SkipLenEncString(b, pos)
		check("SkipLenEncString", nil, next, ok)
		s, next, ok = ReadNullString(b, pos)
		check("ReadNullString", s, next, ok)
		s, next, ok = ReadFixed(b, pos, n)
		check("ReadFixed", s, next, ok)
		if ok && len(s) != n {
			t.Fatalf("ReadFixed(%d) returned %d bytes", n, len(s))
		}
		_, next, ok = ReadUint16(b, pos)
		check("ReadUint16", nil, next, ok)
		_, next, ok = ReadUint32(b, pos)
		check("ReadUint32", nil, next, ok)
		v, next, ok := ReadOBVarint(b, pos)
		check("ReadOBVarint", nil, next, ok)
		if ok {
			if v2, _, ok := ReadOBVarint(AppendOBVarint(nil, v), 0); !ok || v2 != v {
				t.Fatalf("varint %d round trip: %d %v", v, v2, ok)
			}
		}
		_, s, next, ok = ReadOB20ExtraItem(b, pos)
		check("ReadOB20ExtraItem", s, next, ok)
		k, s, next, ok := ReadOB20ExtraOldItem(b, pos)
		check("ReadOB20ExtraOldItem", nil, next, ok)
		if ok && len(k)+len(s) > len(b) {
			t.Fatalf("old extra item of %d+%d bytes from %d", len(k), len(s), len(b))
		}
		o, next, ok := ReadOBObj(b, pos)
		check("ReadOBObj", o.Bytes, next, ok)
		if len(b) >= HeaderLen {
			if l, _ := ParseHeader(b); l > MaxPayloadLen {
				t.Fatalf("header length %d", l)
			}
		}
		if len(b) >= CompressedHeaderLen {
			if c, _, u := ParseCompressedHeader(b); c > MaxPayloadLen || u > MaxPayloadLen {
				t.Fatalf("compressed header lengths %d %d", c, u)
			}
		}
		_ = IsSSLRequest(b)
		_ = IsEOFPacket(b)
	})
}
