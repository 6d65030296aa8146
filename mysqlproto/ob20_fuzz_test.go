package mysqlproto

import (
	"bytes"
	"io"
	"testing"
)

// Fuzz targets for the OB20, ObObj and compressed-protocol decoders. Seeds
// are the §13 vectors (added in each target from testdata) and frames built
// by the encoders.

func ob20Seeds(f *testing.F) [][]byte {
	var seeds [][]byte
	for _, name := range []string{"ob20_v1.hex", "ob20_v2.hex", "ob20_v3.hex", "ob20_v4.hex",
		"ob20_v5.hex", "ob20_v6.hex", "ob20_v7.hex"} {
		seeds = append(seeds, readHexFile(f, name))
	}
	return seeds
}

func FuzzOB20Frame(f *testing.F) {
	for _, s := range ob20Seeds(f) {
		f.Add(s)
	}
	f.Add(AppendOB20Frame(nil, OB20Header{ConnectionID: 1, RequestID: 0xffffff, Seq: 255, Flags: 0xffffffff}, []byte{}, nil))
	f.Add([]byte{0x1c, 0, 0, 0, 0, 0, 0})
	f.Fuzz(func(t *testing.T, b []byte) {
		h, payload, n, err := ParseOB20Frame(b)
		if err != nil {
			return
		}
		if n > len(b) || len(payload) != int(h.PayloadLen) {
			t.Fatalf("n %d payload %d of %d bytes", n, len(payload), len(b))
		}
		extra, packets, ok := SplitOB20Payload(h.Flags, payload)
		if !ok {
			return
		}
		// Re-encoding the decoded fields gives the same frame when the
		// input's checksums were filled in.
		re := AppendOB20Frame(nil, h, extra, packets)
		if h.HeaderChecksum != 0 && !bytes.Equal(re[:len(re)-4], b[:n-4]) {
			t.Fatalf("re-encoded header or payload differs\n in %x\nout %x", b[:n], re)
		}
		it := OB20ExtraItems(extra, h.Flags.Has(OB20NewExtraInfo))
		for {
			if _, v, more := it.Next(); !more {
				break
			} else if len(v) > len(extra) {
				t.Fatal("extra value past block")
			}
		}
	})
}

// FuzzOB20FramerRead drives the streaming reader with arbitrary bytes.
func FuzzOB20FramerRead(f *testing.F) {
	for _, s := range ob20Seeds(f) {
		f.Add(s, false)
	}
	f.Add(append(readHexFile(f, "ob20_v1.hex"), readHexFile(f, "ob20_v1.hex")...), true)
	f.Fuzz(func(t *testing.T, b []byte, client bool) {
		role := FramerServer
		if client {
			role = FramerClient
		}
		fr := NewOB20Framer(bytes.NewReader(b), io.Discard, role, 0)
		var sink [64]byte
		for range 8 {
			if _, err := fr.Read(sink[:]); err != nil {
				return
			}
		}
		if client {
			_ = fr.FinishResponse()
		}
	})
}

func FuzzOB20ExtraInfo(f *testing.F) {
	f.Add(AppendOB20ExtraItem(AppendOB20ExtraItem(nil, OB20ExtraTraceInfo, []byte("client_ip=1")), OB20ExtraSessInfo, []byte{4, 0, 1, 0, 0, 0, 9}), true)
	f.Add(AppendOB20ExtraOldItem(nil, OB20ExtraKeyTraceInfo, []byte("client_ip=127.0.0.1")), false)
	f.Add([]byte{0xd1, 0x07, 0xff, 0xff, 0xff, 0xff}, true)
	f.Add([]byte{22, 2, 45, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01}, false)
	f.Fuzz(func(t *testing.T, b []byte, newFormat bool) {
		it := OB20ExtraItems(b, newFormat)
		var rebuilt []byte
		for {
			typ, v, ok := it.Next()
			if !ok {
				break
			}
			if len(v) > len(b) {
				t.Fatal("value past input")
			}
			if newFormat {
				rebuilt = AppendOB20ExtraItem(rebuilt, typ, v)
			}
		}
		if newFormat && !it.Malformed() && !bytes.Equal(rebuilt, b) {
			t.Fatalf("new-format round trip differs: %x vs %x", rebuilt, b)
		}
	})
}

