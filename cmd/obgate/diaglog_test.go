package main

import (
	"errors"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"obgate/config"
	"obgate/internal/safefile"
)

// TestDiagnosisLogRefusesSymlink checks that a symbolic link put where
// the diagnosis log goes is refused (serve then writes those lines to the
// main log) and the file it points to is not touched.
func TestDiagnosisLogRefusesSymlink(t *testing.T) {
	dir := t.TempDir()
	victim := filepath.Join(dir, "victim")
	if err := os.WriteFile(victim, []byte("keep\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	logDir := filepath.Join(dir, "log")
	if err := os.Mkdir(logDir, 0o750); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(victim, filepath.Join(logDir, diagnosisFile)); err != nil {
		t.Fatal(err)
	}
	cfg, err := config.Default().With("log_dir", logDir)
	if err != nil {
		t.Fatal(err)
	}
	main := slog.New(slog.NewTextHandler(io.Discard, nil))
	_, _, closeDiag, err := openDiagnosis(config.NewStore(cfg), main)
	if err == nil {
		closeDiag()
		t.Fatal("openDiagnosis followed a symbolic link")
	}
	if !errors.Is(err, safefile.ErrSymlink) {
		t.Errorf("openDiagnosis: %v, want safefile.ErrSymlink", err)
	}
	if b, _ := os.ReadFile(victim); string(b) != "keep\n" {
		t.Errorf("the link's target now holds %q", b)
	}
}

// TestDiagnosisLogMode checks that the diagnosis log and its directory
// are created 0640 and 0750 (with the usual umask 022): the lines name
// clients, users and servers.
func TestDiagnosisLogMode(t *testing.T) {
	old := syscall.Umask(0o022)
	defer syscall.Umask(old)
	logDir := filepath.Join(t.TempDir(), "log")
	cfg, err := config.Default().With("log_dir", logDir)
	if err != nil {
		t.Fatal(err)
	}
	log, path, closeDiag, err := openDiagnosis(config.NewStore(cfg), slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err != nil {
		t.Fatal(err)
	}
	log.Info("a line")
	closeDiag()
	for _, c := range []struct {
		path string
		want os.FileMode
	}{{path, 0o640}, {logDir, 0o750}} {
		st, err := os.Stat(c.path)
		if err != nil {
			t.Fatal(err)
		}
		if st.Mode().Perm() != c.want {
			t.Errorf("%s has mode %v, want %v", c.path, st.Mode().Perm(), c.want)
		}
	}
}
