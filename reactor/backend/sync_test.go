package backend

import (
	"errors"
	"net"
	"testing"
	"time"

	"obgate/mysqlproto"
	"obgate/reactor/sessvars"
)

// fakeServer answers each command it reads with the next answer of
// answers (an ERR when its code is not 0, else an OK; an OK once answers
// ran out) and sends the commands it read on got, until the connection
// ends. A command nobody expected is therefore read and reported, not left
// blocking its writer.
func fakeServer(t *testing.T, conn net.Conn, answers []uint16) <-chan []byte {
	t.Helper()
	got := make(chan []byte, 16)
	go func() {
		defer close(got)
		pio := mysqlproto.NewPacketIO(conn, conn)
		for i := 0; ; i++ {
			pio.ResetSequence() // each command starts a sequence
			p, err := pio.ReadPacket()
			if err != nil {
				return
			}
			got <- append([]byte(nil), p...)
			payload := mysqlproto.AppendOK(nil, mysqlproto.OK{}, mysqlproto.ClientProtocol41)
			if i < len(answers) && answers[i] != 0 {
				payload = mysqlproto.NewSQLError(answers[i], "refused").AppendPacket(nil)
			}
			answer, _ := mysqlproto.AppendPacket(nil, 1, payload)
			if _, err := conn.Write(answer); err != nil {
				return
			}
		}
	}()
	return got
}

func syncPair(t *testing.T) (*Conn, net.Conn) {
	t.Helper()
	a, b := net.Pipe()
	t.Cleanup(func() { _ = a.Close(); _ = b.Close() })
	return &Conn{NetConn: a, Sock: a, Addr: "test:1"}, b
}

var syncOptions = CommandOptions{Caps: mysqlproto.ClientProtocol41, Timeout: 5 * time.Second}

// TestSyncToSendsWhatLacks: a server session behind the client's state
// gets the multi-statement option, the database and the variables, in
// that order, and is then in step; in step, nothing is sent.
func TestSyncToSendsWhatLacks(t *testing.T) {
	var v sessvars.Vars
	v.SetMultiStatements(true)
	v.SetDB("app")
	v.SetSys([]byte("autocommit"), []byte("0"))
	be, peer := syncPair(t)
	got := fakeServer(t, peer, []uint16{0, 0, 0})
	if err := be.SyncTo(&v, syncOptions); err != nil {
		t.Fatal(err)
	}
	want := []mysqlproto.Command{mysqlproto.ComSetOption, mysqlproto.ComInitDB, mysqlproto.ComQuery}
	for i, cmd := range want {
		p := <-got
		if len(p) == 0 || mysqlproto.Command(p[0]) != cmd {
			t.Fatalf("command %d: got %q, want %s", i, p, cmd)
		}
	}
	if !v.InSync(&be.Sync) {
		t.Fatal("the server session is not marked in step")
	}
	if err := be.SyncTo(&v, syncOptions); err != nil {
		t.Fatal(err)
	}
	_ = peer.Close()
	if p, ok := <-got; ok {
		t.Fatalf("a server session in step was sent %q", p)
	}
}

// TestSyncToStopsAtRefusal: a server ERR on a step comes back as
// ErrServerState wrapping the SQL error, the steps after it are not
// sent, and the server session is not marked in step.
func TestSyncToStopsAtRefusal(t *testing.T) {
	var v sessvars.Vars
	v.SetDB("missing")
	v.SetSys([]byte("autocommit"), []byte("0"))
	be, peer := syncPair(t)
	got := fakeServer(t, peer, []uint16{mysqlproto.ERBadDB})
	err := be.SyncTo(&v, syncOptions)
	var se *mysqlproto.SQLError
	if !errors.Is(err, ErrServerState) || !errors.As(err, &se) || se.Code != mysqlproto.ERBadDB {
		t.Fatalf("err = %v, want ErrServerState wrapping ERR %d", err, mysqlproto.ERBadDB)
	}
	if v.InSync(&be.Sync) {
		t.Fatal("a refused sync marked the server session in step")
	}
	if p := <-got; mysqlproto.Command(p[0]) != mysqlproto.ComInitDB {
		t.Fatalf("first step %q, want COM_INIT_DB", p)
	}
	_ = peer.Close()
	if p, ok := <-got; ok {
		t.Fatalf("a step after the refusal was sent: %q", p)
	}
}
