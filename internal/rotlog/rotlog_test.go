package rotlog

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"syscall"
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

// TestRefusesSymlink: a symbolic link where the log goes is refused, and
// the file it points to is not written.
func TestRefusesSymlink(t *testing.T) {
	dir := t.TempDir()
	victim := filepath.Join(dir, "victim")
	if err := os.WriteFile(victim, []byte("keep\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(dir, "diag.log")
	if err := os.Symlink(victim, p); err != nil {
		t.Fatal(err)
	}
	if l, err := Open(p, func() (int64, int64) { return 0, 0 }); err == nil {
		l.Write([]byte("written through the link\n"))
		l.Close()
		t.Fatal("Open followed a symbolic link")
	}
	if b, _ := os.ReadFile(victim); string(b) != "keep\n" {
		t.Errorf("the link's target now holds %q", b)
	}
}

// TestRotatedFileMode: a log started by a rotation is created 0640, as
// the first one.
func TestRotatedFileMode(t *testing.T) {
	old := syscall.Umask(0o022)
	defer syscall.Umask(old)
	dir := t.TempDir()
	p := filepath.Join(dir, "sub", "diag.log")
	l, err := Open(p, func() (int64, int64) { return 20, 0 })
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	for range 3 {
		if _, err := l.Write([]byte("0123456789abcde\n")); err != nil {
			t.Fatal(err)
		}
	}
	ents, err := os.ReadDir(filepath.Dir(p))
	if err != nil || len(ents) < 2 {
		t.Fatalf("want the log and rotated copies, got %d entries, %v", len(ents), err)
	}
	st, err := os.Stat(p)
	if err != nil {
		t.Fatal(err)
	}
	if st.Mode().Perm() != 0o640 {
		t.Errorf("the log after a rotation has mode %v, want 0640", st.Mode().Perm())
	}
	if st, _ := os.Stat(filepath.Dir(p)); st.Mode().Perm() != 0o750 {
		t.Errorf("the log directory has mode %v, want 0750", st.Mode().Perm())
	}
}
