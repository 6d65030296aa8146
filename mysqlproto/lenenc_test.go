package mysqlproto

import (
	"bytes"
	"testing"
)

func TestLenEncInt(t *testing.T) {
	cases := []struct {
		v   uint64
		enc []byte
	}{
		{0, []byte{0x00}},
		{250, []byte{0xfa}},
		{251, []byte{0xfc, 0xfb, 0x00}},
		{0xffff, []byte{0xfc, 0xff, 0xff}},
		{0x10000, []byte{0xfd, 0x00, 0x00, 0x01}},
		{0xffffff, []byte{0xfd, 0xff, 0xff, 0xff}},
		{0x1000000, []byte{0xfe, 0x00, 0x00, 0x00, 0x01, 0, 0, 0, 0}},
		{^uint64(0), []byte{0xfe, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff}},
	}
	for _, c := range cases {
		if got := AppendLenEncInt(nil, c.v); !bytes.Equal(got, c.enc) {
			t.Errorf("AppendLenEncInt(%d) = %x, want %x", c.v, got, c.enc)
		}
		if got := LenEncIntSize(c.v); got != len(c.enc) {
			t.Errorf("LenEncIntSize(%d) = %d, want %d", c.v, got, len(c.enc))
		}
		// Decode at offset 0 and at offset 1.
		for _, off := range []int{0, 1} {
			b := append(make([]byte, off), c.enc...)
			v, pos, ok := ReadLenEncInt(b, off)
			if !ok || v != c.v || pos != off+len(c.enc) {
				t.Errorf("ReadLenEncInt(%x, %d) = %d, %d, %v; want %d, %d", b, off, v, pos, ok, c.v, off+len(c.enc))
			}
		}
		if _, _, ok := ReadLenEncInt(c.enc[:len(c.enc)-1], 0); ok && len(c.enc) > 1 {
			t.Errorf("ReadLenEncInt accepted truncated %x", c.enc[:len(c.enc)-1])
		}
	}
	for _, bad := range [][]byte{{}, {0xfb}, {0xff}} {
		if _, _, ok := ReadLenEncInt(bad, 0); ok {
			t.Errorf("ReadLenEncInt(%x) succeeded", bad)
		}
	}
}

func TestLenEncString(t *testing.T) {
	b := AppendLenEncString(nil, "hello")
	s, pos, ok := ReadLenEncString(b, 0)
	if !ok || string(s) != "hello" || pos != len(b) {
		t.Fatalf("got %q %d %v", s, pos, ok)
	}
	// A length that runs past the end must fail.
	if _, _, ok := ReadLenEncString([]byte{5, 'a', 'b'}, 0); ok {
		t.Fatal("accepted a string longer than its buffer")
	}
	if _, _, ok := ReadLenEncString([]byte{0xfe, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x7f}, 0); ok {
		t.Fatal("accepted a huge length")
	}
}

func TestReadNullString(t *testing.T) {
	s, pos, ok := ReadNullString([]byte("ab\x00c"), 0)
	if !ok || string(s) != "ab" || pos != 3 {
		t.Fatalf("got %q %d %v", s, pos, ok)
	}
	if _, _, ok := ReadNullString([]byte("abc"), 0); ok {
		t.Fatal("accepted a string without NUL")
	}
}
