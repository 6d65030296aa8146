package testkit

import (
	"testing"

	"go.uber.org/goleak"
)

// LeakOptions are the goleak options for obgate tests: netpoll's pollers
// are started once per process and live as long as it does, and so do the
// idle workers of its task pool (parked in taskPool.work, waiting for a
// task), so they are not leaks; extra options are appended.
func LeakOptions(extra ...goleak.Option) []goleak.Option {
	return append([]goleak.Option{
		goleak.IgnoreAnyFunction("github.com/cloudwego/netpoll.(*defaultPoll).Wait"),
		goleak.IgnoreTopFunction("obgate/reactor/connio.(*TaskPool).work"),
	}, extra...)
}

// CheckLeaks registers a check, run after every cleanup registered later
// (a proxy's shutdown, closing database handles), that no goroutine
// started since this call is still running. Call it first in a test.
// goleak retries for a while, so goroutines that are on their way out do
// not count.
func CheckLeaks(tb testing.TB) {
	tb.Helper()
	opts := LeakOptions(goleak.IgnoreCurrent())
	tb.Cleanup(func() {
		if err := goleak.Find(opts...); err != nil {
			tb.Errorf("goroutines left running after the test: %v", err)
		}
	})
}
