package reactor

// obgate's own commands on a server session (variable sync, prepares
// again, KILL): sent and read whole, never relayed to the client.

import (
	"errors"
	"fmt"
	"time"

	"obgate/mysqlproto"
	"obgate/reactor/backend"
	"obgate/reactor/connio"
)

// errUnexpectedAnswer: one of obgate's own commands was answered with
// something it cannot take (rows where an OK was due); the server session
// is mid-answer and must be closed.
var errUnexpectedAnswer = errors.New("unexpected response")

// internalRoundTrip runs one of obgate's own commands on be and reads its
// answer, which must be a single OK (or ERR). Its session-state report is
// learned like a client statement's.
func (st *statement) internalRoundTrip(be *backend.Conn, payload []byte) error {
	_, err := st.internalCommand(be, payload)
	return err
}

// internalPrepare prepares a statement on be for obgate itself and
// returns the server's statement id and counts.
func (st *statement) internalPrepare(be *backend.Conn, payload []byte) (id uint32, params, columns uint16, err error) {
	sc, err := st.internalCommand(be, payload)
	if err != nil {
		return 0, 0, 0, err
	}
	id, columns, params = sc.Prepared()
	return id, params, columns, nil
}

// internalCommand sends one of obgate's own commands to be and reads the
// whole answer, which may not carry rows (OK, ERR, or a prepare response).
// A server ERR comes back as errServerState wrapping the SQL error.
func (st *statement) internalCommand(be *backend.Conn, payload []byte) (*mysqlproto.ResponseScanner, error) {
	s := st.s
	pkt, _ := mysqlproto.AppendPacket(make([]byte, 0, len(payload)+mysqlproto.HeaderLen), 0, payload)
	if err := be.WriteRequest(pkt, true, true); err != nil {
		return nil, err
	}
	sc := new(mysqlproto.ResponseScanner)
	sc.Reset(mysqlproto.Command(payload[0]), s.caps, be.Status)
	_ = be.NetConn.SetReadDeadline(time.Now().Add(s.cfg.ShortAsyncTaskTimeout))
	// The deadline is this command's only: mysql mode sets none for the
	// client's statements, which would otherwise inherit it.
	defer func() { _ = be.NetConn.SetReadDeadline(time.Time{}) }()
	// A chunk window, as the relay reads a rewritten answer into (nothing
	// is relayed: the answer is consumed as it is decided).
	win := backend.Window{Buf: connio.GetChunk(4096)}
	defer win.Close()
	dec := 0
	for {
		n, ev := sc.Scan(win.Buf[dec:win.End])
		dec += n
		switch ev {
		case mysqlproto.ScanTerminator:
			p := sc.Packet()
			if sc.IsErr() {
				e, _ := mysqlproto.ParseERR(p)
				return nil, fmt.Errorf("%w: %w", errServerState, mysqlproto.SQLErrorFromERR(e))
			}
			be.Status = sc.Status()
			if p[0] == mysqlproto.OKHeader {
				if ok, good := mysqlproto.ParseOK(p, mysqlproto.ClientSessionTrack); good && len(ok.SessionState) > 0 {
					s.side.learnState(ok.SessionState, ok.Status)
				}
			}
			continue
		case mysqlproto.ScanPrepared:
			continue
		case mysqlproto.ScanError:
			return nil, sc.Err()
		case mysqlproto.ScanNeedMore:
		default:
			return nil, fmt.Errorf("%w to %s", errUnexpectedAnswer, mysqlproto.Command(payload[0]))
		}
		if sc.Done() {
			if dec != win.End {
				return nil, errors.New("server sent bytes after its response")
			}
			if err := be.FinishResponse(); err != nil {
				return nil, err
			}
			return sc, nil
		}
		win.Consumed(dec)
		dec = 0
		if k, err := win.Fill(be, sc.Want()); k == 0 && err != nil {
			return nil, err
		}
	}
}
