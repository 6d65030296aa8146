package main

import (
	"bytes"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"obgate/config"
)

func TestFDNeed(t *testing.T) {
	cfg := func(kv ...string) *config.Config {
		c := config.Default()
		for i := 0; i < len(kv); i += 2 {
			var err error
			if c, err = c.With(kv[i], kv[i+1]); err != nil {
				t.Fatal(err)
			}
		}
		return c
	}
	for _, tc := range []struct {
		name      string
		cfg       *config.Config
		need, per uint64
	}{
		{"mysql", cfg("server_routing_mode", "mysql", "client_max_connections", "1000"), 2000 + fdOverhead, 2},
		{"oceanbase, three root servers", cfg("client_max_connections", "100", "rootservice_list", "a:1;b:1;c:1"), 400 + fdOverhead, 4},
		{"oceanbase, no root server given", cfg("client_max_connections", "100"), 200 + fdOverhead, 2},
		{"unlimited", cfg("client_max_connections", "0"), 0, 0},
	} {
		need, per := fdNeed(tc.cfg)
		if need != tc.need || per != tc.per {
			t.Errorf("%s: fdNeed = %d, %d per client; want %d, %d", tc.name, need, per, tc.need, tc.per)
		}
	}
}

func TestFDSoftLimit(t *testing.T) {
	for _, tc := range []struct{ cur, hard, need, want uint64 }{
		{1024, 4096, 2000, 4096}, // raising helps
		{1024, 1500, 2000, 1500}, // helps, not enough
		{4096, 8192, 2000, 4096}, // enough already
		{1024, 1024, 2000, 1024}, // cannot raise
		{1024, 4096, 0, 4096},    // unknown need: raise
	} {
		if got := fdSoftLimit(tc.cur, tc.hard, tc.need); got != tc.want {
			t.Errorf("fdSoftLimit(%d, %d, %d) = %d, want %d", tc.cur, tc.hard, tc.need, got, tc.want)
		}
	}
}

// TestContainHTTP checks that a panicking handler behind containHTTP is
// counted, logged with its stack and answered with a 500, and that
// http.ErrAbortHandler still aborts.
func TestContainHTTP(t *testing.T) {
	var logs bytes.Buffer
	log := slog.New(slog.NewTextHandler(&logs, nil))
	count := 0
	mux := http.NewServeMux()
	mux.HandleFunc("/boom", func(http.ResponseWriter, *http.Request) { panic("boom") })
	mux.HandleFunc("/abort", func(http.ResponseWriter, *http.Request) { panic(http.ErrAbortHandler) })
	h := containHTTP(mux, func() { count++ }, log)

	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest("GET", "/boom", nil))
	if rec.Code != http.StatusInternalServerError || count != 1 {
		t.Errorf("panicking handler: status %d, counted %d; want 500 and 1", rec.Code, count)
	}
	if out := logs.String(); !strings.Contains(out, "where=http") || !strings.Contains(out, "stack=") {
		t.Errorf("log %q has no where=http line with a stack", out)
	}

	func() {
		defer func() {
			if v := recover(); v != http.ErrAbortHandler {
				t.Errorf("ErrAbortHandler: recovered %v, want it passed on", v)
			}
		}()
		h.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest("GET", "/abort", nil))
	}()
	if count != 1 {
		t.Errorf("an aborted handler was counted as a panic")
	}
}
