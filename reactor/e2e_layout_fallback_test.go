package reactor_test

import (
	"context"
	"fmt"
	"testing"

	"obgate/reactor"
)

// TestLayoutFallback runs the fallback obgate takes when netpoll's
// internals are not the ones internal/npbound knows (ErrLayout after a
// netpoll upgrade): clients still on netpoll, served by its OnRequest
// without read bounds, server connections on net. Text and prepared
// statements, a transaction, a large result and a pipelined burst work in
// both routing modes, and no command runs on the poller path.
func TestLayoutFallback(t *testing.T) {
	reactor.WithoutReadBounds(t)
	before := reactor.PolledFinished()
	t.Run("mysql mode", func(t *testing.T) {
		p := startProxy(t, "netpoll")
		db := rootDB(t, p)
		db.SetMaxOpenConns(2)
		mustExec(t, db, "CREATE TABLE IF NOT EXISTS layout_fallback (id INT PRIMARY KEY, v VARCHAR(20))")
		mustExec(t, db, "DELETE FROM layout_fallback")
		tx, err := db.Begin()
		if err != nil {
			t.Fatal(err)
		}
		for i := range 10 {
			if _, err := tx.Exec("INSERT INTO layout_fallback VALUES (?, ?)", i, fmt.Sprint("v", i)); err != nil {
				t.Fatal(err)
			}
		}
		if err := tx.Commit(); err != nil {
			t.Fatal(err)
		}
		if n := queryInt(t, db, "SELECT COUNT(*) FROM layout_fallback"); n != 10 {
			t.Fatalf("%d rows after the transaction, want 10", n)
		}
		bigResultThenPipeline(t, p.Addr, "root", "", testDB)
	})
	t.Run("oceanbase mode", func(t *testing.T) {
		c := startOBSim(t)
		p := startOBProxy(t, c, "netpoll")
		db, conn := obConn(t, p)
		for i := range 10 {
			if _, err := conn.ExecContext(context.Background(), "INSERT INTO kv VALUES (?, ?)", i, fmt.Sprint("v", i)); err != nil {
				t.Fatal(err)
			}
		}
		if n := queryInt(t, db, "SELECT COUNT(*) FROM kv"); n != 10 {
			t.Fatalf("%d rows, want 10", n)
		}
		bigResultThenPipeline(t, p.Addr, obFullUser, obPass, obDB)
	})
	if n := reactor.PolledFinished() - before; n != 0 {
		t.Errorf("%d commands ran on the poller path without read bounds", n)
	}
}
