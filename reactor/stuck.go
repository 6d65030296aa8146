package reactor

import (
	"fmt"
	"strings"
	"time"
)

// stuckGrace is how long Shutdown waits for the sessions it closed once
// its context ended. A session's teardown follows its close within
// milliseconds (the close callback, or the owner's end of its command);
// one still there after stuckGrace will never end, and Shutdown returns
// without it, naming it, rather than keep the process from exiting.
// Tests shorten it.
var stuckGrace = 5 * time.Second

// StuckSessionsError is Shutdown's error when sessions did not end within
// stuckGrace of being closed after the drain's context ended: a session
// whose teardown never ran (a defect of obgate's close path). Shutdown
// returned without them; what they hold is released when the process
// exits. Sessions describes each one's state for the report of the
// defect.
type StuckSessionsError struct {
	Sessions []string
}

func (e *StuckSessionsError) Error() string {
	return fmt.Sprintf("reactor: %d sessions did not end after they were closed: %s",
		len(e.Sessions), strings.Join(e.Sessions, "; "))
}

// stuckSessions describes the sessions still on the server's books.
func (srv *Server) stuckSessions() *StuckSessionsError {
	e := &StuckSessionsError{}
	srv.eachSession(func(s *Session) { e.Sessions = append(e.Sessions, s.drv.describeClose()) })
	return e
}

// describeClose says where a session stands on its way out: what a close
// path waits for. Any goroutine; every field read is atomic or immutable.
func (d *driver) describeClose() string {
	s := d.s
	transport, _ := s.client.transportName.Load().(string)
	idle := time.Since(time.Unix(0, s.activity.lastActive.Load())).Round(time.Millisecond)
	return fmt.Sprintf("session %d (client %s, transport %q): state %s, command %d, close request %d, "+
		"in transaction %t, torn down %t, poller-driven %t, poller stage %d, kicked %t, "+
		"client closed %t, client gone %t, last active %s ago",
		s.id, s.client.addr, transport, s.State(), s.activity.curCmd.Load(), s.lifecycle.closeReq.Load(),
		s.activity.inTrans.Load(), s.lifecycle.torndown.Load(), d.hooked.Load(), d.poll.Load(), d.kicked.Load(),
		d.clientClosed.Load(), d.clientGone.Load(), idle)
}
