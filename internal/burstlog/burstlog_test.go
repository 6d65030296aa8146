package burstlog

import (
	"errors"
	"testing"
	"time"
)

// TestBurstLog drives Log with a fake clock: the first event of a
// burst is reported at once, the rest of the burst in one line an
// interval later (here by calling flush, as the timer would), and no
// event is lost or counted twice.
func TestBurstLog(t *testing.T) {
	var lines []int64
	var errs []error
	now := time.Unix(1_000_000, 0)
	// An interval no test run reaches, so the real timer never fires.
	b := New(time.Hour, func(n int64, err error) {
		lines = append(lines, n)
		errs = append(errs, err)
	})
	b.now = func() time.Time { return now }
	e1, e2 := errors.New("one"), errors.New("two")

	b.Note(e1)
	if len(lines) != 1 || lines[0] != 1 || errs[0] != e1 {
		t.Fatalf("first event: lines %v %v, want one line for 1 event", lines, errs)
	}
	for range 5 {
		now = now.Add(time.Second)
		b.Note(e2)
	}
	if len(lines) != 1 {
		t.Fatalf("events within the interval wrote lines: %v", lines)
	}
	if !b.scheduled {
		t.Fatal("no flush scheduled for the tail of the burst")
	}
	b.flush()
	if len(lines) != 2 || lines[1] != 5 || errs[1] != e2 {
		t.Fatalf("flush: lines %v %v, want a second line for 5 events", lines, errs)
	}
	b.flush() // nothing pending: no line
	if len(lines) != 2 {
		t.Fatalf("an empty flush wrote a line: %v", lines)
	}

	// A later burst starts with a line of its own at once.
	now = now.Add(2 * time.Hour)
	b.Note(e1)
	now = now.Add(time.Minute)
	b.Note(e1)
	now = now.Add(time.Hour)
	b.Note(e2)
	if want := []int64{1, 5, 1, 2}; len(lines) != len(want) || lines[2] != 1 || lines[3] != 2 {
		t.Fatalf("lines %v, want %v", lines, want)
	}
}
