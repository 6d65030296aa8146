package reactor_test

import (
	"bytes"
	"sync/atomic"
	"testing"
	"time"

	"obgate/internal/testkit"
	"obgate/mysqlproto"
	"obgate/reactor"
)

// TestE2EPipelinedClientBounded: a client that pipelines 48 MiB of
// statements behind a slow one is not read further while its backlog
// waits (netpoll pauses the connection's reads, so the client's writes
// block in TCP), and once the slow statement ends every statement is
// answered, in order.
func TestE2EPipelinedClientBounded(t *testing.T) {
	testkit.CheckLeaks(t)
	p := startProxy(t, "netpoll")
	c := loginRaw(t, p, "root", "")
	pauses := reactor.ReadBoundPauses()

	// More than obgate's bound, one netpoll read (up to 8 MiB) and the
	// loopback socket buffers (a few MiB each way) can hold together.
	const count = 12 << 10
	stmt := append([]byte{byte(mysqlproto.ComQuery)}, "DO 1 /* "...)
	stmt = append(stmt, bytes.Repeat([]byte{'x'}, 4000)...)
	stmt = append(stmt, " */"...)
	if err := c.WritePacket(0, append([]byte{byte(mysqlproto.ComQuery)}, "DO SLEEP(1.5)"...)); err != nil {
		t.Fatal(err)
	}
	var written atomic.Int64
	werr := make(chan error, 1)
	go func() {
		pkt, _ := mysqlproto.AppendPacket(nil, 0, stmt)
		for range count {
			if err := c.Write(pkt); err != nil {
				werr <- err
				return
			}
			written.Add(int64(len(pkt)))
		}
		werr <- nil
	}()
	time.Sleep(time.Second) // the sleep is still running
	total := int64(count * (len(stmt) + mysqlproto.HeaderLen))
	if w := written.Load(); w >= total {
		t.Errorf("the client wrote all %d bytes while its first statement ran: obgate read them all", w)
	}
	if reactor.ReadBoundPauses() == pauses {
		t.Error("obgate never paused reading the pipelining client")
	}
	for i := 0; i <= count; i++ {
		res, err := c.ReadResponse(hangLimit)
		if err != nil {
			t.Fatalf("response %d of %d: %v", i, count+1, err)
		}
		if len(res) != 1 || res[0][0] != mysqlproto.OKHeader {
			t.Fatalf("response %d: %q, want an OK", i, res[0])
		}
	}
	if err := <-werr; err != nil {
		t.Fatalf("writing the statements: %v", err)
	}
}

// TestE2EBusyClientKeepsItsTask: statements that follow each other closely
// on one netpoll connection are served by one OnRequest call, which waits
// a moment for the next request instead of returning after each (netpoll
// would start and hand over a new task per statement); once the client
// pauses, the call returns and the next statement starts a new one; a
// client that always pauses is never waited for.
func TestE2EBusyClientKeepsItsTask(t *testing.T) {
	testkit.CheckLeaks(t)
	p := startProxy(t, "netpoll")
	c := loginRaw(t, p, "root", "")
	query := func() {
		t.Helper()
		if err := c.WritePacket(0, append([]byte{byte(mysqlproto.ComQuery)}, "DO 1"...)); err != nil {
			t.Fatal(err)
		}
		res, err := c.ReadResponse(hangLimit)
		if err != nil || len(res) != 1 || res[0][0] != mysqlproto.OKHeader {
			t.Fatalf("DO 1: %q %v", res, err)
		}
	}
	query()
	const count = 400
	before := reactor.NetpollRequestCalls()
	for range count {
		query()
	}
	// Scheduling pauses over the linger on a loaded machine start a few
	// more calls; one per statement means there is no linger at all.
	if calls := reactor.NetpollRequestCalls() - before; calls > count/4 {
		t.Errorf("%d statements back to back took %d OnRequest calls", count, calls)
	}
	time.Sleep(50 * time.Millisecond)
	before = reactor.NetpollRequestCalls()
	query()
	if calls := reactor.NetpollRequestCalls() - before; calls != 1 {
		t.Errorf("a statement after a pause took %d OnRequest calls, want a new one", calls)
	}

	// A client that pauses between statements is not waited for: each
	// statement is its own call, and no wait ends in a timeout (the
	// first may: the statement before it came without a pause).
	const paced = 20
	before, timeouts := reactor.NetpollRequestCalls(), reactor.NetpollLingerTimeouts()
	for range paced {
		time.Sleep(5 * time.Millisecond)
		query()
	}
	if calls := reactor.NetpollRequestCalls() - before; calls != paced {
		t.Errorf("%d paced statements took %d OnRequest calls", paced, calls)
	}
	if n := reactor.NetpollLingerTimeouts() - timeouts; n > 1 {
		t.Errorf("%d of %d paced statements were followed by a wait that timed out", n, paced)
	}
}
