package obpart

import (
	"testing"
	"unicode/utf8"

	"obgate/internal/obpart/golden"
)

func loadVectors(t *testing.T) *golden.Vectors {
	t.Helper()
	v, err := golden.Load()
	if err != nil {
		t.Fatal(err)
	}
	if len(v.Keys) < 500 || len(v.Weights) < 4000 || len(v.Cmps) < 20 {
		t.Fatalf("too few vectors: %d keys, %d weights, %d comparisons", len(v.Keys), len(v.Weights), len(v.Cmps))
	}
	return v
}

func TestMurmurMatchesOceanBase(t *testing.T) {
	for _, m := range loadVectors(t).Murmurs {
		if got := Murmur64A(m.Data, m.Seed); got != m.Hash {
			t.Errorf("Murmur64A(%x, %d) = %#x, OceanBase %#x", m.Data, m.Seed, got, m.Hash)
		}
	}
}

// The weight table generated from ob_unicase_default against the weights
// the collation's own strnxfrm gives (every 13th BMP code point and the
// characters the NFD rule used to get wrong: Hangul, kana with dakuten,
// Georgian, Glagolitic, Cherokee, Latin Ext-C/D/E, CJK compatibility
// ideographs, the Ohm and Kelvin signs).
func TestGeneralCIWeightsMatchOceanBase(t *testing.T) {
	for _, w := range loadVectors(t).Weights {
		if got := GeneralCIWeight(w.CodePoint); got != w.Weight {
			t.Errorf("weight of U+%04X = %04X, OceanBase %04X", w.CodePoint, got, w.Weight)
		}
	}
	if got := GeneralCIWeight(0x1F600); got != 0xFFFD {
		t.Errorf("weight of U+1F600 = %04X, want FFFD", got)
	}
}

func TestComparisonsMatchOceanBase(t *testing.T) {
	for _, c := range loadVectors(t).Cmps {
		coll := CollOf(c.Collation)
		if coll == CollNone {
			t.Fatalf("collation %d unknown", c.Collation)
		}
		if got := coll.Compare(c.A, c.B); got != c.Sign {
			t.Errorf("collation %d: compare(%q, %q) = %d, OceanBase %d", c.Collation, c.A, c.B, got, c.Sign)
		}
		if got := coll.Compare(c.B, c.A); got != -c.Sign {
			t.Errorf("collation %d: compare(%q, %q) = %d, OceanBase %d", c.Collation, c.B, c.A, got, -c.Sign)
		}
	}
}

// hashValue is the server's KEY hash of one vector value.
func hashValue(t *testing.T, v golden.Value, seed uint64) uint64 {
	switch v.Kind {
	case golden.Null:
		return HashNull(seed)
	case golden.Int, golden.Uint, golden.Date, golden.Datetime, golden.TS:
		return HashInt(v.Int, seed)
	case golden.CI:
		return CollGeneralCI.Hash(v.Bytes, seed)
	case golden.PadBin:
		return CollPadBin.Hash(v.Bytes, seed)
	case golden.Binary:
		return CollBinary.Hash(v.Bytes, seed)
	case golden.Decimal:
		d, ok := ParseDecimal([]byte(v.Text), v.Precision, v.Scale)
		if !ok {
			t.Fatalf("%s: not a DECIMAL(%d,%d)", v.Spelled, v.Precision, v.Scale)
		}
		return HashDecimal(&d, seed)
	}
	t.Fatalf("value %s", v.Spelled)
	return 0
}

func TestKeyHashMatchesOceanBase(t *testing.T) {
	for _, k := range loadVectors(t).Keys {
		var h uint64
		for _, v := range k.Values {
			h = hashValue(t, v, h)
		}
		if h != k.Hash || KeyPart(h, k.Parts) != k.Part {
			t.Errorf("KEY %v: hash %#x partition %d of %d, OceanBase %#x partition %d", spelled(k.Values), h, KeyPart(h, k.Parts), k.Parts, k.Hash, k.Part)
		}
	}
}

