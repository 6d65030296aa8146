package mysqlproto

import (
	"bytes"
	"encoding/hex"
	"errors"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// updateOB20 rewrites testdata/ob20_*.hex from the encoders. The files hold
// the vectors of ob20-protocol.md §13; regenerate them only when the spec
// changes, and review the diff against the spec by hand.
var updateOB20 = flag.Bool("update-ob20", false, "rewrite testdata/ob20_*.hex from the encoders")

// readHexFile reads a testdata file of hex bytes; '#' starts a comment.
func readHexFile(t testing.TB, name string) []byte {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	var digits strings.Builder
	for _, line := range strings.Split(string(raw), "\n") {
		if i := strings.IndexByte(line, '#'); i >= 0 {
			line = line[:i]
		}
		digits.WriteString(strings.Join(strings.Fields(line), ""))
	}
	b, err := hex.DecodeString(digits.String())
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return b
}

// writeHexFile replaces the hex bytes of a testdata file, keeping its
// comment lines.
func writeHexFile(t *testing.T, name string, b []byte) {
	t.Helper()
	path := filepath.Join("testdata", name)
	old, _ := os.ReadFile(path)
	var out strings.Builder
	for _, line := range strings.Split(string(old), "\n") {
		if strings.HasPrefix(line, "#") {
			out.WriteString(line + "\n")
		}
	}
	for i := 0; i < len(b); i += 16 {
		row := b[i:min(i+16, len(b))]
		for j, c := range row {
			if j > 0 {
				out.WriteByte(' ')
			}
			out.WriteString(hex.EncodeToString([]byte{c}))
		}
		out.WriteByte('\n')
	}
	if err := os.WriteFile(path, []byte(out.String()), 0o644); err != nil {
		t.Fatal(err)
	}
}

func selectOnePacket() []byte {
	p, _ := AppendPacket(nil, 0, append([]byte{byte(ComQuery)}, "select 1"...))
	return p
}

// ob20Vector describes one §13 frame by its fields, so that the encoder can
// rebuild it and the decoder's output can be compared with it.
type ob20Vector struct {
	file      string
	hdr       OB20Header
	extra     []byte
	packets   []byte
	headerCRC uint16
	bodyCRC   uint32
}

func ob20Vectors() []ob20Vector {
	okPacket, _ := AppendPacket(nil, 1, AppendOK(nil, OK{Status: StatusAutocommit}, ClientProtocol41))
	traceNew := AppendOB20ExtraItem(nil, OB20ExtraTraceInfo, []byte("client_ip=127.0.0.1"))
	traceOld := AppendOB20ExtraOldItem(nil, OB20ExtraKeyTraceInfo, []byte("client_ip=127.0.0.1"))
	var rs []byte
	rs, _ = AppendPacket(rs, 1, []byte{1})
	col := Column{Name: "1", Charset: CharsetBinary, Length: 1, Type: TypeLongLong, Flags: FlagNotNull | FlagBinary}
	rs, _ = AppendPacket(rs, 2, col.Append(nil))
	rs, _ = AppendPacket(rs, 3, AppendEOF(nil, 0, StatusAutocommit))
	rs, _ = AppendPacket(rs, 4, AppendTextValue(nil, "1"))
	rs, _ = AppendPacket(rs, 5, AppendEOF(nil, 0, StatusAutocommit))
	return []ob20Vector{
		{file: "ob20_v1.hex", hdr: OB20Header{ConnectionID: 12345, RequestID: 1}, packets: selectOnePacket(),
			headerCRC: 0x26DD, bodyCRC: 0xAE6CE96E},
		{file: "ob20_v2.hex", hdr: OB20Header{ConnectionID: 12345, RequestID: 1, Flags: OB20LastPacket},
			packets: selectOnePacket(), headerCRC: 0xC4DC, bodyCRC: 0xAE6CE96E},
		{file: "ob20_v3.hex", hdr: OB20Header{CompressedSeq: 1, ConnectionID: 12345, RequestID: 1, Seq: 1,
			Flags: OB20LastPacket}, packets: okPacket, headerCRC: 0xD240, bodyCRC: 0x1C3A02F2},
		{file: "ob20_v4.hex", hdr: OB20Header{ConnectionID: 0x0A0B0C0D, RequestID: 7,
			Flags: OB20ExtraInfoExist | OB20LastPacket | OB20NewExtraInfo}, extra: traceNew, packets: selectOnePacket()},
		{file: "ob20_v5.hex", hdr: OB20Header{ConnectionID: 0x0A0B0C0D, RequestID: 7,
			Flags: OB20ExtraInfoExist | OB20LastPacket}, extra: traceOld, packets: selectOnePacket()},
		{file: "ob20_v6.hex", hdr: OB20Header{ConnectionID: 12345, RequestID: 9127380, Flags: OB20LastPacket},
			packets: selectOnePacket(), bodyCRC: 0xAE6CE96E},
		{file: "ob20_v7.hex", hdr: OB20Header{CompressedSeq: 1, ConnectionID: 12345, RequestID: 0x8B45D4, Seq: 1,
			Flags: OB20LastPacket}, packets: rs},
	}
}

// TestOB20GoldenVectors checks every OB20 frame of the spec byte for byte:
// the encoder rebuilds it from its fields, and the decoder recovers the
// fields from the bytes.
func TestOB20GoldenVectors(t *testing.T) {
	for _, v := range ob20Vectors() {
		t.Run(v.file, func(t *testing.T) {
			got := AppendOB20Frame(nil, v.hdr, v.extra, v.packets)
			if *updateOB20 {
				writeHexFile(t, v.file, got)
			}
			want := readHexFile(t, v.file)
			if !bytes.Equal(got, want) {
				t.Fatalf("encoded frame differs\n got %x\nwant %x", got, want)
			}
			h, payload, n, err := ParseOB20Frame(want)
			if err != nil {
				t.Fatal(err)
			}
			if n != len(want) {
				t.Errorf("n = %d, want %d", n, len(want))
			}
			wantHdr := v.hdr
			wantHdr.PayloadLen = uint32(len(payload))
			wantHdr.HeaderChecksum = h.HeaderChecksum
			if h != wantHdr {
				t.Errorf("header = %+v, want %+v", h, wantHdr)
			}
			if v.headerCRC != 0 && h.HeaderChecksum != v.headerCRC {
				t.Errorf("header checksum = %#04x, want %#04x", h.HeaderChecksum, v.headerCRC)
			}
			if sum := CRC32C(0, payload); v.bodyCRC != 0 && sum != v.bodyCRC {
				t.Errorf("payload checksum = %#08x, want %#08x", sum, v.bodyCRC)
			}
			extra, packets, ok := SplitOB20Payload(h.Flags, payload)
			if !ok || !bytes.Equal(extra, v.extra) || !bytes.Equal(packets, v.packets) {
				t.Errorf("split payload: extra %x packets %x ok %v", extra, packets, ok)
			}
			// The same frame through PutOB20Header around a payload placed
			// by the caller.
			buf := make([]byte, OB20FrameHeaderLen, n)
			buf = append(buf, payload...)
			hh := v.hdr
			hh.PayloadLen = uint32(len(payload))
			PutOB20Header(buf, hh)
			if !bytes.Equal(buf[:OB20FrameHeaderLen], want[:OB20FrameHeaderLen]) {
				t.Errorf("PutOB20Header = %x, want %x", buf[:OB20FrameHeaderLen], want[:OB20FrameHeaderLen])
			}
		})
	}
}

func TestOB20ExtraInfoVectors(t *testing.T) {
	for _, tc := range []struct {
		file      string
		newFormat bool
	}{{"ob20_v4.hex", true}, {"ob20_v5.hex", false}} {
		h, payload, _, err := ParseOB20Frame(readHexFile(t, tc.file))
		if err != nil {
			t.Fatal(err)
		}
		if h.Flags.Has(OB20NewExtraInfo) != tc.newFormat {
			t.Fatalf("%s: flags %v", tc.file, h.Flags)
		}
		extra, _, _ := SplitOB20Payload(h.Flags, payload)
		it := OB20ExtraItems(extra, tc.newFormat)
		typ, value, ok := it.Next()
		if !ok || typ != OB20ExtraTraceInfo || string(value) != "client_ip=127.0.0.1" {
			t.Errorf("%s: item = %d %q %v", tc.file, typ, value, ok)
		}
		if !tc.newFormat && string(it.Key()) != OB20ExtraKeyTraceInfo {
			t.Errorf("%s: key %q", tc.file, it.Key())
		}
		if _, _, ok := it.Next(); ok || it.Malformed() {
			t.Errorf("%s: expected clean end", tc.file)
		}
	}
}

func TestOB20RejectsBadFrames(t *testing.T) {
	good := readHexFile(t, "ob20_v1.hex")
	flip := func(i int) []byte {
		b := bytes.Clone(good)
		b[i] ^= 0x01
		return b
	}
	for _, tc := range []struct {
		name string
		b    []byte
		want error
	}{
		{"header byte", flip(12), ErrOB20HeaderChecksum},
		{"header checksum", flip(29), ErrOB20HeaderChecksum},
		{"payload byte", flip(36), ErrOB20PayloadChecksum},
		{"trailer", flip(len(good) - 1), ErrOB20PayloadChecksum},
		{"magic", func() []byte { b := bytes.Clone(good); b[7] = 0; b[29], b[30] = 0, 0; return b }(), ErrOB20Malformed},
		{"compressed", func() []byte { b := bytes.Clone(good); b[4] = 1; return b }(), ErrOB20Compressed},
		{"length mismatch", func() []byte { b := bytes.Clone(good); b[0]++; b[29], b[30] = 0, 0; return b }(), ErrOB20Malformed},
		{"truncated", good[:len(good)-1], ErrOB20Truncated},
		{"short header", good[:20], ErrOB20Truncated},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if _, _, _, err := ParseOB20Frame(tc.b); !errors.Is(err, tc.want) {
				t.Fatalf("err = %v, want %v", err, tc.want)
			}
		})
	}
	// Zero checksums mean "not computed" and are accepted.
	b := bytes.Clone(good)
	b[29], b[30] = 0, 0
	copy(b[len(b)-4:], []byte{0, 0, 0, 0})
	if _, _, _, err := ParseOB20Frame(b); err != nil {
		t.Fatalf("zero checksums: %v", err)
	}
}

