package route

import (
	"bufio"
	"encoding/hex"
	"os"
	"strconv"
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"

	"golang.org/x/text/unicode/norm"
)

// TestKeyHashVectors checks the hash functions against
// testdata/keyhash_vectors.txt, written by testdata/keyhash_vectors.py,
// an implementation of the definitions of its own.
func TestKeyHashVectors(t *testing.T) {
	f, err := os.Open("testdata/keyhash_vectors.txt")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	counts := map[string]int{}
	for line := 1; sc.Scan(); line++ {
		fields := strings.Fields(sc.Text())
		if len(fields) == 0 || strings.HasPrefix(fields[0], "#") {
			continue
		}
		counts[fields[0]]++
		switch fields[0] {
		case "murmur":
			data := vecHex(t, fields[1])
			seed := vecUint(t, fields[2])
			if got, want := murmur64A(data, seed), vecUint(t, fields[3]); got != want {
				t.Errorf("line %d: murmur64A(%x, %d) = %#x, want %#x", line, data, seed, got, want)
			}
		case "key":
			n, part, want := vecInt(t, fields[1]), vecInt(t, fields[2]), vecUint(t, fields[3])
			var h uint64
			for _, v := range fields[4:] {
				h = vecKeyHash(t, v, h)
			}
			if h != want || keyPartOf(h, int(n)) != int(part) {
				t.Errorf("line %d: KEY(%v) = %#x part %d of %d, want %#x part %d", line, fields[4:], h, keyPartOf(h, int(n)), n, want, part)
			}
		case "hash":
			n, part := vecInt(t, fields[1]), vecInt(t, fields[2])
			var v int64
			if fields[3] != "null" {
				v = vecInt(t, fields[3])
			}
			if got := hashPartOf(v, int(n)); got != int(part) {
				t.Errorf("line %d: HASH(%s) %% %d = %d, want %d", line, fields[3], n, got, part)
			}
		case "weight":
			r, _ := strconv.ParseUint(fields[1], 16, 32)
			w, _ := strconv.ParseUint(fields[2], 16, 16)
			if got, _ := ciWeightAt([]byte(string(rune(r)))); got != uint16(w) {
				t.Errorf("line %d: weight(%U) = %#x, want %#x", line, r, got, w)
			}
		default:
			t.Fatalf("line %d: unknown vector %q", line, fields[0])
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	if counts["murmur"] == 0 || counts["key"] < 100 || counts["hash"] == 0 || counts["weight"] == 0 {
		t.Fatalf("too few vectors: %v", counts)
	}
}

func vecKeyHash(t *testing.T, v string, seed uint64) uint64 {
	kind, arg, _ := strings.Cut(v, ":")
	switch kind {
	case "null":
		return keyHashInt(0, seed)
	case "i":
		return keyHashInt(vecInt(t, arg), seed)
	case "u":
		return keyHashInt(int64(vecUint(t, arg)), seed)
	case "ci":
		return keyHashCI(vecHex(t, arg), seed)
	case "bin":
		return keyHashBin(vecHex(t, arg), seed)
	}
	t.Fatalf("bad key value %q", v)
	return 0
}

func vecHex(t *testing.T, s string) []byte {
	if s == "-" {
		return nil
	}
	b, err := hex.DecodeString(s)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func vecInt(t *testing.T, s string) int64 {
	v, err := strconv.ParseInt(s, 10, 64)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

func vecUint(t *testing.T, s string) uint64 {
	v, err := strconv.ParseUint(s, 0, 64)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// TestCIWeightsBMP checks every BMP character's weight against the rule
// computed the slow way: the upper case of the first rune of the NFD
// form (the Latin-1 range and the micro sign aside).
func TestCIWeightsBMP(t *testing.T) {
	for r := rune(0xC0); r <= 0xFFFF; r++ {
		if r >= 0xD800 && r <= 0xDFFF {
			continue
		}
		enc := []byte(string(r))
		got, n := ciWeightAt(enc)
		if n != len(enc) {
			t.Fatalf("%U: length %d", r, n)
		}
		want := r
		if r >= 0x100 {
			if base, _ := utf8.DecodeRune(norm.NFD.Bytes(enc)); base != utf8.RuneError {
				want = base
			}
			if up := unicode.ToUpper(want); up <= 0xFFFF {
				want = up
			}
		} else {
			want = rune(latin1CI[r-0xC0])
		}
		if got != uint16(want) {
			t.Errorf("weight(%U) = %#x, want %#x", r, got, want)
		}
	}
	if w, n := ciWeightAt([]byte("😀")); w != 0xFFFD || n != 4 {
		t.Errorf("weight(😀) = %#x, %d", w, n)
	}
	if _, n := ciWeightAt([]byte{0xff}); n != 0 {
		t.Errorf("invalid byte read as a character")
	}
}

func TestCompareCollations(t *testing.T) {
	for _, tc := range []struct {
		a, b   string
		ci, bn int
	}{
		{"abc", "ABC", 0, 1},
		{"abc  ", "abc", 0, 0},
		{"Müller", "MULLER", 0, 1},
		{"a", "b", -1, -1},
		{"ab", "a", 1, 1},
		{"", "  ", 0, 0},
		{"straße", "STRASSE", -1, 1}, // ß weighs one S
		{"straße", "strase", 0, 1},
	} {
		if got := compareCI([]byte(tc.a), []byte(tc.b)); got != tc.ci {
			t.Errorf("compareCI(%q, %q) = %d, want %d", tc.a, tc.b, got, tc.ci)
		}
		if got := compareBin([]byte(tc.a), []byte(tc.b)); got != tc.bn {
			t.Errorf("compareBin(%q, %q) = %d, want %d", tc.a, tc.b, got, tc.bn)
		}
	}
}
