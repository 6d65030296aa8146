package mariadbd

import (
	"context"
	"errors"
	"testing"
	"time"
)

// StartForTest starts a server for t and stops it in t.Cleanup. It never
// skips: when MariaDB is not installed the test fails with a message that
// says which package to install. When the test has failed, the tail of the
// server's error log is logged before the server is stopped.
func StartForTest(t testing.TB, opts Options) *Server {
	t.Helper()
	if _, err := findBinaries(); err != nil {
		if errors.Is(err, ErrNotInstalled) {
			t.Fatalf("%v; on Debian: apt-get install mariadb-server mariadb-client", err)
		}
		t.Fatal(err)
	}
	timeout := opts.StartTimeout
	if timeout <= 0 {
		timeout = 2 * time.Minute // the first start may build the template
	}
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	s, err := Start(ctx, opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("mariadbd %s error log tail:\n%s", s.Addr(), fileTail(s.errLog, 30))
		}
		if err := s.Stop(); err != nil {
			t.Error(err)
		}
	})
	return s
}
