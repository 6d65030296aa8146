package mysqlproto

import (
	"bytes"
	"io"
	"reflect"
	"testing"
)

// Fuzz targets for result-set decoding: column definitions, text rows, and
// the internal client reading a whole result from a hostile server.

func FuzzParseColumn(f *testing.F) {
	for _, c := range []Column{VarcharColumn("name"), BigintColumn("id"),
		{Schema: "s", Table: "t", OrgTable: "ot", Name: "n", OrgName: "on", Charset: 63, Length: 1 << 31, Type: TypeBlob, Flags: 0xffff, Decimals: 31}} {
		f.Add(c.Append(nil))
	}
	f.Add([]byte{3, 'd', 'e', 'f', 0xfc, 0xff, 0xff})
	f.Fuzz(func(t *testing.T, b []byte) {
		c, ok := ParseColumn(b)
		if !ok {
			return
		}
		if len(c.Schema)+len(c.Table)+len(c.OrgTable)+len(c.Name)+len(c.OrgName) > len(b) {
			t.Fatal("names longer than input")
		}
		again, ok := ParseColumn(c.Append(nil))
		if !ok || again != c {
			t.Fatalf("round trip %+v -> %+v", c, again)
		}
	})
}

func FuzzReadTextRow(f *testing.F) {
	f.Add(AppendTextValue(AppendTextValue(AppendTextValue(nil, "a"), nil), int64(-7)), uint8(3))
	f.Add([]byte{0xfb, 0xfb, 0xfc, 0xff, 0xff}, uint8(3))
	f.Add([]byte{}, uint8(0))
	f.Fuzz(func(t *testing.T, b []byte, n uint8) {
		vals, nulls := make([][]byte, n), make([]bool, n)
		if !ReadTextRow(b, vals, nulls) {
			return
		}
		total := 0
		for i, v := range vals {
			if nulls[i] != (v == nil) {
				t.Fatalf("value %d: null %v with %q", i, nulls[i], v)
			}
			total += len(v)
		}
		if total > len(b) {
			t.Fatalf("%d value bytes from %d", total, len(b))
		}
		var re []byte
		for i, v := range vals {
			if nulls[i] {
				re = AppendTextValue(re, nil)
			} else {
				re = AppendTextValue(re, v)
			}
		}
		again, againNulls := make([][]byte, n), make([]bool, n)
		if !ReadTextRow(re, again, againNulls) || !reflect.DeepEqual(again, vals) || !reflect.DeepEqual(againNulls, nulls) {
			t.Fatalf("round trip of %q", vals)
		}
	})
}

// FuzzClientReadResult feeds arbitrary server bytes to the internal
// client's result reader: it must fail cleanly, never panic or size a
// slice from a count, and any result it returns has rows as wide as its
// columns.
func FuzzClientReadResult(f *testing.F) {
	rs := &ResultSet{Columns: []Column{VarcharColumn("a"), BigintColumn("b")}, Rows: [][]any{{"x", 1}, {nil, 2}}}
	for _, caps := range []Capability{ClientProtocol41 | ClientSessionTrack, ClientProtocol41 | ClientSessionTrack | ClientDeprecateEOF} {
		wire, _ := rs.AppendPackets(nil, 1, caps, StatusAutocommit)
		f.Add(wire, caps.Has(ClientDeprecateEOF))
	}
	ok, _ := AppendPacket(nil, 1, AppendOK(nil, OK{AffectedRows: 3, Status: StatusMoreResultsExists}, ClientSessionTrack))
	f.Add(ok, false)
	f.Add(columnCountPacket(1<<62), false)
	f.Add(columnCountPacket(MaxColumns), true)
	infile, _ := AppendPacket(nil, 1, []byte{LocalInfileHeader, 'f'})
	f.Add(infile, false)
	f.Fuzz(func(t *testing.T, b []byte, deprecateEOF bool) {
		caps := ClientProtocol41 | ClientSessionTrack
		if deprecateEOF {
			caps |= ClientDeprecateEOF
		}
		c := &Client{pio: NewPacketIO(bytes.NewReader(b), io.Discard), Caps: caps}
		c.pio.SetMaxPacket(1 << 16)
		for range 4 {
			c.pio.SetSequence(1)
			res, err := c.readResult()
			if err != nil {
				return
			}
			for _, row := range res.Rows {
				if len(row) != len(res.Columns) {
					t.Fatalf("row of %d values under %d columns", len(row), len(res.Columns))
				}
			}
		}
	})
}
