package rotlog

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestRotatesBySizeAndPrunesTheDirectory(t *testing.T) {
	dir := t.TempDir()
	fileMax, dirMax := int64(100), int64(350)
	l, err := Open(filepath.Join(dir, "diag.log"), func() (int64, int64) { return fileMax, dirMax })
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	clock := time.Date(2026, 12, 2, 7, 0, 0, 0, time.UTC)
	l.now = func() time.Time { clock = clock.Add(time.Second); return clock }
	rec := []byte(strings.Repeat("r", 39) + "\n") // 40 bytes: two fit in 100
	for range 20 {
		if _, err := l.Write(rec); err != nil {
			t.Fatal(err)
		}
	}
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var total int64
	var names []string
	for _, e := range ents {
		info, _ := e.Info()
		total += info.Size()
		names = append(names, e.Name())
		if info.Size() > fileMax {
			t.Errorf("%s holds %d bytes, over the file limit %d", e.Name(), info.Size(), fileMax)
		}
		b, _ := os.ReadFile(filepath.Join(dir, e.Name()))
		if len(b)%len(rec) != 0 || !bytes.HasSuffix(b, []byte("\n")) {
			t.Errorf("%s does not hold whole records: %q", e.Name(), b)
		}
	}
	if total > dirMax {
		t.Errorf("directory holds %d bytes, over its limit %d: %v", total, dirMax, names)
	}
	if len(names) < 3 || names[0] != "diag.log" {
		t.Fatalf("want diag.log and several rotated copies, got %v", names)
	}
	// The newest rotated copies are the ones kept.
	if last := names[len(names)-1]; last != "diag.log.20261202070009" {
		t.Errorf("newest rotated copy is %s, want diag.log.20261202070009 (the ninth and last rotation)", last)
	}
}

func TestLimitsApplyWhileOpen(t *testing.T) {
	dir := t.TempDir()
	fileMax := int64(0)
	l, err := Open(filepath.Join(dir, "d.log"), func() (int64, int64) { return fileMax, 0 })
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	for range 10 {
		l.Write([]byte("0123456789\n"))
	}
	if ents, _ := os.ReadDir(dir); len(ents) != 1 {
		t.Fatalf("rotated without a file limit: %d files", len(ents))
	}
	fileMax = 50
	l.Write([]byte("0123456789\n"))
	if ents, _ := os.ReadDir(dir); len(ents) != 2 {
		t.Fatalf("a lowered limit did not rotate: %d files", len(ents))
	}
}
