package main

import (
	"fmt"
	"strings"
	"testing"
)

// A table in the source's shape: two pages with tables, the rest NULL.
func fakeSource() string {
	var b strings.Builder
	page := func(name string, base int, sort func(int) int) {
		fmt.Fprintf(&b, "static ObUnicaseInfoChar %s[]={\n", name)
		for i := range 256 {
			c := base<<8 | i
			fmt.Fprintf(&b, "  {0x%04X,0x%04X,0x%04X},", c, c, sort(c))
			if i%2 == 1 {
				b.WriteString("\n")
			}
		}
		b.WriteString("};\n\n")
	}
	page("plane00", 0x00, func(c int) int {
		if c >= 'a' && c <= 'z' {
			return c - 32
		}
		return c
	})
	page("plane21", 0x21, func(c int) int { return 0x2100 })
	b.WriteString("static ObUnicaseInfoChar *ob_unicase_pages_default[256]=\n{\n")
	for i := range 256 {
		switch i {
		case 0x00:
			b.WriteString(" plane00,")
		case 0x21:
			b.WriteString(" plane21,")
		default:
			b.WriteString("    NULL,")
		}
		if i%8 == 7 {
			b.WriteString("\n")
		}
	}
	b.WriteString("};\n")
	return strings.TrimSuffix(b.String(), ",\n};\n") + "\n};\n"
}

func TestReadPages(t *testing.T) {
	src := fakeSource()
	pages, err := readPages(src)
	if err != nil {
		t.Fatal(err)
	}
	if len(pages) != 2 || pages[0x00]['a'] != 'A' || pages[0x00]['1'] != '1' || pages[0x21][0x26] != 0x2100 {
		t.Fatalf("pages %d: a=%#x 1=%#x 2126=%#x", len(pages), pages[0x00]['a'], pages[0x00]['1'], pages[0x21][0x26])
	}
	code, err := render(pages, "test@0")
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"0x00: &generalCIPage00", "0x21: &generalCIPage21", "var generalCIPage21 = [256]uint16{"} {
		if !strings.Contains(string(code), want) {
			t.Errorf("generated code lacks %q", want)
		}
	}
	if _, err := readPages("no table here"); err == nil {
		t.Error("a source without the page list accepted")
	}
	if _, err := readPages(strings.Replace(src, "plane21[]={", "planeXX[]={", 1)); err == nil {
		t.Error("a missing page table accepted")
	}
}
