package safefile

import (
	"bytes"
	"errors"
	"net"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"
)

// within runs f and fails the test if it has not returned after a generous
// bound: the point is that it returns, not how fast.
func within(t *testing.T, what string, f func() error) error {
	t.Helper()
	done := make(chan error, 1)
	go func() { done <- f() }()
	select {
	case err := <-done:
		return err
	case <-time.After(10 * time.Second):
		t.Fatalf("%s did not return within 10s", what)
		return nil
	}
}

func TestReadFileRegular(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "cert.pem")
	want := bytes.Repeat([]byte("x"), 100)
	if err := os.WriteFile(p, want, 0o600); err != nil {
		t.Fatal(err)
	}
	got, err := ReadFile(p, 100)
	if err != nil || !bytes.Equal(got, want) {
		t.Fatalf("ReadFile at exactly the limit = %d bytes, %v; want 100 bytes", len(got), err)
	}
	// A symbolic link to a regular file is followed (Kubernetes volumes).
	link := filepath.Join(dir, "link.pem")
	if err := os.Symlink(p, link); err != nil {
		t.Fatal(err)
	}
	if got, err := ReadFile(link, MaxPEM); err != nil || !bytes.Equal(got, want) {
		t.Fatalf("ReadFile through a symbolic link = %d bytes, %v", len(got), err)
	}
}

// TestReadFileTooLarge: one byte over the limit is refused.
func TestReadFileTooLarge(t *testing.T) {
	p := filepath.Join(t.TempDir(), "big.pem")
	if err := os.WriteFile(p, make([]byte, 101), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := ReadFile(p, 100); !errors.Is(err, ErrTooLarge) {
		t.Fatalf("ReadFile of 101 bytes with limit 100: %v, want ErrTooLarge", err)
	}
}

// TestReadFileFIFO: a FIFO nobody writes to is refused at once instead of
// blocking the reader (os.ReadFile would wait for a writer forever).
func TestReadFileFIFO(t *testing.T) {
	p := filepath.Join(t.TempDir(), "cert.pem")
	if err := syscall.Mkfifo(p, 0o600); err != nil {
		t.Fatal(err)
	}
	err := within(t, "ReadFile of a FIFO", func() error { _, err := ReadFile(p, MaxPEM); return err })
	if !errors.Is(err, ErrNotRegular) {
		t.Fatalf("ReadFile of a FIFO: %v, want ErrNotRegular", err)
	}
}

func TestReadFileNotRegular(t *testing.T) {
	dir := t.TempDir()
	sock := filepath.Join(dir, "s")
	ln, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	for _, p := range []string{dir, "/dev/null", sock} {
		err := within(t, "ReadFile of "+p, func() error { _, err := ReadFile(p, MaxPEM); return err })
		if p == sock && err != nil && !errors.Is(err, ErrNotRegular) {
			// Opening a socket fails (ENXIO) before the check: refused either way.
			continue
		}
		if !errors.Is(err, ErrNotRegular) {
			t.Errorf("ReadFile(%s): %v, want ErrNotRegular", p, err)
		}
	}
}

// TestOpenLogCreates: a new log and its directory get the log modes.
func TestOpenLogCreates(t *testing.T) {
	old := syscall.Umask(0o022)
	defer syscall.Umask(old)
	p := filepath.Join(t.TempDir(), "log", "diag.log")
	f, err := OpenLog(p)
	if err != nil {
		t.Fatal(err)
	}
	f.Close()
	for _, c := range []struct {
		path string
		want os.FileMode
	}{{p, LogPerm}, {filepath.Dir(p), LogDirPerm}} {
		st, err := os.Stat(c.path)
		if err != nil {
			t.Fatal(err)
		}
		if got := st.Mode().Perm(); got != c.want {
			t.Errorf("%s created with mode %v, want %v", c.path, got, c.want)
		}
	}
}

// TestOpenLogRefusesSymlink: a link put where the log goes is not
// followed, and the file it points to is left alone.
func TestOpenLogRefusesSymlink(t *testing.T) {
	dir := t.TempDir()
	target := filepath.Join(dir, "victim")
	if err := os.WriteFile(target, []byte("keep"), 0o600); err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(dir, "diag.log")
	if err := os.Symlink(target, p); err != nil {
		t.Fatal(err)
	}
	f, err := OpenLog(p)
	if err == nil {
		f.Close()
		t.Fatal("OpenLog followed a symbolic link")
	}
	if !errors.Is(err, ErrSymlink) {
		t.Errorf("OpenLog of a symbolic link: %v, want ErrSymlink", err)
	}
	// A dangling link is refused too, and not created through.
	dangling := filepath.Join(dir, "d.log")
	if err := os.Symlink(filepath.Join(dir, "nowhere"), dangling); err != nil {
		t.Fatal(err)
	}
	if f, err := OpenLog(dangling); !errors.Is(err, ErrSymlink) {
		if f != nil {
			f.Close()
		}
		t.Errorf("OpenLog of a dangling link: %v, want ErrSymlink", err)
	}
	if _, err := os.Lstat(filepath.Join(dir, "nowhere")); !os.IsNotExist(err) {
		t.Errorf("OpenLog created the file a dangling link points to")
	}
}

// TestOpenLogRefusesFIFO: a FIFO in the log's place does not block.
func TestOpenLogRefusesFIFO(t *testing.T) {
	p := filepath.Join(t.TempDir(), "diag.log")
	if err := syscall.Mkfifo(p, 0o600); err != nil {
		t.Fatal(err)
	}
	// With a reader the open itself would succeed: the type check refuses it.
	r, err := os.OpenFile(p, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	err = within(t, "OpenLog of a FIFO", func() error {
		f, err := OpenLog(p)
		if f != nil {
			f.Close()
		}
		return err
	})
	if !errors.Is(err, ErrNotRegular) {
		t.Fatalf("OpenLog of a FIFO: %v, want ErrNotRegular", err)
	}
}

// TestOpenLogAppends: an existing log is appended to, not truncated.
func TestOpenLogAppends(t *testing.T) {
	p := filepath.Join(t.TempDir(), "diag.log")
	if err := os.WriteFile(p, []byte("one\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	f, err := OpenLog(p)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.Write([]byte("two\n")); err != nil {
		t.Fatal(err)
	}
	f.Close()
	if b, _ := os.ReadFile(p); string(b) != "one\ntwo\n" {
		t.Errorf("log holds %q, want one and two", b)
	}
}
