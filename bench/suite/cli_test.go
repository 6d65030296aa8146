package suite

import (
	"os"
	"path/filepath"
	"testing"
)

func TestParseAndFormatSize(t *testing.T) {
	for in, want := range map[string]int64{"1G": 1 << 30, "256m": 256 << 20, "64K": 64 << 10, "1000": 1000, " 3M ": 3 << 20} {
		got, err := ParseSize(in)
		if err != nil || got != want {
			t.Errorf("ParseSize(%q) = %d, %v; want %d", in, got, err, want)
		}
		if back, err := ParseSize(FormatSize(got)); err != nil || back != got {
			t.Errorf("ParseSize(FormatSize(%d)) = %d, %v", got, back, err)
		}
	}
	for _, bad := range []string{"", "G", "-1M", "1T", "x", "0"} {
		if _, err := ParseSize(bad); err == nil {
			t.Errorf("ParseSize(%q) succeeded", bad)
		}
	}
	for n, want := range map[int64]string{1 << 30: "1G", 3 << 20: "3M", 64 << 10: "64K", 1000: "1000", 1<<20 + 1: "1048577"} {
		if got := FormatSize(n); got != want {
			t.Errorf("FormatSize(%d) = %q, want %q", n, got, want)
		}
	}
}

func TestParseInts(t *testing.T) {
	got, err := ParseInts(" 1, 8,32 ")
	if err != nil || len(got) != 3 || got[0] != 1 || got[1] != 8 || got[2] != 32 {
		t.Errorf("got %v, %v", got, err)
	}
	for _, bad := range []string{"", "1,x", "0", "-2"} {
		if _, err := ParseInts(bad); err == nil {
			t.Errorf("ParseInts(%q) succeeded", bad)
		}
	}
}

func TestShellQuote(t *testing.T) {
	for in, want := range map[string]string{"--quick": "--quick", "": "''", "a b": "'a b'", "it's": `'it'\''s'`} {
		if got := ShellQuote(in); got != want {
			t.Errorf("ShellQuote(%q) = %s, want %s", in, got, want)
		}
	}
}

func TestFindRoot(t *testing.T) {
	root, err := FindRoot("")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(root, "bench", "suite", "cli.go")); err != nil {
		t.Fatalf("FindRoot = %s: %v", root, err)
	}
	t.Chdir(t.TempDir())
	if _, err := FindRoot(""); err == nil {
		t.Fatal("FindRoot found a root outside the repository")
	}
	if got, err := FindRoot("."); err != nil || !filepath.IsAbs(got) {
		t.Fatalf("FindRoot(.) = %q, %v", got, err)
	}
}

func TestUpdateMarkedSection(t *testing.T) {
	const b, e = "<!-- x:begin -->", "<!-- x:end -->"
	doc := "# Benchmarks\n\n" + BeginMarker + "\nsysbench\n" + EndMarker + "\n"
	once := UpdateMarkedSection(doc, b, e, b+"\none\n"+e)
	if want := doc + "\n" + b + "\none\n" + e + "\n"; once != want {
		t.Fatalf("appended:\n%s\nwant:\n%s", once, want)
	}
	twice := UpdateMarkedSection(once+"tail\n", b, e, b+"\ntwo\n"+e+"\n\n")
	if want := doc + "\n" + b + "\ntwo\n" + e + "\ntail\n"; twice != want {
		t.Fatalf("replaced:\n%s\nwant:\n%s", twice, want)
	}
	if got := UpdateMarkedSection(" \n", b, e, b+"\n"+e); got != "# Benchmarks\n\n"+b+"\n"+e+"\n" {
		t.Fatalf("empty doc: %q", got)
	}
}
