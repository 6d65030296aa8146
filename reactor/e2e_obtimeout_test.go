package reactor_test

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"obgate/internal/testkit"
	"obgate/mysqlproto"
	"obgate/reactor"

	"github.com/go-sql-driver/mysql"
)

// TestOBHungServerTimeout hangs the node a session uses: obgate waits for
// the answer no longer than ob_query_timeout plus
// observer_query_timeout_delta, fails that statement with ERR 4012, drops
// the server session, and the next statement runs on another node with
// the session's state.
func TestOBHungServerTimeout(t *testing.T) {
	testkit.CheckLeaks(t)
	c := startOBSim(t)
	forEachMode(t, func(t *testing.T, mode string) {
		resetOBSim(t, c)
		p := startOBProxy(t, c, mode, "observer_query_timeout_delta", "1s")
		_, conn := obConn(t, p)
		mk := newMarker("hung")
		execCtx(t, conn, fmt.Sprintf("SET ob_query_timeout = 500000, @h = 'still here' /* %s-set */", mk))
		polled := reactor.PolledFinished()
		rowStrings(t, conn, fmt.Sprintf("SELECT 1 /* %s-0 */", mk))
		if mode == "netpoll" {
			// The statements of this session run on the poller, so the
			// one that meets the hung node awaits its answer there: the
			// answer timer must move it off.
			testkit.Eventually(t, hangLimit, func() bool { return reactor.PolledFinished() > polled },
				"SELECT 1 did not end on the poller")
		}
		x := entryFor(t, c, mk+"-0 ").Node
		c.Node(x).Hang()
		defer c.Node(x).Unhang()
		ctx, cancel := context.WithTimeout(context.Background(), hangLimit)
		defer cancel()
		_, err := conn.ExecContext(ctx, fmt.Sprintf("SELECT 2 /* %s-1 */", mk))
		var me *mysql.MySQLError
		if !errors.As(err, &me) || me.Number != mysqlproto.OBTimeout {
			t.Fatalf("statement on the hung node: %v, want ERR 4012", err)
		}
		got := rowStrings(t, conn, fmt.Sprintf("SELECT @h, @@ob_query_timeout /* %s-2 */", mk))
		if want := "[[still here 500000]]"; fmt.Sprint(got) != want {
			t.Fatalf("after the timeout: %q, want %s", got, want)
		}
		if n := entryFor(t, c, mk+"-2 ").Node; n == x {
			t.Fatalf("the statement after the timeout ran on the hung node %s", x)
		}
	})
}
