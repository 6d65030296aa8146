package reactor_test

import (
	"bytes"
	"context"
	"encoding/binary"
	"io"
	"net"
	"testing"
	"time"

	"obgate/mysqlproto"
)

// The prepared-statement path in mysql routing mode, as go-sql-driver
// drives it for a query with parameters: COM_STMT_PREPARE, then
// COM_STMT_EXECUTE, then COM_STMT_CLOSE, each query anew. obgate reads the
// prepare whole, keeps its text (to prepare it again on the server a
// session moves to), gives the client its own statement id and translates
// it in every execute and close.

// fakePreparedMySQL is fakeMySQL answering the prepared-statement
// commands too: every prepare gets statement id 7 with one parameter and
// one column, every execute the same one-row binary result; a close has
// no answer.
type fakePreparedMySQL struct {
	fakeListener
	greeting, okPacket []byte
	prepareResp        []byte
	executeResp        []byte
}

const fakeStmtID = 7

func startFakePreparedMySQL(tb testing.TB) *fakePreparedMySQL {
	tb.Helper()
	f := &fakePreparedMySQL{}
	f.greeting, f.okPacket = fakeLogin()
	col := mysqlproto.BigintColumn("v")
	colDef := col.Append(nil)
	eof := mysqlproto.AppendEOF(nil, 0, mysqlproto.StatusAutocommit)
	var seq uint8 = 1
	ok := []byte{0x00}
	ok = binary.LittleEndian.AppendUint32(ok, fakeStmtID)
	ok = binary.LittleEndian.AppendUint16(ok, 1) // columns
	ok = binary.LittleEndian.AppendUint16(ok, 1) // parameters
	ok = append(ok, 0, 0, 0)
	for _, p := range [][]byte{ok, colDef, eof, colDef, eof} { // OK, the parameter, the column
		f.prepareResp, seq = mysqlproto.AppendPacket(f.prepareResp, seq, p)
	}
	seq = 1
	row := []byte{0x00, 0x00}                      // header, NULL bitmap of one column
	row = binary.LittleEndian.AppendUint64(row, 1) // BIGINT 1
	for _, p := range [][]byte{{1}, colDef, eof, row, eof} {
		f.executeResp, seq = mysqlproto.AppendPacket(f.executeResp, seq, p)
	}
	listenFake(tb, &f.fakeListener, f.serve)
	return f
}

// serve answers prepares, executes of the fake statement id and closes.
func (f *fakePreparedMySQL) serve(c net.Conn) {
	serveFakePackets(c, f.greeting, f.okPacket, func(p []byte) ([]byte, bool) {
		switch {
		case len(p) == 0:
			return nil, false
		case p[0] == byte(mysqlproto.ComStmtPrepare):
			return f.prepareResp, true
		case p[0] == byte(mysqlproto.ComStmtExecute) && len(p) >= 5 && binary.LittleEndian.Uint32(p[1:]) == fakeStmtID:
			return f.executeResp, true
		case p[0] == byte(mysqlproto.ComStmtClose):
			return nil, true // no answer
		}
		return nil, false // a statement id obgate did not translate, or a command not expected here
	})
}

// psClient prepares, executes and closes a statement per round trip, on
// fixed buffers: it reads obgate's statement id from the prepare answer
// and writes it into its execute and close.
type psClient struct {
	conn                   net.Conn
	prepare, execute, stmt []byte // framed requests
	prepResp, execResp     []byte
	wantExec               []byte
}

func newPSClient(tb testing.TB, env *forwardEnv, f *fakePreparedMySQL) *psClient {
	tb.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	mc, err := mysqlproto.Dial(ctx, env.addr, mysqlproto.ClientOptions{User: env.user})
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { mc.Close() })
	prep, _ := mysqlproto.AppendPacket(nil, 0, append([]byte{byte(mysqlproto.ComStmtPrepare)}, "SELECT v FROM t WHERE id = ?"...))
	exec := []byte{byte(mysqlproto.ComStmtExecute), 0, 0, 0, 0, 0, 1, 0, 0, 0, 0x00, 1, 8, 0}
	exec = binary.LittleEndian.AppendUint64(exec, 42) // one BIGINT parameter, types sent
	execPkt, _ := mysqlproto.AppendPacket(nil, 0, exec)
	closePkt, _ := mysqlproto.AppendPacket(nil, 0, []byte{byte(mysqlproto.ComStmtClose), 0, 0, 0, 0})
	return &psClient{conn: mc.Conn(), prepare: prep, execute: execPkt, stmt: closePkt,
		prepResp: make([]byte, len(f.prepareResp)), execResp: make([]byte, len(f.executeResp)), wantExec: f.executeResp}
}

