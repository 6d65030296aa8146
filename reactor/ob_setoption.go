package reactor

import (
	"encoding/binary"
	"time"

	"obgate/mysqlproto"
	"obgate/reactor/backend"
	"obgate/route"
)

// obSetOption runs the client's COM_SET_OPTION in OceanBase mode on one
// server session and, when the server took it, records the
// multi-statement option in the session state, so that syncServer gives
// it to every other server session before it runs a statement. body and
// whole are as serveOB got them.
//
// Called by the goroutine running the session's command.
func (o *obSession) obSetOption(n int, body []byte, whole bool, start time.Time) error {
	s := o.s
	known, on := false, false
	if whole && len(body) >= 2 {
		switch binary.LittleEndian.Uint16(body) {
		case backend.OptionMultiStatementsOn:
			known, on = true, true
		case backend.OptionMultiStatementsOff:
			known = true
		}
	}
	if _, err := o.serverFor(needAny); err != nil {
		return s.st.refuse(n, err)
	}
	s.st.beforeRequest()
	sent, err := s.st.relayPacket(n, false)
	s.countIn(int(sent))
	if err != nil {
		return err
	}
	relayed, err := s.st.answer(mysqlproto.ComSetOption, route.StmtOther, start, true)
	if err != nil || !relayed || s.scanner.IsErr() || !known {
		return err
	}
	o.vars.SetMultiStatements(on)
	o.vars.MarkSynced(&s.servers.Current().Sync)
	return nil
}
