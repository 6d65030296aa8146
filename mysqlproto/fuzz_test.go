package mysqlproto

import (
	"bytes"
	"testing"
)

// The fuzz targets below check that decoders never panic, never read past
// their input and never allocate from a lying length field; where an encoder
// exists, decode(encode(x)) must equal x. `go test` runs the seeds;
// `make fuzz` runs each target for a while.

func FuzzLenEnc(f *testing.F) {
	for _, s := range [][]byte{{0}, {0xfa}, {0xfc, 1, 2}, {0xfd, 1, 2, 3}, {0xfe, 1, 2, 3, 4, 5, 6, 7, 8}, {0xfb}, {0xff}, {0xfe, 1}} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		if v, pos, ok := ReadLenEncInt(b, 0); ok {
			if pos > len(b) {
				t.Fatalf("pos %d past %d", pos, len(b))
			}
			enc := AppendLenEncInt(nil, v)
			if v2, _, ok := ReadLenEncInt(enc, 0); !ok || v2 != v {
				t.Fatalf("round trip %d", v)
			}
		}
		if s, pos, ok := ReadLenEncString(b, 0); ok && (pos > len(b) || len(s) > len(b)) {
			t.Fatal("string past input")
		}
		_, _, _ = ReadNullString(b, 0)
	})
}

func FuzzReadPacket(f *testing.F) {
	f.Add([]byte{1, 0, 0, 0, 3})
	f.Add([]byte{0, 0, 0, 0})
	f.Add([]byte{0xff, 0xff, 0xff, 0, 1, 2})
	f.Add([]byte{2, 0, 0, 1, 1})
	f.Fuzz(func(t *testing.T, b []byte) {
		p := NewPacketIO(bytes.NewReader(b), nil)
		p.SetMaxPacket(1 << 16)
		for range 4 {
			payload, err := p.ReadPacket()
			if err != nil {
				return
			}
			if len(payload) > len(b) {
				t.Fatal("payload longer than input")
			}
		}
	})
}

func FuzzParseHandshake(f *testing.F) {
	f.Add((&Handshake{ServerVersion: "5.6.25", ConnectionID: 1, Capability: ProxyCapabilities & 0xffffffff,
		AuthData: seqScramble(), AuthPlugin: AuthNativePassword}).Append(nil))
	f.Add((&Handshake{ServerVersion: "5.5.5-10.11-MariaDB", Capability: ProxyCapabilities &^ ClientMySQL,
		AuthData: seqScramble(), AuthPlugin: AuthCachingSha2}).Append(nil))
	f.Add([]byte{10, 'x', 0})
	f.Fuzz(func(t *testing.T, b []byte) {
		h, err := ParseHandshake(b)
		if err != nil {
			return
		}
		h2, err := ParseHandshake(h.Append(nil))
		if err != nil {
			t.Fatalf("re-encoded handshake does not parse: %v", err)
		}
		if h2.ConnectionID != h.ConnectionID || h2.ServerVersion != h.ServerVersion {
			t.Fatal("round trip changed fields")
		}
	})
}

func FuzzParseHandshakeResponse(f *testing.F) {
	f.Add((&HandshakeResponse{Capability: DefaultClientCapability, User: "root@sys#c:1",
		AuthResponse: seqScramble(), Database: "d", AuthPlugin: AuthNativePassword,
		Attrs: []ConnAttr{{"a", "b"}}}).Append(nil))
	f.Add(AppendSSLRequest(nil, DefaultClientCapability, 1<<24, 45))
	f.Add((&HandshakeResponse{Capability: ClientProtocol41 | ClientSecureConnection, User: "u", AuthResponse: []byte{1, 2}}).Append(nil))
	for _, a := range attrSeeds() {
		f.Add((&HandshakeResponse{Capability: DefaultClientCapability, User: "u", AuthResponse: seqScramble(),
			AuthPlugin: AuthNativePassword, Attrs: a}).Append(nil))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		r, err := ParseHandshakeResponse(b)
		if err != nil {
			return
		}
		if len(r.User) > len(b) || len(r.AuthResponse) > len(b) {
			t.Fatal("fields longer than input")
		}
		if len(r.Attrs) > MaxConnectAttrs {
			t.Fatalf("%d attributes, cap %d", len(r.Attrs), MaxConnectAttrs)
		}
		_ = IsSSLRequest(b)
		again, err := ParseHandshakeResponse(r.Append(nil))
		if err != nil {
			t.Fatalf("re-encoded response does not parse: %v", err)
		}
		if again.User != r.User || !bytes.Equal(again.AuthResponse, r.AuthResponse) || len(again.Attrs) != len(r.Attrs) {
			t.Fatalf("round trip changed fields: %+v -> %+v", r, again)
		}
		for i := range r.Attrs {
			if again.Attrs[i] != r.Attrs[i] {
				t.Fatalf("attribute %d: %q -> %q", i, r.Attrs[i], again.Attrs[i])
			}
		}
		b2 := append([]byte(nil), b...)
		if PatchResponseCapability(b2, r.Capability) {
			if again, err := ParseHandshakeResponse(b2); err != nil || again.Capability != r.Capability {
				t.Fatalf("patched with its own capabilities: %v, %v", err, again)
			}
		}
	})
}

