package main

import (
	"os"
	"strconv"
	"testing"
	"time"
)

// TestTimerSlackExecutesOnce: a process whose environment says it already
// executed itself for the slack does not do it again, whatever the
// kernel reports (else this test process would be replaced).
func TestTimerSlackExecutesOnce(t *testing.T) {
	cur, err := currentTimerSlack()
	if err != nil {
		t.Fatal(err)
	}
	t.Setenv(reexecMark, strconv.Itoa(os.Getpid()))
	if err := applyTimerSlack(cur + time.Millisecond); err == nil {
		t.Fatal("no error for a slack that was not applied")
	}
	if err := applyTimerSlack(cur); err != nil {
		t.Fatalf("the slack in effect: %v", err)
	}
	if err := applyTimerSlack(0); err != nil {
		t.Fatalf("timer_slack=0: %v", err)
	}
}
