package reactor_test

import (
	"bytes"
	"fmt"
	"testing"
	"time"

	"obgate/internal/testkit"
	"obgate/mysqlproto"
)

// stallDeadline bounds the whole exchange of TestE2EBigResultThenPipeline:
// directly against MariaDB it takes about a second; the bug it guards
// against stalled for netpoll's 60 s write timeout and then reset.
const stallDeadline = 30 * time.Second

// bigResultThenPipeline asks addr (logged in as user) for a result of
// about 40 MB, does not read it for a second, pipelines about 400 KB of
// small statements, then reads everything: every answer must come.
func bigResultThenPipeline(t *testing.T, addr, user, password, db string) {
	t.Helper()
	c, err := testkit.DialRaw(addr, hangLimit)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if err := c.Login(user, password, db, hangLimit); err != nil {
		t.Fatal(err)
	}
	big := append([]byte{byte(mysqlproto.ComQuery)}, "SELECT REPEAT('x', 1000) AS v FROM seq_1_to_40000"...)
	if err := c.WritePacket(0, big); err != nil {
		t.Fatal(err)
	}
	time.Sleep(time.Second) // the client does not read: obgate's writes to it block
	const small = 10000
	var pipe []byte
	for i := range small {
		pipe, _ = mysqlproto.AppendPacket(pipe, 0, append([]byte{byte(mysqlproto.ComQuery)},
			fmt.Sprintf("SELECT %d /* pipelined statement padding */", i)...))
	}
	werr := make(chan error, 1)
	go func() {
		_ = c.Conn.SetWriteDeadline(time.Now().Add(stallDeadline))
		_, err := c.Conn.Write(pipe)
		werr <- err
	}()
	_ = c.Conn.SetReadDeadline(time.Now().Add(stallDeadline))
	rows := 0
	resp, err := c.ReadResponse(stallDeadline)
	if err != nil {
		t.Fatalf("the big result: %v after %d packets", err, len(resp))
	}
	for _, p := range resp {
		if len(p) > 1000 && bytes.Contains(p, []byte("xxxx")) {
			rows++
		}
	}
	if rows != 40000 {
		t.Fatalf("the big result had %d rows, want 40000", rows)
	}
	for i := range small {
		if _, err := c.ReadResponse(stallDeadline); err != nil {
			t.Fatalf("pipelined statement %d of %d: %v", i, small, err)
		}
	}
	if err := <-werr; err != nil {
		t.Fatalf("writing the pipelined statements: %v", err)
	}
}

// TestE2EBigResultThenPipeline: a client that asks for a large result,
// reads none of it for a while, pipelines more statements than obgate
// buffers of a client's input (so obgate stops reading it) and then reads
// everything gets every answer, in both routing modes. obgate's pause of
// reads must not drop netpoll's wait for the socket to take the result.
func TestE2EBigResultThenPipeline(t *testing.T) {
	t.Run("direct", func(t *testing.T) {
		bigResultThenPipeline(t, maria(t).Addr(), "root", "", testDB)
	})
	t.Run("mysql mode", func(t *testing.T) {
		p := startProxy(t, "netpoll")
		bigResultThenPipeline(t, p.Addr, "root", "", testDB)
	})
	t.Run("oceanbase mode", func(t *testing.T) {
		c := startOBSim(t)
		p := startOBProxy(t, c, "netpoll")
		bigResultThenPipeline(t, p.Addr, obFullUser, obPass, obDB)
	})
}
