package reactor

import (
	"testing"
	"time"
)

// waitUntil polls cond every millisecond until it holds, and fails the
// test with what when it still does not after limit. limit is a give-up
// bound, not a measured time: give it plenty.
func waitUntil(t *testing.T, limit time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(limit)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("%s: not within %v", what, limit)
		}
		time.Sleep(time.Millisecond)
	}
}
