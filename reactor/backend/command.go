package backend

// obgate's own commands on a server session (variable sync, prepares
// again, KILL, init_sql): sent and read whole, never relayed to a client.

import (
	"errors"
	"fmt"
	"time"

	"obgate/mysqlproto"
	"obgate/reactor/connio"
)

// ErrServerState reports a server ERR on one of obgate's own commands
// (a sync step, a prepare again); the SQL error is wrapped in it.
var ErrServerState = errors.New("server refused a session sync step")

// ErrUnexpectedAnswer: one of obgate's own commands was answered with
// something it cannot take (rows where an OK was due); the server session
// is mid-answer and must be closed.
var ErrUnexpectedAnswer = errors.New("unexpected response")

// CommandOptions is how obgate's own commands read their answers.
type CommandOptions struct {
	// Caps are the capabilities the client session negotiated, which the
	// server session was logged in with: they shape the answer.
	Caps mysqlproto.Capability
	// Timeout bounds the wait for the answer (short_async_task_timeout).
	Timeout time.Duration
	// Learn, when set, is given the session-state report of each OK.
	Learn func(state []byte, status mysqlproto.ServerStatus)
}

// Command sends payload, one of obgate's own commands, and reads the
// whole answer, which may not carry rows (OK, ERR, or a prepare
// response). A server ERR comes back as ErrServerState wrapping the SQL
// error. Only the goroutine running the owning session's command calls
// it; it waits for the server.
func (b *Conn) Command(payload []byte, opt CommandOptions) (*mysqlproto.ResponseScanner, error) {
	pkt, _ := mysqlproto.AppendPacket(make([]byte, 0, len(payload)+mysqlproto.HeaderLen), 0, payload)
	if err := b.WriteRequest(pkt, true, true); err != nil {
		return nil, err
	}
	sc := new(mysqlproto.ResponseScanner)
	sc.Reset(mysqlproto.Command(payload[0]), opt.Caps, b.Status)
	_ = b.NetConn.SetReadDeadline(time.Now().Add(opt.Timeout))
	// The deadline is this command's only: mysql mode sets none for the
	// client's statements, which would otherwise inherit it.
	defer func() { _ = b.NetConn.SetReadDeadline(time.Time{}) }()
	// A chunk window, as the relay reads a rewritten answer into (nothing
	// is relayed: the answer is consumed as it is decided).
	win := Window{Buf: connio.GetChunk(4096)}
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
				return nil, fmt.Errorf("%w: %w", ErrServerState, mysqlproto.SQLErrorFromERR(e))
			}
			b.Status = sc.Status()
			if p[0] == mysqlproto.OKHeader && opt.Learn != nil {
				if ok, good := mysqlproto.ParseOK(p, mysqlproto.ClientSessionTrack); good && len(ok.SessionState) > 0 {
					opt.Learn(ok.SessionState, ok.Status)
				}
			}
			continue
		case mysqlproto.ScanPrepared:
			continue
		case mysqlproto.ScanError:
			return nil, sc.Err()
		case mysqlproto.ScanNeedMore:
		default:
			return nil, fmt.Errorf("%w to %s", ErrUnexpectedAnswer, mysqlproto.Command(payload[0]))
		}
		if sc.Done() {
			if dec != win.End {
				return nil, errors.New("server sent bytes after its response")
			}
			if err := b.FinishResponse(); err != nil {
				return nil, err
			}
			return sc, nil
		}
		win.Consumed(dec)
		dec = 0
		if k, err := win.Fill(b, sc.Want()); k == 0 && err != nil {
			return nil, err
		}
	}
}

// RoundTrip is Command for a command answered by a single OK (or ERR).
func (b *Conn) RoundTrip(payload []byte, opt CommandOptions) error {
	_, err := b.Command(payload, opt)
	return err
}
