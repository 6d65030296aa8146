package obpart

import (
	"testing"
	"time"
)

func TestParseTimeZone(t *testing.T) {
	at := time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)
	for _, tc := range []struct {
		in     string
		offset int // seconds east of UTC at 2024-01-01
		none   bool
	}{
		{"+08:00", 8 * 3600, false},
		{"+8:00", 8 * 3600, false},
		{"-05:30", -(5*3600 + 1800), false},
		{" +00:00 ", 0, false},
		{"UTC", 0, false},
		{"SYSTEM", 0, true},
		{"", 0, true},
		{"+8", 0, true},
		{"+25:00", 0, true},
		{"+08:0", 0, true},
		{"no/such_zone", 0, true},
	} {
		loc := ParseTimeZone(tc.in)
		switch {
		case tc.none && loc != nil:
			t.Errorf("ParseTimeZone(%q) = %v, want nil", tc.in, loc)
		case !tc.none && loc == nil:
			t.Errorf("ParseTimeZone(%q) = nil", tc.in)
		case loc != nil:
			if _, off := at.In(loc).Zone(); off != tc.offset {
				t.Errorf("ParseTimeZone(%q): offset %d, want %d", tc.in, off, tc.offset)
			}
		}
	}
	if loc := ParseTimeZone("Asia/Shanghai"); loc != nil {
		if _, off := at.In(loc).Zone(); off != 8*3600 {
			t.Errorf("Asia/Shanghai offset %d", off)
		}
	}
}