func TestHashPartMatchesOceanBase(t *testing.T) {
	for _, h := range loadVectors(t).Hashes {
		v := h.Value
		if h.Null {
			v = 0
		}
		if got := HashPart(v, h.Parts); got != h.Part {
			t.Errorf("HASH(%d) of %d = %d, OceanBase %d", v, h.Parts, got, h.Part)
		}
	}
}

// The date vectors' day numbers and microseconds from their literal text.
func TestDateLiteralsMatchOceanBase(t *testing.T) {
	n := 0
	for _, k := range loadVectors(t).Keys {
		for _, v := range k.Values {
			switch v.Kind {
			case golden.Date:
				n++
				if d, ok := ParseDate([]byte(v.Text)); !ok || int64(d) != v.Int {
					t.Errorf("ParseDate(%q) = %d, %v; OceanBase %d", v.Text, d, ok, v.Int)
				}
			case golden.Datetime:
				n++
				if us, ok := ParseDatetime([]byte(v.Text), 6); !ok || us != v.Int {
					t.Errorf("ParseDatetime(%q) = %d, %v; OceanBase %d", v.Text, us, ok, v.Int)
				}
			}
		}
	}
	if n == 0 {
		t.Fatal("no date vectors")
	}
}

func spelled(vs []golden.Value) []string {
	out := make([]string, len(vs))
	for i, v := range vs {
		out[i] = v.Spelled
	}
	return out
}

func TestDecodeUTF8MB4(t *testing.T) {
	for _, tc := range []struct {
		in   string
		r    rune
		size int
	}{
		{"a", 'a', 1},
		{"\xc3\xa9", 0xE9, 2},
		{"\xed\xa0\x80", 0xD800, 3}, // a surrogate, which OceanBase decodes
		{"\xf0\x9f\x98\x80", 0x1F600, 4},
		{"\xf4\x8f\xbf\xbf", 0x10FFFF, 4},
		{"\xc0\x80", 0, 0},         // overlong
		{"\xe0\x80\x80", 0, 0},     // overlong
		{"\xf0\x80\x80\x80", 0, 0}, // overlong
		{"\xf4\x90\x80\x80", 0, 0}, // above U+10FFFF
		{"\xf5\x80\x80\x80", 0, 0},
		{"\xe3\x81", 0, 0}, // truncated
		{"\xff", 0, 0},
		{"", 0, 0},
	} {
		r, size := DecodeUTF8MB4([]byte(tc.in))
		if r != tc.r || size != tc.size {
			t.Errorf("DecodeUTF8MB4(%q) = %U, %d; want %U, %d", tc.in, r, size, tc.r, tc.size)
		}
	}
	// Valid UTF-8 outside the surrogates decodes as Go decodes it.
	for r := rune(0); r <= 0x10FFFF; r += 97 {
		if r >= 0xD800 && r <= 0xDFFF {
			continue
		}
		var b [4]byte
		n := utf8.EncodeRune(b[:], r)
		if got, size := DecodeUTF8MB4(b[:n]); got != r || size != n {
			t.Fatalf("DecodeUTF8MB4(%U) = %U, %d", r, got, size)
		}
	}
}

