package config

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestLoadReadOnlyFile checks that a config file obgate may read but not
// rewrite (a Secret or ConfigMap mounted read-only) is a warning at
// startup, not a fatal error: obgate runs on its values, and ALTER
// PROXYCONFIG, which must write it, is refused and changes nothing. The
// write is made to fail through writeConfigFile, since these tests may run
// as root, whom file modes do not stop; without root, a read-only
// directory is tried as well.
func TestLoadReadOnlyFile(t *testing.T) {
	const text = "client_max_connections = 77\nobserver_sys_password = 8cb2237d0679ca88db6464eac60da96345513964\n"
	check := func(t *testing.T, dir string) {
		t.Helper()
		path := filepath.Join(dir, FileName)
		s, err := Load(&Options{ConfigDir: dir})
		if err != nil {
			t.Fatalf("Load of a file that cannot be rewritten: %v", err)
		}
		if c := s.Load(); c.ClientMaxConnections != 77 || c.ObserverSysPassword != "8cb2237d0679ca88db6464eac60da96345513964" {
			t.Errorf("values from the read-only file not used: %d, %q", c.ClientMaxConnections, c.ObserverSysPassword)
		}
		warned := false
		for _, w := range s.Warnings() {
			warned = warned || strings.Contains(w, path) && strings.Contains(w, "ALTER PROXYCONFIG")
			if strings.Contains(w, "8cb2237d") {
				t.Errorf("a warning shows a password hash: %q", w)
			}
		}
		if !warned {
			t.Errorf("warnings %q do not say that %s is not rewritten", s.Warnings(), path)
		}
		if _, err := s.Set("client_max_connections", "88"); err == nil {
			t.Error("ALTER PROXYCONFIG succeeded although the file cannot be written")
		}
		if s.Load().ClientMaxConnections != 77 || s.Saved().ClientMaxConnections != 77 {
			t.Error("a refused ALTER changed the configuration")
		}
		if b, _ := os.ReadFile(path); string(b) != text {
			t.Errorf("the file changed: %q", b)
		}
	}
	t.Run("write fails", func(t *testing.T) {
		dir := t.TempDir()
		if err := os.WriteFile(filepath.Join(dir, FileName), []byte(text), 0o400); err != nil {
			t.Fatal(err)
		}
		writeConfigFile = func(string, *Config) error { return &os.PathError{Op: "open", Path: dir, Err: syscall.EROFS} }
		defer func() { writeConfigFile = writeFile }()
		check(t, dir)
	})
	t.Run("read-only directory", func(t *testing.T) {
		if os.Geteuid() == 0 {
			t.Skip("root writes a directory whatever its mode")
		}
		dir := t.TempDir()
		if err := os.WriteFile(filepath.Join(dir, FileName), []byte(text), 0o400); err != nil {
			t.Fatal(err)
		}
		if err := os.Chmod(dir, 0o500); err != nil {
			t.Fatal(err)
		}
		defer os.Chmod(dir, 0o700)
		check(t, dir)
	})
}

// TestLoadRefusesFIFO checks that a FIFO in the config file's place is an
// error, for Load and for Check, and does not hang either.
func TestLoadRefusesFIFO(t *testing.T) {
	dir := t.TempDir()
	if err := syscall.Mkfifo(filepath.Join(dir, FileName), 0o600); err != nil {
		t.Fatal(err)
	}
	done := make(chan [2]error, 1)
	go func() {
		_, err := Load(&Options{ConfigDir: dir})
		_, problems := Check(&Options{ConfigDir: dir})
		done <- [2]error{err, errors.Join(problems...)}
	}()
	select {
	case errs := <-done:
		for i, what := range []string{"Load", "Check"} {
			if errs[i] == nil || !strings.Contains(errs[i].Error(), "not a regular file") {
				t.Errorf("%s of a FIFO config file: %v, want not a regular file", what, errs[i])
			}
		}
	case <-time.After(10 * time.Second):
		t.Fatal("reading a FIFO config file did not return within 10s")
	}
}
