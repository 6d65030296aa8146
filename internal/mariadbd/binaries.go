package mariadbd

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
)

// ErrNotInstalled is returned (wrapped) by Start when mariadbd or
// mariadb-install-db cannot be found.
var ErrNotInstalled = errors.New("mariadbd: MariaDB server binaries not found (install the mariadb-server package)")

// binaries are the programs a server needs, and the server's version.
type binaries struct {
	installDB string // mariadb-install-db
	server    string // mariadbd
	version   string // e.g. "10.11.19-MariaDB-0+deb12u1"
}

var (
	binOnce sync.Once
	binVal  binaries
	binErr  error
)

// findBinaries locates the MariaDB programs once per process: first on PATH,
// then in the directories Debian installs them to (a non-root PATH usually
// lacks /usr/sbin).
func findBinaries() (binaries, error) {
	binOnce.Do(func() {
		binVal, binErr = lookupBinaries()
	})
	return binVal, binErr
}

func lookupBinaries() (binaries, error) {
	var b binaries
	var err error
	if b.installDB, err = lookProgram([]string{"mariadb-install-db", "mysql_install_db"}, "/usr/bin", "/usr/local/bin", "/usr/local/mysql/scripts"); err != nil {
		return b, err
	}
	if b.server, err = lookProgram([]string{"mariadbd", "mysqld"}, "/usr/sbin", "/usr/local/sbin", "/usr/local/mysql/bin"); err != nil {
		return b, err
	}
	out, err := exec.CommandContext(context.Background(), b.server, "--version").CombinedOutput()
	if err != nil {
		return b, fmt.Errorf("mariadbd: %s --version: %w: %s", b.server, err, strings.TrimSpace(string(out)))
	}
	b.version = parseVersion(string(out))
	if b.version == "" {
		return b, fmt.Errorf("mariadbd: cannot read the version from %q", strings.TrimSpace(string(out)))
	}
	return b, nil
}

// lookProgram returns the first of names found on PATH, else in dirs.
func lookProgram(names []string, dirs ...string) (string, error) {
	for _, n := range names {
		if p, err := exec.LookPath(n); err == nil {
			return p, nil
		}
	}
	for _, n := range names {
		for _, d := range dirs {
			p := filepath.Join(d, n)
			if st, err := os.Stat(p); err == nil && !st.IsDir() && st.Mode()&0o111 != 0 {
				return p, nil
			}
		}
	}
	return "", fmt.Errorf("%w: none of %v on PATH or in %v", ErrNotInstalled, names, dirs)
}

// parseVersion extracts the word after "Ver" from `mariadbd --version`, for
// example "mariadbd  Ver 10.11.19-MariaDB-0+deb12u1 for debian-linux-gnu".
func parseVersion(s string) string {
	f := strings.Fields(s)
	for i := 0; i+1 < len(f); i++ {
		if f[i] == "Ver" {
			return f[i+1]
		}
	}
	return ""
}

// safeName keeps the characters of s that are harmless in a file name.
func safeName(s string) string {
	var b strings.Builder
	for _, r := range s {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', r == '.', r == '-', r == '+', r == '_':
			b.WriteRune(r)
		default:
			b.WriteByte('_')
		}
	}
	return b.String()
}
