package reactor_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"obgate/reactor"
)

// A session whose teardown never runs must not keep Shutdown, and so the
// process, from ending: once its context ended and every session was
// closed, Shutdown waits stuckGrace and returns an error that names the
// session and its state. The session that can end does.
func TestShutdownReportsStuckSession(t *testing.T) {
	defer reactor.SetStuckGrace(300 * time.Millisecond)()
	p := startProxy(t, "netpoll")
	live := dialClient(t, p, "root", "")
	if _, err := live.Query("SELECT 1"); err != nil {
		t.Fatal(err)
	}
	id, end := p.Server.AddUnendingSession()
	defer end()
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	returned := make(chan error, 1)
	go func() { returned <- p.Server.Shutdown(ctx) }()
	var err error
	select {
	case err = <-returned:
	case <-time.After(hangLimit):
		t.Fatalf("Shutdown did not return %v after its context ended", hangLimit)
	}
	var stuck *reactor.StuckSessionsError
	if !errors.As(err, &stuck) {
		t.Fatalf("Shutdown = %v, want a *StuckSessionsError", err)
	}
	if len(stuck.Sessions) != 1 {
		t.Fatalf("stuck sessions %q, want only session %d", stuck.Sessions, id)
	}
	line := stuck.Sessions[0]
	for _, want := range []string{fmt.Sprintf("session %d ", id), "state COMMAND", "command 3", "close request 2"} {
		if !strings.Contains(line, want) {
			t.Errorf("report %q lacks %q", line, want)
		}
	}
	if _, ok := p.Server.Session(live.ConnectionID()); ok {
		t.Errorf("the session that could end, %d, is still there", live.ConnectionID())
	}
}