func TestParseDecimal(t *testing.T) {
	for _, tc := range []struct {
		text       string
		prec, sc   int
		ok         bool
		equalsText string // same value as this text, when ok
	}{
		{"12.34", 10, 2, true, "1234e-2"},
		{" 12.3 ", 10, 2, true, "12.30"},
		{"12.340", 10, 2, true, "12.34"},
		{"12.345", 10, 2, false, ""}, // would be rounded
		{"123456789.00", 10, 2, false, ""},
		{"99999999.99", 10, 2, true, "99999999.99"},
		{"-0", 10, 2, true, "0"},
		{"+7", 5, 0, true, "7"},
		{"1e3", 10, 0, false, ""},
		{".", 10, 2, false, ""},
		{"", 10, 2, false, ""},
		{"0.5", 10, 0, false, ""},
	} {
		d, ok := ParseDecimal([]byte(tc.text), tc.prec, tc.sc)
		if ok != tc.ok {
			t.Errorf("ParseDecimal(%q, %d, %d) ok = %v, want %v", tc.text, tc.prec, tc.sc, ok, tc.ok)
			continue
		}
		if !ok || tc.equalsText == "1234e-2" {
			continue
		}
		want, _ := ParseDecimal([]byte(tc.equalsText), tc.prec, tc.sc)
		if d.Compare(&want) != 0 {
			t.Errorf("ParseDecimal(%q) != ParseDecimal(%q)", tc.text, tc.equalsText)
		}
	}
	a, _ := ParseDecimal([]byte("-12.34"), 10, 2)
	b, _ := ParseDecimal([]byte("-12.33"), 10, 2)
	c, _ := ParseDecimal([]byte("3"), 10, 2)
	if a.Compare(&b) != -1 || b.Compare(&c) != -1 || c.Compare(&a) != 1 {
		t.Error("decimal order")
	}
	i, ok := DecimalFromInt(-7, false, 20, 3)
	j, _ := ParseDecimal([]byte("-7.000"), 20, 3)
	if !ok || i.Compare(&j) != 0 {
		t.Error("DecimalFromInt(-7)")
	}
	raw, ok := DecimalFromBytes([]byte{0x2e, 0xfb}) // -1234 in two bytes
	k, _ := ParseDecimal([]byte("-12.34"), 10, 2)
	if !ok || raw.Compare(&k) != 0 {
		t.Error("DecimalFromBytes sign extension")
	}
}

func TestParseDatetime(t *testing.T) {
	for _, tc := range []struct {
		text string
		fsp  int
		ok   bool
		usec int64
	}{
		{"1970-01-01 00:00:01", 0, true, 1000000},
		{"1970-01-01T00:00:01.5", 1, true, 1500000},
		{"1970-01-01 00:00:01.5", 0, false, 0},
		{"1970-01-01 00:00:01.500", 0, false, 0},
		{"1970-01-01 00:00:01.000", 0, true, 1000000},
		{"1970-01-02", 0, true, 86400 * 1000000},
		{"1970-1-2 1:2:3", 0, true, 86400*1000000 + 3723*1000000},
		{"2023-02-29", 0, false, 0},
		{"0000-00-00", 0, false, 0},
		{"24-01-01", 0, false, 0},
		{"2024-01-01 24:00:00", 0, false, 0},
		{"2024-01-01 10:00", 0, false, 0},
	} {
		us, ok := ParseDatetime([]byte(tc.text), tc.fsp)
		if ok != tc.ok || (ok && us != tc.usec) {
			t.Errorf("ParseDatetime(%q, %d) = %d, %v; want %d, %v", tc.text, tc.fsp, us, ok, tc.usec, tc.ok)
		}
	}
	if d, _ := ParseDate([]byte("2024-02-29")); YearOf(d) != 2024 || YearOf(d-60) != 2023 || YearOf(d-59) != 2024 || ToDays(0) != 719528 {
		t.Error("YearOf / ToDays")
	}
}

func TestHashesDoNotAllocate(t *testing.T) {
	s := []byte("한국어 Straße 😀 and more text than one chunk of weights holds, twice over, and more again")
	d, _ := ParseDecimal([]byte("12.34"), 10, 2)
	if n := testing.AllocsPerRun(100, func() {
		h := CollGeneralCI.Hash(s, 1)
		h = CollBinary.Hash(s, h)
		h = HashDecimal(&d, HashNull(HashInt(7, h)))
		_ = CollGeneralCI.Compare(s, s[:20])
		_ = h
	}); n != 0 {
		t.Errorf("%v allocations", n)
	}
}
