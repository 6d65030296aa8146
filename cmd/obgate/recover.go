package main

import (
	"fmt"
	"log/slog"
	"net/http"
	"runtime/debug"
)

// containHTTP wraps the metrics server's handlers (metrics, health, pprof)
// so that a panic in obgate code they call is logged once with its stack
// through slog and counted (count), and the request gets a 500; net/http
// would recover it too, but only onto stderr and uncounted. A handler that
// aborts with http.ErrAbortHandler is let through, as net/http expects.
// It runs on net/http's per-connection goroutines.
func containHTTP(next http.Handler, count func(), log *slog.Logger) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		defer func() {
			v := recover()
			if v == nil {
				return
			}
			if v == http.ErrAbortHandler {
				panic(v)
			}
			count()
			log.Error("panic recovered; closing what it hit", "where", "http", "path", r.URL.Path,
				"panic", fmt.Sprint(v), "stack", string(debug.Stack()))
			http.Error(w, "obgate internal error", http.StatusInternalServerError)
		}()
		next.ServeHTTP(w, r)
	})
}
