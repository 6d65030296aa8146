package reactor_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"obgate/internal/testkit"
	"obgate/reactor"
)

// idleServerSessions waits until obgate must know that a stopped node
// closed its server sessions: the server watch reports a close as it
// arrives, and a connection the watch does not cover is peeked at once it
// has been idle for reactor.PeekIdleAfter. It waits twice that long;
// nothing depends on how fast the test runs. A break obgate has not
// learned of yet is caught by the relay (see TestOBFlashBreakInsideWindow).
func idleServerSessions() { time.Sleep(2 * reactor.PeekIdleAfter) }

// TestOBFlashBreakInsideWindow stops the node of a server session right
// after a statement used it and sends the next statement, a read, at
// once, racing the server watch's close event. The read runs on another
// node either way: routed there (obgate learned of the close first) or
// sent again after its server broke before answering. The client session
// goes on, with its state, on another node.
func TestOBFlashBreakInsideWindow(t *testing.T) {
	testkit.CheckLeaks(t)
	c := startOBSim(t)
	forEachMode(t, func(t *testing.T, mode string) {
		resetOBSim(t, c)
		p := startOBProxy(t, c, mode)
		_, conn := obConn(t, p)
		mk := newMarker("window")
		execCtx(t, conn, fmt.Sprintf("SET @w = 'kept' /* %s-set */", mk))
		rowStrings(t, conn, fmt.Sprintf("SELECT 1 /* %s-0 */", mk))
		x := entryFor(t, c, mk+"-0 ").Node
		if err := c.Node(x).Stop(); err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithTimeout(context.Background(), hangLimit)
		defer cancel()
		// A read: if it reached the stopped node before obgate learned of
		// the close, it is sent again elsewhere; either way it answers.
		rows, err := conn.QueryContext(ctx, fmt.Sprintf("SELECT @w /* %s-1 */", mk))
		if err != nil {
			t.Fatalf("the read after the break: %v, want its answer", err)
		}
		got, serr := scanStrings(rows)
		rows.Close()
		if serr != nil || fmt.Sprint(got) != "[[kept]]" {
			t.Fatalf("the read after the break: %q, %v", got, serr)
		}
		for i := 2; i < 5; i++ {
			got := rowStrings(t, conn, fmt.Sprintf("SELECT @w /* %s-%d */", mk, i))
			if fmt.Sprint(got) != "[[kept]]" {
				t.Errorf("statement %d after the break: %q, want [[kept]]", i, got)
			}
			if n := entryFor(t, c, fmt.Sprintf("%s-%d ", mk, i)).Node; n == x {
				t.Errorf("statement %d ran on the stopped node %s", i, x)
			}
		}
	})
}
