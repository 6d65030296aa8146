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