// roundTrip runs prepare, execute and close. It allocates nothing.
func (c *psClient) roundTrip() error {
	if _, err := c.conn.Write(c.prepare); err != nil {
		return err
	}
	if _, err := io.ReadFull(c.conn, c.prepResp); err != nil {
		return err
	}
	id := c.prepResp[mysqlproto.HeaderLen+1 : mysqlproto.HeaderLen+5]
	copy(c.execute[mysqlproto.HeaderLen+1:], id)
	copy(c.stmt[mysqlproto.HeaderLen+1:], id)
	if _, err := c.conn.Write(c.execute); err != nil {
		return err
	}
	if _, err := io.ReadFull(c.conn, c.execResp); err != nil {
		return err
	}
	_, err := c.conn.Write(c.stmt)
	return err
}

func newPreparedEnv(tb testing.TB, mode string) (*forwardEnv, *fakePreparedMySQL) {
	tb.Helper()
	fake := startFakePreparedMySQL(tb)
	env := startForwardProxy(tb, [][2]string{
		{"server_routing_mode", "mysql"},
		{"rootservice_list", fake.addr()},
		{"client_io_mode", mode},
	})
	env.user = "bench"
	return env, fake
}

// TestForwardPreparedAllocs: in mysql routing mode, a query that is
// prepared, executed and closed costs obgate no allocation once the
// session is warm, although obgate keeps the statement's text and
// translates its id.
func TestForwardPreparedAllocs(t *testing.T) {
	if raceEnabled() {
		t.Skip("the race detector drops sync.Pool entries on purpose, so pooled buffers allocate")
	}
	const warmup, runs = 2000, 2000
	for _, mode := range forwardModes {
		t.Run(mode, func(t *testing.T) {
			env, fake := newPreparedEnv(t, mode)
			cl := newPSClient(t, env, fake)
			var failed error
			roundTrip := func() {
				if err := cl.roundTrip(); err != nil && failed == nil {
					failed = err
				}
			}
			roundTrip()
			if failed != nil {
				t.Fatal(failed)
			}
			if !bytes.Equal(cl.execResp, cl.wantExec) {
				t.Fatalf("execute answer through obgate:\n%x\nwant the server's:\n%x", cl.execResp, cl.wantExec)
			}
			if id := binary.LittleEndian.Uint32(cl.prepResp[mysqlproto.HeaderLen+1:]); id == fakeStmtID {
				t.Logf("obgate's id %d happens to equal the server's", id)
			}
			sites := profileAllocs(func() {
				for range warmup {
					roundTrip()
				}
			}, func() float64 { return testing.AllocsPerRun(runs, roundTrip) })
			if failed != nil {
				t.Fatal(failed)
			}
			// All three are served on the poller (netpoll) or the session's
			// goroutine (net), never through netpoll's OnRequest task.
			dispatch := float64(sites.objectsIn("cloudwego/netpoll.(*connection).onProcess")) / runs
			if own := sites.perRun - dispatch; own > 0.01 || dispatch > 0.01 {
				t.Errorf("%s: %.2f allocations per prepare+execute+close (%.2f in netpoll's dispatch), want 0 on obgate's path and in netpoll's dispatch. Where (objects per query over %d queries; innermost frame first):\n%s",
					mode, sites.perRun, dispatch, runs, sites.describe(runs))
			}
		})
	}
}

// BenchmarkForwardPrepared measures a prepare, execute and close through
// obgate in mysql routing mode, per client I/O mode.
func BenchmarkForwardPrepared(b *testing.B) {
	for _, mode := range forwardModes {
		b.Run(mode, func(b *testing.B) {
			env, fake := newPreparedEnv(b, mode)
			cl := newPSClient(b, env, fake)
			b.ReportAllocs()
			for b.Loop() {
				if err := cl.roundTrip(); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
