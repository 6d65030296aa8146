// Package warnlog keeps the latest WARN-and-above log records in memory
// for SHOW WARNLOG: a bounded ring filled by a slog.Handler that wraps the
// process's own handler. cmd/obgate installs the handler around the one
// that writes the log; the admin package reads the ring.
package warnlog

import (
	"context"
	"log/slog"
	"strconv"
	"sync"
	"time"
	"unicode/utf8"
)

// DefaultSize is the number of records a ring made by cmd/obgate keeps.
const DefaultSize = 1000

// MaxText is the longest text kept of one record, in bytes; a longer one
// is cut there and ends with "...".
const MaxText = 1024

// Record is one kept log record.
type Record struct {
	ID    uint64 // 1 for the first record the ring kept, then one more each
	Time  time.Time
	Level slog.Level
	Text  string // level, message and attributes as key=value pairs
}

// Ring is a fixed-size ring of the latest records. Safe for concurrent
// use: Add (the logging goroutines) and Records (admin) take its mutex for
// a copy of one record or of the slots.
type Ring struct {
	mu   sync.Mutex
	recs []Record // len is the capacity; slot id%len holds record id
	next uint64   // id of the next record
}

// NewRing returns a ring that keeps the last n records (n < 1 means 1).
func NewRing(n int) *Ring {
	return &Ring{recs: make([]Record, max(n, 1)), next: 1}
}

// Add keeps rec, overwriting the oldest when the ring is full, and
// returns the id it got.
func (r *Ring) Add(t time.Time, level slog.Level, text string) uint64 {
	r.mu.Lock()
	id := r.next
	r.next++
	r.recs[id%uint64(len(r.recs))] = Record{ID: id, Time: t, Level: level, Text: text}
	r.mu.Unlock()
	return id
}

// Records returns the kept records, oldest first.
func (r *Ring) Records() []Record {
	r.mu.Lock()
	defer r.mu.Unlock()
	n := uint64(len(r.recs))
	first := uint64(1)
	if r.next > n {
		first = r.next - n
	}
	out := make([]Record, 0, r.next-first)
	for id := first; id < r.next; id++ {
		out = append(out, r.recs[id%n])
	}
	return out
}

// Handler passes every record to the handler it wraps and keeps those at
// slog.LevelWarn and above in its ring. Like any slog.Handler it may be
// used from many goroutines.
type Handler struct {
	next   slog.Handler
	ring   *Ring
	prefix string // attributes from WithAttrs, formatted, each with a leading space
	group  string // open groups, "a.b." for keys
}

// NewHandler wraps next, keeping warnings and errors in ring.
func NewHandler(ring *Ring, next slog.Handler) *Handler {
	return &Handler{next: next, ring: ring}
}

// Enabled reports whether the wrapped handler wants level, or the ring
// does (WARN and above).
func (h *Handler) Enabled(ctx context.Context, level slog.Level) bool {
	return level >= slog.LevelWarn || h.next.Enabled(ctx, level)
}

// Handle keeps a WARN-or-above record in the ring and passes the record on
// when the wrapped handler is enabled for its level.
func (h *Handler) Handle(ctx context.Context, rec slog.Record) error {
	if rec.Level >= slog.LevelWarn {
		h.keep(rec)
	}
	if h.next.Enabled(ctx, rec.Level) {
		return h.next.Handle(ctx, rec)
	}
	return nil
}

func (h *Handler) keep(rec slog.Record) {
	buf := make([]byte, 0, 128)
	buf = append(buf, rec.Level.String()...)
	buf = append(buf, ' ')
	buf = append(buf, rec.Message...)
	buf = append(buf, h.prefix...)
	rec.Attrs(func(a slog.Attr) bool {
		buf = appendAttr(buf, h.group, a)
		return len(buf) < MaxText
	})
	if len(buf) > MaxText {
		cut := MaxText - 3
		for cut > 0 && !utf8.RuneStart(buf[cut]) {
			cut--
		}
		buf = append(buf[:cut], "..."...)
	}
	t := rec.Time
	if t.IsZero() {
		t = time.Now()
	}
	h.ring.Add(t, rec.Level, string(buf))
}

// WithAttrs returns a handler whose records carry attrs.
func (h *Handler) WithAttrs(attrs []slog.Attr) slog.Handler {
	c := *h
	c.next = h.next.WithAttrs(attrs)
	buf := []byte(h.prefix)
	for _, a := range attrs {
		buf = appendAttr(buf, h.group, a)
	}
	c.prefix = string(buf)
	return &c
}

// WithGroup returns a handler that puts later attributes under name.
func (h *Handler) WithGroup(name string) slog.Handler {
	if name == "" {
		return h
	}
	c := *h
	c.next = h.next.WithGroup(name)
	c.group = h.group + name + "."
	return &c
}

// appendAttr appends " key=value" (groups flattened to a.b=value).
func appendAttr(buf []byte, group string, a slog.Attr) []byte {
	a.Value = a.Value.Resolve()
	if a.Equal(slog.Attr{}) {
		return buf
	}
	if a.Value.Kind() == slog.KindGroup {
		g := group
		if a.Key != "" {
			g += a.Key + "."
		}
		for _, ga := range a.Value.Group() {
			buf = appendAttr(buf, g, ga)
		}
		return buf
	}
	buf = append(buf, ' ')
	buf = append(buf, group...)
	buf = append(buf, a.Key...)
	buf = append(buf, '=')
	s := a.Value.String()
	if needsQuote(s) {
		return strconv.AppendQuote(buf, s)
	}
	return append(buf, s...)
}

func needsQuote(s string) bool {
	if s == "" {
		return true
	}
	for i := 0; i < len(s); i++ {
		if c := s[i]; c <= ' ' || c == '=' || c == '"' || c >= 0x7f {
			return true
		}
	}
	return false
}
