package mysqlproto

import (
	"bytes"
	"testing"
)

func TestOB20ObjVarint(t *testing.T) {
	for _, tc := range []struct {
		v   uint64
		enc []byte
	}{
		{0, []byte{0}},
		{0x7f, []byte{0x7f}},
		{0x80, []byte{0x80, 0x01}},
		{300, []byte{0xac, 0x02}},
		{^uint64(0), []byte{0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01}},
	} {
		if got := AppendOBVarint(nil, tc.v); !bytes.Equal(got, tc.enc) {
			t.Errorf("AppendOBVarint(%d) = %x, want %x", tc.v, got, tc.enc)
		}
		v, pos, ok := ReadOBVarint(append([]byte{9}, tc.enc...), 1)
		if !ok || v != tc.v || pos != len(tc.enc)+1 {
			t.Errorf("ReadOBVarint(%x) = %d %d %v", tc.enc, v, pos, ok)
		}
		if _, _, ok := ReadOBVarint(tc.enc[:len(tc.enc)-1], 0); ok {
			t.Errorf("truncated %x accepted", tc.enc)
		}
	}
}

// TestOB20ObjEncodings pins the byte layout of the values obsim writes into
// high_bound_val_bin, derived from OceanBase's serialization rules: a 4-byte
// meta, then a varint (int64, extend), a 32-bit varint (int32 and smaller
// except tinyint), one byte (tinyint) or a varint length, bytes and NUL
// (varchar).
func TestOB20ObjEncodings(t *testing.T) {
	for _, tc := range []struct {
		o   OBObj
		enc []byte
	}{
		{OBIntValue(100), []byte{5, 5, 63, 0xff, 100}},
		{OBIntValue(-1), []byte{5, 5, 63, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01}},
		{OBObj{Meta: OBObjMeta{Type: OBTypeInt32, CollationLevel: 5, Collation: 63, Scale: -1}, Int: -1}, []byte{4, 5, 63, 0xff, 0xff, 0xff, 0xff, 0xff, 0x0f}},
		{OBObj{Meta: OBObjMeta{Type: OBTypeTinyInt, CollationLevel: 5, Collation: 63, Scale: -1}, Int: -2}, []byte{1, 5, 63, 0xff, 0xfe}},
		{OBVarcharValue("ab"), []byte{22, 2, 45, 0xff, 2, 'a', 'b', 0}},
		{OBMaxValue, []byte{25, 5, 63, 0xff, 2}},
		{OBObj{}, []byte{0, 0, 0, 0}},
	} {
		enc := AppendOBObj(nil, tc.o)
		if !bytes.Equal(enc, tc.enc) {
			t.Errorf("AppendOBObj(%+v) = %x, want %x", tc.o, enc, tc.enc)
		}
		got, pos, ok := ReadOBObj(enc, 0)
		if !ok || pos != len(enc) || got.Meta != tc.o.Meta || got.Int != tc.o.Int || !bytes.Equal(got.Bytes, tc.o.Bytes) {
			t.Errorf("ReadOBObj(%x) = %+v %d %v", enc, got, pos, ok)
		}
	}
}

func TestOB20ObjRowkeyAndRow(t *testing.T) {
	rk := AppendOBRowkey(nil, OBIntValue(10), OBVarcharValue("x"))
	objs, pos, ok := ReadOBRowkey(rk, 0, nil, 16)
	if !ok || pos != len(rk) || len(objs) != 2 || objs[0].Int != 10 || string(objs[1].Bytes) != "x" {
		t.Fatalf("rowkey: %+v %v", objs, ok)
	}
	if _, _, ok := ReadOBRowkey(rk, 0, nil, 1); ok {
		t.Error("rowkey longer than max accepted")
	}
	// Two LIST rows back to back, as in high_bound_val_bin.
	rows := AppendOBRow(AppendOBRow(nil, OBIntValue(1)), OBIntValue(2))
	var vals []int64
	for p := 0; p < len(rows); {
		objs, next, ok := ReadOBRow(rows, p, nil, 4)
		if !ok || len(objs) != 1 {
			t.Fatalf("row at %d", p)
		}
		vals = append(vals, objs[0].Int)
		p = next
	}
	if len(vals) != 2 || vals[0] != 1 || vals[1] != 2 {
		t.Fatalf("rows = %v", vals)
	}
}
