package warnlog

import (
	"bytes"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"
)

func TestRingKeepsTheLatest(t *testing.T) {
	r := NewRing(3)
	if got := r.Records(); len(got) != 0 {
		t.Fatalf("empty ring has %d records", len(got))
	}
	for _, s := range []string{"a", "b", "c", "d", "e"} {
		r.Add(testTime, slog.LevelWarn, s)
	}
	got := r.Records()
	var texts []string
	for _, rec := range got {
		texts = append(texts, rec.Text)
	}
	if strings.Join(texts, ",") != "c,d,e" || got[0].ID != 3 || got[2].ID != 5 {
		t.Fatalf("records %+v, want c,d,e with ids 3..5", got)
	}
}

func TestHandlerKeepsWarningsAndPassesEverything(t *testing.T) {
	var out bytes.Buffer
	next := slog.NewTextHandler(&out, &slog.HandlerOptions{Level: slog.LevelInfo})
	r := NewRing(10)
	log := slog.New(NewHandler(r, next)).With("cluster", "c1").WithGroup("g")
	log.Debug("not kept, not written")
	log.Info("written only", "k", 1)
	log.Warn("server refresh failed", "err", "dial tcp: refused", "n", 2)
	log.Error("broken", slog.Group("sub", "x", "y"))
	recs := r.Records()
	if len(recs) != 2 {
		t.Fatalf("kept %d records, want 2: %+v", len(recs), recs)
	}
	if want := `WARN server refresh failed cluster=c1 g.err="dial tcp: refused" g.n=2`; recs[0].Text != want {
		t.Errorf("text %q, want %q", recs[0].Text, want)
	}
	if want := `ERROR broken cluster=c1 g.sub.x=y`; recs[1].Text != want {
		t.Errorf("text %q, want %q", recs[1].Text, want)
	}
	if recs[0].Level != slog.LevelWarn || recs[1].ID != recs[0].ID+1 || recs[0].Time.IsZero() {
		t.Errorf("records %+v", recs)
	}
	if n := strings.Count(out.String(), "\n"); n != 3 || strings.Contains(out.String(), "not written") {
		t.Errorf("wrapped handler wrote %d lines:\n%s", n, out.String())
	}
}

func TestHandlerKeepsWarningsTheWrappedOneDrops(t *testing.T) {
	var out bytes.Buffer
	r := NewRing(4)
	log := slog.New(NewHandler(r, slog.NewTextHandler(&out, &slog.HandlerOptions{Level: slog.LevelError})))
	log.Warn("kept anyway")
	if len(r.Records()) != 1 || out.Len() != 0 {
		t.Fatalf("ring %+v, output %q", r.Records(), out.String())
	}
}

func TestHandlerCutsLongRecords(t *testing.T) {
	r := NewRing(1)
	log := slog.New(NewHandler(r, slog.NewTextHandler(&bytes.Buffer{}, nil)))
	log.Warn("long", "v", strings.Repeat("é", MaxText))
	text := r.Records()[0].Text
	if len(text) > MaxText || !strings.HasSuffix(text, "...") {
		t.Fatalf("text of %d bytes ends %q", len(text), text[len(text)-5:])
	}
}

func TestRingConcurrent(t *testing.T) {
	r := NewRing(50)
	log := slog.New(NewHandler(r, slog.NewTextHandler(&bytes.Buffer{}, &slog.HandlerOptions{Level: slog.LevelError})))
	var wg sync.WaitGroup
	for g := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 200 {
				log.Warn("w", "g", g, "i", i)
				_ = r.Records()
			}
		}()
	}
	wg.Wait()
	recs := r.Records()
	if len(recs) != 50 || recs[49].ID != 800 {
		t.Fatalf("%d records, last id %d; want 50 and 800", len(recs), recs[len(recs)-1].ID)
	}
}

var testTime = time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
