package testkit

import (
	"io"
	"log/slog"
	"os"
	"strings"
	"sync"
	"testing"
)

// NewLogger returns a logger that writes to tb.Log until tb's cleanups
// run, and drops records after that (a late log line must not panic the
// test binary). The level is warn unless OBGATE_TEST_LOG says debug, info
// or error. A *testing.F may not log while its fuzz target runs, so for
// one the records go to standard error when OBGATE_TEST_LOG is set and
// are dropped otherwise.
func NewLogger(tb testing.TB) *slog.Logger {
	var w io.Writer
	if _, fuzz := tb.(*testing.F); fuzz {
		w = io.Discard
		if os.Getenv("OBGATE_TEST_LOG") != "" {
			w = os.Stderr
		}
	} else {
		tw := &tbWriter{tb: tb}
		tb.Cleanup(tw.stop)
		w = tw
	}
	level := slog.LevelWarn
	switch strings.ToLower(os.Getenv("OBGATE_TEST_LOG")) {
	case "debug":
		level = slog.LevelDebug
	case "info":
		level = slog.LevelInfo
	case "error":
		level = slog.LevelError
	}
	return slog.New(slog.NewTextHandler(w, &slog.HandlerOptions{Level: level}))
}

type tbWriter struct {
	mu      sync.Mutex
	tb      testing.TB
	stopped bool
}

func (w *tbWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if !w.stopped {
		w.tb.Log(strings.TrimRight(string(p), "\n"))
	}
	return len(p), nil
}

func (w *tbWriter) stop() {
	w.mu.Lock()
	w.stopped = true
	w.mu.Unlock()
}