func TestOB20SplitPayloadBounds(t *testing.T) {
	for _, p := range [][]byte{nil, {1, 0, 0}, {5, 0, 0, 0, 1}, {0xff, 0xff, 0xff, 0xff}} {
		if _, _, ok := SplitOB20Payload(OB20ExtraInfoExist, p); ok {
			t.Errorf("SplitOB20Payload(%x) accepted", p)
		}
	}
	extra, packets, ok := SplitOB20Payload(OB20ExtraInfoExist, []byte{0, 0, 0, 0, 9})
	if !ok || len(extra) != 0 || !bytes.Equal(packets, []byte{9}) {
		t.Errorf("empty extra: %x %x %v", extra, packets, ok)
	}
}

func TestOB20FlagsAndCapabilityString(t *testing.T) {
	if got := (OB20ExtraInfoExist | OB20LastPacket | 0x100).String(); got != "EXTRA_INFO_EXIST|LAST_PACKET|0x100" {
		t.Errorf("flags = %q", got)
	}
	c, ok := ParseOBCapability("33024")
	if !ok || c != OBCapProtocolV2|OBCapProxyNewExtraInfo || c.String() != "OB_PROTOCOL_V2|PROXY_NEW_EXTRA_INFO" {
		t.Errorf("capability = %v %v", c, ok)
	}
	// §11.2: libobclient 2.2.10 asks 1360128; ODP grants 33024.
	if got := OBCapability(1360128) & OBProxyDefaultCapability; got != 33024 {
		t.Errorf("granted = %d", got)
	}
	if FormatOBCapability(10206039) != "10206039" {
		t.Error("format")
	}
}
