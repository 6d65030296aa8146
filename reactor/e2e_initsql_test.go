package reactor_test

import (
	"context"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/go-sql-driver/mysql"

	"obgate/mysqlproto"
)

// TestInitSQLMySQLMode: init_sql runs on the server session before the
// client's login returns, and an init_sql the server refuses fails the login
// with ODP's OB_SEND_INIT_SQL_ERROR.
func TestInitSQLMySQLMode(t *testing.T) {
	forEachMode(t, func(t *testing.T, mode string) {
		p := startProxy(t, mode, "init_sql", "SET @obgate_init = 42")
		db := rootDB(t, p)
		if got := queryInt(t, db, "SELECT @obgate_init"); got != 42 {
			t.Fatalf("SELECT @obgate_init = %d, want 42 (set by init_sql)", got)
		}
		var n int64
		if err := db.QueryRow("SELECT @obgate_init + ?", 1).Scan(&n); err != nil || n != 43 {
			t.Fatalf("prepared SELECT @obgate_init + 1 = %d, %v", n, err)
		}

		bad := startProxy(t, mode, "init_sql", "SET @@session.no_such_variable_here = 1")
		err := rootDB(t, bad).Ping()
		if code := sqlErrorCode(err); code != mysqlproto.OBSendInitSQLError {
			t.Fatalf("login with a failing init_sql: %v (code %d), want ERR %d", err, code, mysqlproto.OBSendInitSQLError)
		}
	})
}

// TestInitSQLOBModeEveryServerSession: in OceanBase mode every server
// session a client opens (statements go to the partition leaders on
// several nodes) runs init_sql once, right after its login and before the
// client's first statement there.
func TestInitSQLOBModeEveryServerSession(t *testing.T) {
	c := startPartOBSim(t, false)
	initMark := newMarker("init")
	p := startOBProxy(t, c, ioModes[0], "init_sql", "SET @obgate_init = 7 /* "+initMark+" */")
	_, conn := obConn(t, p, func(cfg *mysql.Config) { cfg.DBName = partDB })
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	var v int64
	if err := conn.QueryRowContext(ctx, "SELECT @obgate_init").Scan(&v); err != nil || v != 7 {
		t.Fatalf("SELECT @obgate_init = %d, %v; want 7 (set by init_sql)", v, err)
	}
	mk := newMarker("initpart")
	rng := rand.New(rand.NewPCG(7, 7))
	for range 200 {
		q, args := pointStatement(rng, mk)
		if _, err := conn.ExecContext(ctx, q, args...); err != nil {
			t.Fatalf("%s %v: %v", q, args, err)
		}
	}
	// Every (node, server session) that ran a statement of the client ran
	// init_sql first, exactly once.
	inits := map[[2]any]int{}
	for _, e := range proxyEntries(c, initMark) {
		inits[[2]any{e.Node, e.Session}]++
	}
	nodes := map[string]bool{}
	for _, e := range proxyEntries(c, mk) {
		key := [2]any{e.Node, e.Session}
		nodes[e.Node] = true
		if inits[key] != 1 {
			t.Fatalf("server session %v ran %q after init_sql ran %d times there", key, e.SQL, inits[key])
		}
	}
	if len(nodes) < 2 {
		t.Fatalf("the statements ran on %d node(s); the test needs several server sessions", len(nodes))
	}
}