func FuzzParseOK(f *testing.F) {
	f.Add(AppendOK(nil, OK{AffectedRows: 1, Status: StatusAutocommit,
		SessionState: AppendSystemVariableState(nil, "a", "b")}, ClientSessionTrack), true)
	f.Add(AppendOK(nil, OK{Info: []byte("x")}, 0), false)
	f.Add(AppendOKAsEOF(nil, OK{}, ClientSessionTrack), true)
	f.Fuzz(func(t *testing.T, b []byte, track bool) {
		caps := Capability(0)
		if track {
			caps = ClientSessionTrack
		}
		ok, good := ParseOK(b, caps)
		if !good {
			return
		}
		it := SessionStates(ok.SessionState)
		for {
			typ, data, more := it.Next()
			if !more {
				break
			}
			if typ == SessionTrackSystemVariables {
				for pos := 0; pos < len(data); {
					_, _, next, good := ParseSystemVariable(data, pos)
					if !good {
						break
					}
					pos = next
				}
			}
		}
	})
}

func FuzzParseERR(f *testing.F) {
	f.Add(AppendERR(nil, 1045, "28000", "denied"))
	f.Add([]byte{0xff, 1, 2, 'x'})
	f.Add(AppendEOF(nil, 1, 2))
	f.Fuzz(func(t *testing.T, b []byte) {
		if e, ok := ParseERR(b); ok && len(e.Message) > len(b) {
			t.Fatal("message past input")
		}
		_, _ = ParseEOF(b)
		_, _ = ParseAuthSwitchRequest(b)
		_, _ = ParseColumn(b)
		vals, nulls := make([][]byte, 3), make([]bool, 3)
		_ = ReadTextRow(b, vals, nulls)
	})
}

// FuzzResponseScanner feeds arbitrary server bytes, in arbitrary chunks, to
// the scanner: it must never panic, never consume more than it was given,
// and never ask for more than MaxInspectLen+HeaderLen contiguous bytes.
func FuzzResponseScanner(f *testing.F) {
	caps := ClientProtocol41 | ClientSessionTrack
	f.Add(new(wire).resultSet(2, 3, false, StatusAutocommit, []byte{1, 'a', 1, 'b'}).b, byte(ComQuery), false, uint8(5))
	f.Add(new(wire).resultSet(1, 1, true, 0, []byte{1, 'a'}).b, byte(ComStmtExecute), true, uint8(1))
	f.Add(new(wire).packet([]byte{0, 1, 0, 0, 0, 1, 0, 1, 0, 0, 0, 0}).b, byte(ComStmtPrepare), false, uint8(3))
	f.Add(new(wire).packet([]byte{0xfb, 'f'}).ok(0).b, byte(ComQuery), true, uint8(2))
	f.Add(new(wire).packet([]byte{0xfe, 'a', 0, 1}).ok(0).b, byte(ComChangeUser), true, uint8(9))
	f.Fuzz(func(t *testing.T, b []byte, cmd byte, dep bool, chunk uint8) {
		c := caps
		if dep {
			c |= ClientDeprecateEOF
		}
		var s ResponseScanner
		s.Reset(Command(cmd), c|MariaDBClientProgress, 0)
		step := int(chunk)%64 + 1
		var pending []byte
		in := b
		for range 10000 {
			n, ev := s.Scan(pending)
			if n < 0 || n > len(pending) {
				t.Fatalf("consumed %d of %d", n, len(pending))
			}
			pending = pending[n:]
			if ev == ScanError {
				return
			}
			if ev != ScanNeedMore {
				continue
			}
			if s.Want() > MaxInspectLen+HeaderLen {
				t.Fatalf("wants %d bytes", s.Want())
			}
			if len(in) == 0 {
				return
			}
			k := min(step, len(in))
			pending = append(pending, in[:k]...)
			in = in[k:]
		}
	})
}
