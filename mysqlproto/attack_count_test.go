package mysqlproto

import (
	"bytes"
	"errors"
	"io"
	"strings"
	"testing"
)

// Tests of the caps on counts a peer controls.

// manyAttrs returns n connection attributes of one byte each.
func manyAttrs(n int) []ConnAttr {
	attrs := make([]ConnAttr, n)
	for i := range attrs {
		attrs[i] = ConnAttr{Key: string(rune('a' + i%26)), Value: ""}
	}
	return attrs
}

// TestConnAttrsCapped: a login or COM_CHANGE_USER with MaxConnectAttrs
// attributes decodes; one more is ErrTooManyConnAttrs. Each entry of the
// attack takes 2 bytes, so a 64 KiB login could otherwise carry 32,768.
func TestConnAttrsCapped(t *testing.T) {
	caps := DefaultClientCapability
	for _, tc := range []struct {
		n   int
		err error
	}{{MaxConnectAttrs, nil}, {MaxConnectAttrs + 1, ErrTooManyConnAttrs}, {MaxLoginPacket / 2, ErrTooManyConnAttrs}} {
		login := (&HandshakeResponse{Capability: caps, User: "u", Attrs: manyAttrs(tc.n)}).Append(nil)
		r, err := ParseHandshakeResponse(login)
		if !errors.Is(err, tc.err) {
			t.Fatalf("login with %d attributes: %v, want %v", tc.n, err, tc.err)
		}
		if err == nil && len(r.Attrs) != tc.n {
			t.Fatalf("login with %d attributes: got %d", tc.n, len(r.Attrs))
		}
		cu := (&ChangeUser{User: "u", HasCharset: true, Charset: 45, AuthPlugin: AuthNativePassword,
			Attrs: manyAttrs(tc.n), HasAttrs: true}).Append(nil, caps)
		c, err := ParseChangeUser(cu, caps)
		if !errors.Is(err, tc.err) {
			t.Fatalf("COM_CHANGE_USER with %d attributes: %v, want %v", tc.n, err, tc.err)
		}
		if err == nil && len(c.Attrs) != tc.n {
			t.Fatalf("COM_CHANGE_USER with %d attributes: got %d", tc.n, len(c.Attrs))
		}
	}
}

// columnCountPacket frames a result-set header announcing n columns.
func columnCountPacket(n uint64) []byte {
	b, _ := AppendPacket(nil, 1, AppendLenEncInt(nil, n))
	return b
}

// TestClientColumnCountCapped: the internal client refuses a column count
// over MaxColumns instead of sizing a slice from it (2^62 columns made
// make panic), and does not allocate for a count its definitions have not
// backed yet.
func TestClientColumnCountCapped(t *testing.T) {
	for _, n := range []uint64{1 << 62, MaxColumns + 1} {
		c := &Client{pio: NewPacketIO(bytes.NewReader(columnCountPacket(n)), io.Discard)}
		c.pio.SetSequence(1)
		if _, err := c.readResult(); !errors.Is(err, ErrMalformed) {
			t.Fatalf("column count %d: %v, want %v", n, err, ErrMalformed)
		}
	}
	var err error
	got := allocatedBytes(func() {
		c := &Client{pio: NewPacketIO(&stallingReader{data: columnCountPacket(MaxColumns)}, io.Discard)}
		c.pio.SetSequence(1)
		_, err = c.readResult()
	})
	if !errors.Is(err, errStalled) {
		t.Fatalf("column count %d then silence: %v, want the stall", MaxColumns, err)
	}
	if got > 32<<10 {
		t.Fatalf("a column count of %d with no definitions allocated %d bytes", MaxColumns, got)
	}
}

// TestScannerColumnCountCapped: the response scanner refuses a column
// count over MaxColumns as a broken response.
func TestScannerColumnCountCapped(t *testing.T) {
	for _, tc := range []struct {
		n    uint64
		fail bool
	}{{MaxColumns, false}, {MaxColumns + 1, true}, {1<<24 - 1, true}} {
		var s ResponseScanner
		s.Reset(ComQuery, ClientProtocol41, 0)
		_, ev := s.Scan(columnCountPacket(tc.n))
		if (ev == ScanError) != tc.fail {
			t.Fatalf("column count %d: event %d (%v), want failure %v", tc.n, ev, s.Err(), tc.fail)
		}
		if tc.fail && (!errors.Is(s.Err(), ErrUnexpectedPacket) || !strings.Contains(s.Err().Error(), "column count")) {
			t.Fatalf("column count %d: error %v", tc.n, s.Err())
		}
	}
}
