package mariadbd

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"time"
)

// templateLayout is part of the template's directory name. Bump it whenever
// the way the template is built changes, so that old caches are not reused.
const templateLayout = 1

// templateInitSQL runs after the system tables are created. install-db adds
// root@<hostname> even with --skip-name-resolve, and the server then warns
// about it on every start; only loopback accounts are wanted.
const templateInitSQL = `DELETE FROM mysql.global_priv WHERE Host NOT IN ('localhost', '127.0.0.1', '::1');
DELETE FROM mysql.proxies_priv WHERE Host NOT IN ('localhost', '127.0.0.1', '::1');
`

// defaultCacheDir is $XDG_CACHE_HOME/obgate (~/.cache/obgate) when it can be
// created, else a per-user directory under os.TempDir().
func defaultCacheDir() string {
	if d, err := os.UserCacheDir(); err == nil {
		d = filepath.Join(d, "obgate")
		if os.MkdirAll(d, 0o755) == nil {
			return d
		}
	}
	return filepath.Join(os.TempDir(), "obgate-cache-"+strconv.Itoa(os.Getuid()))
}

// ensureTemplate returns a datadir with initialised system tables for the
// server version in b, creating it in cacheDir if needed.
//
// Concurrent test processes are safe: the template is built in a private
// directory and renamed into place, so it is either absent or complete. A lock
// file only spares the machine several simultaneous install-db runs.
func ensureTemplate(ctx context.Context, b binaries, cacheDir string) (string, error) {
	final := filepath.Join(cacheDir, fmt.Sprintf("mariadb-template-%s.%d", safeName(b.version), templateLayout))
	if isDir(final) {
		return final, nil
	}
	if err := os.MkdirAll(cacheDir, 0o755); err != nil {
		return "", fmt.Errorf("mariadbd: template cache: %w", err)
	}
	unlock, err := lockFile(ctx, filepath.Join(cacheDir, ".template.lock"))
	if err != nil {
		return "", fmt.Errorf("mariadbd: template cache lock: %w", err)
	}
	defer unlock()
	if isDir(final) {
		return final, nil
	}

	work, err := os.MkdirTemp(cacheDir, ".build-")
	if err != nil {
		return "", fmt.Errorf("mariadbd: template: %w", err)
	}
	defer os.RemoveAll(work)
	initFile := filepath.Join(work, "init.sql")
	if err := os.WriteFile(initFile, []byte(templateInitSQL), 0o644); err != nil {
		return "", fmt.Errorf("mariadbd: template: %w", err)
	}
	data := filepath.Join(work, "data")
	args := []string{
		"--no-defaults", // must come first
		"--datadir=" + data,
		"--auth-root-authentication-method=normal", // root without a password
		"--skip-test-db",
		"--skip-name-resolve",
		"--extra-file=" + initFile,
		// Passed through to the bootstrap server. The redo log is created at
		// the size servers start with by default, so they need not resize it.
		"--innodb-log-file-size=" + strconv.FormatInt(DefaultLogFileSize, 10),
		"--innodb-doublewrite=0",
	}
	if os.Geteuid() == 0 {
		args = append(args, "--user=root")
	}
	cmd := exec.CommandContext(ctx, b.installDB, args...)
	cmd.Dir = work
	cmd.WaitDelay = 5 * time.Second
	start := time.Now()
	out, err := cmd.CombinedOutput()
	if err != nil {
		return "", fmt.Errorf("mariadbd: %s failed after %v: %w\n%s", b.installDB, time.Since(start).Round(time.Millisecond), err, tail(out, 40))
	}
	if err := os.Rename(data, final); err != nil {
		if isDir(final) { // another process won the race
			return final, nil
		}
		return "", fmt.Errorf("mariadbd: template: %w", err)
	}
	return final, nil
}

func isDir(p string) bool {
	st, err := os.Stat(p)
	return err == nil && st.IsDir()
}

// copyTree copies the directory src to dst, which must not exist. Regular
// files go through io.Copy, which uses copy_file_range on Linux.
func copyTree(src, dst string) error {
	return filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(src, p)
		if err != nil {
			return err
		}
		target := filepath.Join(dst, rel)
		info, err := d.Info()
		if err != nil {
			return err
		}
		switch {
		case d.IsDir():
			return os.Mkdir(target, info.Mode().Perm()|0o700)
		case info.Mode().IsRegular():
			return copyFile(p, target, info.Mode().Perm()|0o600)
		case info.Mode()&fs.ModeSymlink != 0:
			link, err := os.Readlink(p)
			if err != nil {
				return err
			}
			return os.Symlink(link, target)
		default:
			return nil // sockets and the like are not part of a datadir
		}
	})
}

func copyFile(src, dst string, perm fs.FileMode) (err error) {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.OpenFile(dst, os.O_WRONLY|os.O_CREATE|os.O_EXCL, perm)
	if err != nil {
		return err
	}
	defer func() {
		if cerr := out.Close(); err == nil {
			err = cerr
		}
	}()
	_, err = io.Copy(out, in)
	return err
}

// tail returns the last n lines of b.
func tail(b []byte, n int) string {
	end := len(b)
	for end > 0 && (b[end-1] == '\n' || b[end-1] == '\r') {
		end--
	}
	i := end
	for lines := 0; i > 0; i-- {
		if b[i-1] == '\n' {
			lines++
			if lines == n {
				break
			}
		}
	}
	return string(b[i:end])
}

// fileTail returns the last n lines of the file at path, or a note saying why
// it could not be read.
func fileTail(path string, n int) string {
	f, err := os.Open(path)
	if err != nil {
		return "(" + err.Error() + ")"
	}
	defer f.Close()
	const maxRead = 64 << 10
	if st, err := f.Stat(); err == nil && st.Size() > maxRead {
		if _, err := f.Seek(-maxRead, io.SeekEnd); err != nil {
			return "(" + err.Error() + ")"
		}
	}
	b, err := io.ReadAll(f)
	if err != nil && !errors.Is(err, io.EOF) {
		return "(" + err.Error() + ")"
	}
	return tail(b, n)
}
