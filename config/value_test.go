package config

import (
	"math"
	"strings"
	"testing"
	"time"
)

func TestParseDuration(t *testing.T) {
	tests := []struct {
		in      string
		want    time.Duration
		wantErr string
	}{
		{in: "0", want: 0},
		{in: "0s", want: 0},
		{in: "0d", want: 0},
		{in: "20", want: 20 * time.Second},
		{in: "20s", want: 20 * time.Second},
		{in: "20S", want: 20 * time.Second},
		{in: "100ms", want: 100 * time.Millisecond},
		{in: "100MS", want: 100 * time.Millisecond},
		{in: "7us", want: 7 * time.Microsecond},
		{in: "5m", want: 5 * time.Minute},
		{in: "1h", want: time.Hour},
		{in: "1d", want: 24 * time.Hour},
		{in: "180000s", want: 180000 * time.Second},
		{in: "106751d", want: 106751 * Day},
		{in: "", wantErr: "non-negative number"},
		{in: "s", wantErr: "non-negative number"},
		{in: "-1s", wantErr: "non-negative number"},
		{in: "+1s", wantErr: "non-negative number"},
		{in: "1.5s", wantErr: "unknown time unit"},
		{in: "1h30m", wantErr: "unknown time unit"},
		{in: "20 s", wantErr: "unknown time unit"},
		{in: "5ns", wantErr: "unknown time unit"},
		{in: "5w", wantErr: "unknown time unit"},
		{in: "106752d", wantErr: "too large"},
		{in: "9223372037s", wantErr: "too large"},
		{in: "99999999999999999999", wantErr: "too large"},
	}
	for _, tt := range tests {
		got, err := ParseDuration(tt.in)
		if tt.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Errorf("ParseDuration(%q) = %v, %v; want error containing %q", tt.in, got, err, tt.wantErr)
			}
			continue
		}
		if err != nil || got != tt.want {
			t.Errorf("ParseDuration(%q) = %v, %v; want %v", tt.in, got, err, tt.want)
		}
	}
}

func TestParseCapacity(t *testing.T) {
	tests := []struct {
		in      string
		want    int64
		wantErr string
	}{
		{in: "0", want: 0},
		{in: "4096", want: 4096},
		{in: "10b", want: 10},
		{in: "8KB", want: 8 << 10},
		{in: "8kb", want: 8 << 10},
		{in: "8K", want: 8 << 10},
		{in: "16MB", want: 16 << 20},
		{in: "16M", want: 16 << 20},
		{in: "2G", want: 2 << 30},
		{in: "1GB", want: 1 << 30},
		{in: "1T", want: 1 << 40},
		{in: "3PB", want: 3 << 50},
		{in: "8191PB", want: 8191 << 50},
		{in: "", wantErr: "non-negative number"},
		{in: "KB", wantErr: "non-negative number"},
		{in: "-1KB", wantErr: "non-negative number"},
		{in: "1.5MB", wantErr: "unknown capacity unit"},
		{in: "8 KB", wantErr: "unknown capacity unit"},
		{in: "8KiB", wantErr: "unknown capacity unit"},
		{in: "1EB", wantErr: "unknown capacity unit"},
		{in: "8192PB", wantErr: "too large"},
		{in: "9223372036854775808", wantErr: "too large"},
	}
	for _, tt := range tests {
		got, err := ParseCapacity(tt.in)
		if tt.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Errorf("ParseCapacity(%q) = %v, %v; want error containing %q", tt.in, got, err, tt.wantErr)
			}
			continue
		}
		if err != nil || got != tt.want {
			t.Errorf("ParseCapacity(%q) = %v, %v; want %v", tt.in, got, err, tt.want)
		}
	}
}

func TestParseBool(t *testing.T) {
	for _, in := range []string{"true", "TRUE", "True", "yes", "on", "1"} {
		if b, err := parseBool(in); err != nil || !b {
			t.Errorf("parseBool(%q) = %v, %v; want true", in, b, err)
		}
	}
	for _, in := range []string{"false", "False", "no", "OFF", "0"} {
		if b, err := parseBool(in); err != nil || b {
			t.Errorf("parseBool(%q) = %v, %v; want false", in, b, err)
		}
	}
	for _, in := range []string{"", "2", "t", "truee", " true"} {
		if _, err := parseBool(in); err == nil {
			t.Errorf("parseBool(%q) succeeded; want error", in)
		}
	}
}

func TestParseInt(t *testing.T) {
	if n, err := parseInt("-42"); err != nil || n != -42 {
		t.Errorf("parseInt(-42) = %v, %v", n, err)
	}
	if n, err := parseInt("9223372036854775807"); err != nil || n != math.MaxInt64 {
		t.Errorf("parseInt(max) = %v, %v", n, err)
	}
	for in, want := range map[string]string{"9223372036854775808": "too large", "12a": "integer", "": "integer", "1e3": "integer"} {
		if _, err := parseInt(in); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("parseInt(%q) error = %v; want it to contain %q", in, err, want)
		}
	}
}

func TestHashPassword(t *testing.T) {
	tests := []struct{ in, want string }{
		{"abc", "a9993e364706816aba3e25717850c26c9cd0d89d"},
		{"", ""},
		{"password", "5baa61e4c9b93f3f0682250b6cf8331b7ee68fd8"},
	}
	for _, tt := range tests {
		if got := HashPassword(tt.in); got != tt.want {
			t.Errorf("HashPassword(%q) = %q; want %q", tt.in, got, tt.want)
		}
	}
	if !isSHA1Hex("A9993E364706816ABA3E25717850C26C9CD0D89D") || isSHA1Hex("a9993e364706816aba3e25717850c26c9cd0d89") ||
		isSHA1Hex("g9993e364706816aba3e25717850c26c9cd0d89d") {
		t.Error("isSHA1Hex accepts or rejects the wrong strings")
	}
}

func TestFormatRoundTrip(t *testing.T) {
	durs := []time.Duration{0, time.Microsecond, 1500 * time.Microsecond, 100 * time.Millisecond,
		20 * time.Second, 90 * time.Second, time.Hour, 36 * time.Hour, 180000 * time.Second}
	for _, d := range durs {
		s := formatDuration(d)
		if got, err := ParseDuration(s); err != nil || got != d {
			t.Errorf("ParseDuration(formatDuration(%v) = %q) = %v, %v", d, s, got, err)
		}
	}
	if got := formatDuration(20 * time.Second); got != "20s" {
		t.Errorf("formatDuration(20s) = %q", got)
	}
	caps := []int64{0, 1, 1000, 1024, 8 << 10, 16 << 20, 2 << 30, 1<<40 + 1}
	for _, n := range caps {
		s := formatCapacity(n)
		if got, err := ParseCapacity(s); err != nil || got != n {
			t.Errorf("ParseCapacity(formatCapacity(%d) = %q) = %v, %v", n, s, got, err)
		}
	}
	if got := formatCapacity(8 << 10); got != "8KB" {
		t.Errorf("formatCapacity(8KB) = %q", got)
	}
}