func FuzzOB20Obj(f *testing.F) {
	f.Add(AppendOBRowkey(nil, OBIntValue(-5), OBVarcharValue("abc"), OBMaxValue))
	f.Add(AppendOBRow(nil, OBIntValue(7)))
	f.Add(AppendOBRowkey(nil, OBObj{Meta: OBObjMeta{Type: OBTypeDate, CollationLevel: 5, Collation: 63, Scale: -1}, Int: -1},
		OBObj{Meta: OBObjMeta{Type: OBTypeDatetime, CollationLevel: 5, Collation: 63}, Int: 1709214310000000},
		OBObj{Meta: OBObjMeta{Type: OBTypeDecimalInt, CollationLevel: 5, Collation: 63, Scale: 2}, Bytes: []byte{0xd2, 0x04, 0, 0}}))
	f.Add([]byte{1, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01})
	f.Fuzz(func(t *testing.T, b []byte) {
		if o, pos, ok := ReadOBObj(b, 0); ok {
			if pos > len(b) || len(o.Bytes) > len(b) {
				t.Fatal("read past input")
			}
			o2, _, ok := ReadOBObj(AppendOBObj(nil, o), 0)
			if !ok || o2.Meta != o.Meta || o2.Int != o.Int || !bytes.Equal(o2.Bytes, o.Bytes) {
				t.Fatalf("round trip %+v -> %+v", o, o2)
			}
		}
		_, _, _ = ReadOBRowkey(b, 0, nil, 64)
		_, _, _ = ReadOBRow(b, 0, nil, 64)
	})
}

func FuzzCompressedFrame(f *testing.F) {
	f.Add(readHexFile(f, "ob20_v8.hex"))
	f.Add(NewCompressor(6).AppendFrame(nil, 3, bytes.Repeat([]byte("select 1;"), 20)))
	f.Add(NewCompressor(CompressNone).AppendFrame(nil, 0, []byte{1, 0, 0, 0, 1}))
	f.Add([]byte{2, 0, 0, 0, 0xff, 0xff, 0xff, 0x78, 0x9c})
	f.Fuzz(func(t *testing.T, b []byte) {
		var d Decompressor
		if _, payload, uncompLen, n, ok := ParseCompressedFrame(b); ok {
			if n > len(b) {
				t.Fatal("frame past input")
			}
			if out, err := d.AppendInflated(nil, payload, uncompLen); err == nil && uncompLen != 0 && len(out) != uncompLen {
				t.Fatalf("inflated %d bytes, header says %d", len(out), uncompLen)
			}
		}
		fr := NewCompressedFramer(bytes.NewReader(b), io.Discard, FramerServer, CompressNone)
		var sink [64]byte
		for range 4 {
			if _, err := fr.Read(sink[:]); err != nil {
				return
			}
		}
	})
}

// FuzzOB20AcceptFrame checks that a frame taken in by AcceptFrame is
// judged exactly as ReadFrame judges the same bytes read from a stream.
func FuzzOB20AcceptFrame(f *testing.F) {
	for _, s := range ob20Seeds(f) {
		f.Add(s, false, false)
		f.Add(s, true, true)
	}
	f.Fuzz(func(t *testing.T, b []byte, client, verify bool) {
		n, ok := OB20FrameLen(b)
		if !ok || n > len(b) {
			return
		}
		role := FramerServer
		if client {
			role = FramerClient
		}
		streamed := NewOB20Framer(bytes.NewReader(b[:n]), io.Discard, role, 0)
		taken := NewOB20Framer(nil, io.Discard, role, 0)
		streamed.SetVerify(verify)
		taken.SetVerify(verify)
		h1, e1, p1, err1 := streamed.ReadFrame()
		h2, e2, p2, err2 := taken.AcceptFrame(b[:n])
		if (err1 == nil) != (err2 == nil) {
			t.Fatalf("ReadFrame: %v, AcceptFrame: %v", err1, err2)
		}
		if err1 != nil {
			return
		}
		if h1 != h2 || !bytes.Equal(e1, e2) || (e1 == nil) != (e2 == nil) || !bytes.Equal(p1, p2) {
			t.Fatalf("ReadFrame %+v %x %x, AcceptFrame %+v %x %x", h1, e1, p1, h2, e2, p2)
		}
		if streamed.NextSequence() != taken.NextSequence() {
			t.Fatalf("sequence %d after ReadFrame, %d after AcceptFrame", streamed.NextSequence(), taken.NextSequence())
		}
	})
}
