package testkit

import (
	"net"
	"testing"
	"time"
)

// FreePort returns a loopback TCP port that was free a moment ago. Another
// process may take it before the caller binds it; prefer listening on
// 127.0.0.1:0 where the code under test allows it.
func FreePort(tb testing.TB) int {
	tb.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		tb.Fatalf("testkit: free port: %v", err)
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port
}

// Eventually polls cond every few milliseconds until it returns true, and
// fails the test with msg when it has not after limit. limit guards
// against hangs; it is not a statement about speed, so give it plenty.
func Eventually(tb testing.TB, limit time.Duration, cond func() bool, msg string, args ...any) {
	tb.Helper()
	deadline := time.Now().Add(limit)
	for !cond() {
		if time.Now().After(deadline) {
			tb.Fatalf("testkit: still not true after %v: "+msg, append([]any{limit}, args...)...)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// EventuallyDescribe is Eventually with a failure message built when the
// limit is reached, so that it can show the state at that time.
func EventuallyDescribe(tb testing.TB, limit time.Duration, cond func() bool, describe func() string) {
	tb.Helper()
	deadline := time.Now().Add(limit)
	for !cond() {
		if time.Now().After(deadline) {
			tb.Fatalf("testkit: still not true after %v: %s", limit, describe())
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// EndToEnd marks a test as end-to-end: it starts MariaDB, obsim or obgate
// processes. With go test -short (make test-fast) it is skipped, so that
// the unit tests run alone in seconds; make test runs every test.
func EndToEnd(tb testing.TB) {
	tb.Helper()
	if testing.Short() {
		tb.Skip("end-to-end test (starts servers or processes): make test runs it, -short does not")
	}
}
