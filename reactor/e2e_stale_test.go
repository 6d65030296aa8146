package reactor_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"testing"

	"obgate/internal/testkit"
)

// TestE2EServerWaitTimeoutClosesClient: in mysql routing mode the client's
// connection is its server session. When the server closes it while the
// client is idle (wait_timeout), obgate closes the client's connection at
// once, so a driver's liveness check sees a closed connection and the
// pool reconnects, instead of a statement failing with 2013 later.
func TestE2EServerWaitTimeoutClosesClient(t *testing.T) {
	forEachMode(t, func(t *testing.T, mode string) {
		p := startProxy(t, mode)
		c, err := testkit.DialRaw(p.Addr, hangLimit)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		if err := c.Login("root", "", testDB, hangLimit); err != nil {
			t.Fatal(err)
		}
		if err := c.WritePacket(0, append([]byte{3}, "SET @@SESSION.wait_timeout = 1"...)); err != nil {
			t.Fatal(err)
		}
		if _, err := c.ReadResponse(hangLimit); err != nil {
			t.Fatal(err)
		}
		// Nothing is sent: obgate must close the connection on its own.
		_, _, err = c.ReadPacket(hangLimit)
		if !errors.Is(err, io.EOF) && !errors.Is(err, io.ErrUnexpectedEOF) {
			t.Fatalf("after the server's wait_timeout: got %v, want the connection closed", err)
		}

		// A pool behind the same proxy recovers on its own.
		db := openDB(t, driverConfig(p, "root", "", testDB))
		db.SetMaxIdleConns(1)
		conn, err := db.Conn(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		if _, err := conn.ExecContext(context.Background(), "SET @@SESSION.wait_timeout = 1"); err != nil {
			t.Fatal(err)
		}
		conn.Close()
		// The pool keeps the connection idle; once the server ends its
		// session after wait_timeout, obgate closes it (and the raw
		// connection above is closed already), so no client is left.
		testkit.EventuallyDescribe(t, hangLimit, func() bool { return p.Server.ClientCount() == 0 }, func() string {
			return fmt.Sprintf("%d client connections still open after the server's wait_timeout", p.Server.ClientCount())
		})
		var one int
		if err := db.QueryRow("SELECT 1").Scan(&one); err != nil || one != 1 {
			t.Fatalf("statement after the server closed the idle connection: %v", err)
		}
	})
}
