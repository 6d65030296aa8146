package reactor_test

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/binary"
	"errors"
	"testing"

	"github.com/go-sql-driver/mysql"

	"obgate/internal/testkit"
	"obgate/mysqlproto"
	"obgate/reactor"
)

// Kept statements (reactor/prepared/kept.go): a statement the client
// closed stays prepared on its server sessions, and the client's next
// prepare of the same text is answered from it.

// argsQueries runs count queries with arguments on conn, as go-sql-driver
// sends them (a prepare, an execute and a close each), with text query.
func argsQueries(t *testing.T, conn *sql.Conn, query string, count int) {
	t.Helper()
	ctx := context.Background()
	for i := range count {
		var got int
		if err := conn.QueryRowContext(ctx, query, i).Scan(&got); err != nil || got != i+1 {
			t.Fatalf("%s with %d: %d %v, want %d", query, i, got, err, i+1)
		}
	}
}

// TestE2EKeptStatementsAnswerPrepares: go-sql-driver's query with
// arguments repeated on one connection reaches the server as one prepare
// and then executes only, on either client transport; past
// client_ps_keep_count distinct texts, the oldest kept statement is
// closed on the server by the next close.
func TestE2EKeptStatementsAnswerPrepares(t *testing.T) {
	testkit.CheckLeaks(t)
	for _, mode := range []string{"netpoll", "net"} {
		t.Run(mode, func(t *testing.T) {
			p := startProxy(t, mode, "client_ps_keep_count", "8")
			db := rootDB(t, p)
			db.SetMaxOpenConns(1)
			conn, err := db.Conn(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			defer conn.Close()
			prepares, executes, closes := serverStatus(t, conn, "Com_stmt_prepare"),
				serverStatus(t, conn, "Com_stmt_execute"), serverStatus(t, conn, "Com_stmt_close")
			reused := reactor.PreparesReused()
			const count = 200
			argsQueries(t, conn, "SELECT ? + 1", count)
			if n := serverStatus(t, conn, "Com_stmt_prepare") - prepares; n != 1 {
				t.Errorf("the server saw %d prepares for %d queries of one text, want 1", n, count)
			}
			if n := serverStatus(t, conn, "Com_stmt_execute") - executes; n != count {
				t.Errorf("the server saw %d executes, want %d", n, count)
			}
			if n := serverStatus(t, conn, "Com_stmt_close") - closes; n != 0 {
				t.Errorf("the server saw %d closes, want none (the statement is kept)", n)
			}
			if n := reactor.PreparesReused() - reused; n != count-1 {
				t.Errorf("%d prepares were answered from the kept statement, want %d", n, count-1)
			}

			// 20 more texts: each is prepared once; 21 kept statements
			// with room for 8 make 13 closes.
			prepares, closes = serverStatus(t, conn, "Com_stmt_prepare"), serverStatus(t, conn, "Com_stmt_close")
			for k := range 20 {
				argsQueries(t, conn, "SELECT ? + 1 + "+itoa(int64(k))+" - "+itoa(int64(k)), 2)
			}
			if n := serverStatus(t, conn, "Com_stmt_prepare") - prepares; n != 20 {
				t.Errorf("the server saw %d prepares for 20 texts, want 20", n)
			}
			if n := serverStatus(t, conn, "Com_stmt_close") - closes; n != 13 {
				t.Errorf("the server saw %d closes, want 13 (21 statements kept, room for 8)", n)
			}
		})
	}
}

// TestE2EKeptStatementsFollowTheSessionState: a kept statement is not
// used once the session's state may prepare its text differently: after a
// change of database the same text reads the other database's table, and
// after SET sql_mode='ANSI_QUOTES' a double-quoted string is an
// identifier.
func TestE2EKeptStatementsFollowTheSessionState(t *testing.T) {
	testkit.CheckLeaks(t)
	direct := directDB(t)
	const other = "obgate_kept_other"
	for _, q := range []string{
		"CREATE DATABASE IF NOT EXISTS " + other,
		"DROP TABLE IF EXISTS kt", "CREATE TABLE kt (v INT)", "INSERT INTO kt VALUES (1)",
		"DROP TABLE IF EXISTS " + other + ".kt", "CREATE TABLE " + other + ".kt (v INT)",
		"INSERT INTO " + other + ".kt VALUES (1), (2)",
	} {
		if _, err := direct.Exec(q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	t.Cleanup(func() {
		_, _ = direct.Exec("DROP TABLE IF EXISTS kt")
		_, _ = direct.Exec("DROP DATABASE IF EXISTS " + other)
	})
	p := startProxy(t, "netpoll", "client_ps_keep_count", "8")
	db := rootDB(t, p)
	db.SetMaxOpenConns(1)
	ctx := context.Background()
	conn, err := db.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	count := func() int {
		t.Helper()
		var n int
		if err := conn.QueryRowContext(ctx, "SELECT COUNT(*) FROM kt WHERE v > ?", 0).Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}
	if n := count(); n != 1 {
		t.Fatalf("%s.kt has %d rows, want 1", testDB, n)
	}
	reused := reactor.PreparesReused()
	if n := count(); n != 1 || reactor.PreparesReused() == reused {
		t.Fatalf("second query: %d rows, reused %v; want 1 from the kept statement", n, reactor.PreparesReused() != reused)
	}
	if _, err := conn.ExecContext(ctx, "USE "+other); err != nil {
		t.Fatal(err)
	}
	if n := count(); n != 2 {
		t.Errorf("after USE %s the query counted %d rows, want 2 (that database's table)", other, n)
	}

	concat := func() (string, error) {
		var s string
		err := conn.QueryRowContext(ctx, `SELECT CONCAT("a", ?)`, "b").Scan(&s)
		return s, err
	}
	for range 2 {
		if s, err := concat(); err != nil || s != "ab" {
			t.Fatalf(`SELECT CONCAT("a", ?): %q %v`, s, err)
		}
	}
	if _, err := conn.ExecContext(ctx, "SET SESSION sql_mode = 'ANSI_QUOTES'"); err != nil {
		t.Fatal(err)
	}
	var me *mysql.MySQLError
	if s, err := concat(); !errors.As(err, &me) || me.Number != 1054 {
		t.Errorf(`with ANSI_QUOTES, SELECT CONCAT("a", ?) gave %q %v; want ERR 1054 (unknown column a)`, s, err)
	}
}

// TestE2EKeptStatementClosedIDIsUnknown: the id of a statement the client
// closed is unknown to it, as on a server, even while obgate keeps the
// statement; the next prepare of the text gets that id back, with the
// answer the first prepare got, and runs.
func TestE2EKeptStatementClosedIDIsUnknown(t *testing.T) {
	testkit.CheckLeaks(t)
	p := startProxy(t, "netpoll", "client_ps_keep_count", "8")
	c := loginRaw(t, p, "root", "")
	const text = "SELECT ? + 1 AS v"
	prepare := func() (uint32, [][]byte) {
		t.Helper()
		if err := c.WritePacket(0, append([]byte{byte(mysqlproto.ComStmtPrepare)}, text...)); err != nil {
			t.Fatal(err)
		}
		ok, _, err := c.ReadPacket(hangLimit)
		if err != nil || len(ok) < 12 || ok[0] != mysqlproto.OKHeader {
			t.Fatalf("prepare: %q %v", ok, err)
		}
		res := [][]byte{ok}
		// Parameter definitions and an EOF, then column definitions and
		// an EOF (the raw client does not ask to go without them).
		for _, n := range []uint16{binary.LittleEndian.Uint16(ok[7:]), binary.LittleEndian.Uint16(ok[5:])} {
			if n == 0 {
				continue
			}
			for range int(n) + 1 {
				pkt, _, err := c.ReadPacket(hangLimit)
				if err != nil {
					t.Fatalf("prepare's definitions: %v", err)
				}
				res = append(res, pkt)
			}
		}
		return binary.LittleEndian.Uint32(ok[1:]), res
	}
	execute := func(id uint32, arg int64) [][]byte {
		t.Helper()
		pkt := []byte{byte(mysqlproto.ComStmtExecute)}
		pkt = binary.LittleEndian.AppendUint32(pkt, id)
		pkt = append(pkt, 0)                                // no cursor
		pkt = binary.LittleEndian.AppendUint32(pkt, 1)      // iterations
		pkt = append(pkt, 0, 1, mysqlproto.TypeLongLong, 0) // null bitmap, types bound, BIGINT
		pkt = binary.LittleEndian.AppendUint64(pkt, uint64(arg))
		if err := c.WritePacket(0, pkt); err != nil {
			t.Fatal(err)
		}
		res, err := c.ReadResponse(hangLimit)
		if err != nil {
			t.Fatalf("execute %d: %v", id, err)
		}
		return res
	}
	closeStmt := func(id uint32) {
		t.Helper()
		if err := c.WritePacket(0, binary.LittleEndian.AppendUint32([]byte{byte(mysqlproto.ComStmtClose)}, id)); err != nil {
			t.Fatal(err)
		}
	}
	id, first := prepare()
	if res := execute(id, 41); len(res) < 2 {
		t.Fatalf("execute: %q", res)
	}
	closeStmt(id)
	res := execute(id, 41)
	if len(res) != 1 || res[0][0] != mysqlproto.ERRHeader {
		t.Fatalf("execute of the closed statement %d: %q, want an ERR", id, res)
	}
	if e, _ := mysqlproto.ParseERR(res[0]); e.Code != mysqlproto.ERUnknownStmtHandler {
		t.Errorf("execute of the closed statement: ERR %d %s, want %d", e.Code, e.Message, mysqlproto.ERUnknownStmtHandler)
	}
	reused := reactor.PreparesReused()
	again, second := prepare()
	if again != id || reactor.PreparesReused() == reused {
		t.Errorf("the second prepare got id %d (reused: %v), want %d from the kept statement", again, reactor.PreparesReused() != reused, id)
	}
	if len(second) != len(first) {
		t.Fatalf("the second prepare's answer has %d packets, the first's %d", len(second), len(first))
	}
	for i := range first {
		if !bytes.Equal(first[i], second[i]) {
			t.Errorf("packet %d of the second prepare's answer differs: %q, first %q", i, second[i], first[i])
		}
	}
	res = execute(again, 41)
	found := false
	for _, pkt := range res {
		found = found || bytes.Contains(pkt, []byte{42, 0, 0, 0, 0, 0, 0, 0})
	}
	if !found {
		t.Errorf("execute of the statement prepared again: %q, want a row with 42", res)
	}
}

// TestE2EKeptStatementShortClientWrites: when the client's socket takes
// an answer obgate writes from a kept statement only in part, or not at
// all, a goroutine writes the rest; every query gets its answer.
func TestE2EKeptStatementShortClientWrites(t *testing.T) {
	testkit.CheckLeaks(t)
	p := startProxy(t, "netpoll", "client_ps_keep_count", "8")
	for _, room := range []int64{3, -1} {
		t.Run("room="+itoa(room), func(t *testing.T) {
			db := rootDB(t, p)
			db.SetMaxOpenConns(1)
			conn, err := db.Conn(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			defer conn.Close()
			argsQueries(t, conn, "SELECT ? + 1", 2) // prepared once, then kept
			reactor.SetClientWriteRoom(t, room)
			reused, handOffs := reactor.PreparesReused(), reactor.PollerHandOffs()
			const count = 30
			argsQueries(t, conn, "SELECT ? + 1", count)
			if n := reactor.PreparesReused() - reused; n != count {
				t.Errorf("%d of %d prepares were answered from the kept statement", n, count)
			}
			if n := reactor.PollerHandOffs() - handOffs; n < count {
				t.Errorf("%d commands were handed to a goroutine, want at least %d: the short writes did not happen", n, count)
			}
		})
	}
}

// TestE2EOBKeptStatementsOnThreeNodes: in OceanBase mode the executes of
// one text go to the leaders of their keys' partitions on three servers.
// With the statement kept, each server prepares it once; then the
// prepares are answered by obgate, the closes cost nothing, and every
// execute still runs on its leader as a local plan.
func TestE2EOBKeptStatementsOnThreeNodes(t *testing.T) {
	testkit.CheckLeaks(t)
	c := startPartOBSim(t, false)
	p := startOBProxy(t, c, "netpoll", "client_ps_keep_count", "8")
	db := openDB(t, obDriverConfig(p, obFullUser, partDB))
	db.SetMaxOpenConns(1)
	ctx := context.Background()
	const keys, count = 16, 200
	for i := range keys {
		if _, err := db.ExecContext(ctx, "INSERT INTO h_orders (id, v) VALUES (?, ?)", i, "v"+itoa(int64(i))); err != nil {
			t.Fatal(err)
		}
	}
	mk := newMarker("kept")
	query := "SELECT v FROM h_orders WHERE id = ? /* " + mk + " */"
	reused := reactor.PreparesReused()
	for i := range count {
		var v string
		if err := db.QueryRowContext(ctx, query, i%keys).Scan(&v); err != nil || v != "v"+itoa(int64(i%keys)) {
			t.Fatalf("query %d: %q %v", i, v, err)
		}
	}
	var prepares, executes, remote int
	nodes := map[string]bool{}
	for _, e := range proxyEntries(c, mk) {
		if e.Command == "prepare" {
			prepares++
			continue
		}
		executes++
		nodes[e.Node] = true
		if !e.Local {
			remote++
		}
	}
	if executes != count || remote != 0 {
		t.Errorf("obsim logged %d executes, %d of them remote plans; want %d, none remote", executes, remote, count)
	}
	if prepares > len(nodes) || len(nodes) < 2 {
		t.Errorf("obsim logged %d prepares for executes on %d servers, want one per server", prepares, len(nodes))
	}
	if n := reactor.PreparesReused() - reused; n != count-1 {
		t.Errorf("%d prepares were answered from the kept statement, want %d", n, count-1)
	}
}

// TestE2EKeptStatementFromTheFirstQuery: a session's very first queries
// with arguments keep their statement too, in both routing modes (the
// current database obgate records after the first answer is the one of
// the login, no change of state).
func TestE2EKeptStatementFromTheFirstQuery(t *testing.T) {
	testkit.CheckLeaks(t)
	c := startOBSim(t)
	ob := startOBProxy(t, c, "netpoll", "client_ps_keep_count", "8")
	p := startProxy(t, "netpoll", "client_ps_keep_count", "8")
	for name, db := range map[string]*sql.DB{"mysql mode": rootDB(t, p), "OceanBase mode": openDB(t, obDriverConfig(ob, obFullUser, obDB))} {
		db.SetMaxOpenConns(1)
		conn, err := db.Conn(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		reused := reactor.PreparesReused()
		argsQueries(t, conn, "SELECT ? + 1", 5)
		if n := reactor.PreparesReused() - reused; n != 4 {
			t.Errorf("%s: %d of the first 5 prepares were answered from the kept statement, want 4", name, n)
		}
		_ = conn.Close()
	}
}
