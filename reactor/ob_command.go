package reactor

import (
	"context"
	"time"

	"obgate/mysqlproto"
	"obgate/reactor/backend"
)

// OceanBase mode's column of the command table (commands.go): COM_PING is
// answered by obgate (a server session that broke is replaced anyway);
// COM_CHANGE_USER and COM_SET_OPTION apply to every server session.

func servePingOB(s *Session, _ mysqlproto.Command, n int, _ []byte, _ bool, _ time.Time) (bool, error) {
	if err := s.client.skipPacket(n); err != nil {
		return true, err
	}
	return true, s.writeOK(0, "")
}

func serveChangeUserOB(s *Session, _ mysqlproto.Command, n int, _ []byte, _ bool, start time.Time) (bool, error) {
	return true, obUserChange{s.ob}.obChangeUser(n, start)
}

func serveSetOptionOB(s *Session, _ mysqlproto.Command, n int, body []byte, whole bool, start time.Time) (bool, error) {
	return true, s.ob.obSetOption(n, body, whole, start)
}

// serverFor picks and prepares the server session for a statement and
// makes it current. A server session whose sync step fails is dropped and
// another one tried, its server put last (nothing of the statement was
// sent yet), up to three times.
func (o *obSession) serverFor(need routeNeed) (*backend.Conn, error) {
	s := o.s
	// Each connection attempt has its own short_async_task_timeout (see
	// openServer), so one hung server does not use up the others' time.
	ctx := context.Background()
	var lastErr error
	for range 3 {
		be, err := o.pickServer(ctx, need)
		if err != nil {
			return nil, err
		}
		if err := o.syncServer(be); err != nil {
			inTrans, pinned := o.serverInTrans(), o.pinned && be == o.s.servers.Last()
			lastErr = err
			s.st.tried = append(s.st.tried, be.Addr)
			o.drop(be)
			switch {
			case inTrans:
				return nil, errTxnServerLost
			case pinned:
				o.pinned, o.trxSpecified = false, false
				return nil, errPinnedServerLost
			}
			continue
		}
		o.s.servers.Use(be)
		return be, nil
	}
	return nil, lastErr
}
