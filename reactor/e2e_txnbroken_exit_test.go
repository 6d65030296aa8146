package reactor_test

import (
	"context"
	"encoding/hex"
	"fmt"
	"strings"
	"syscall"
	"testing"
	"time"

	"obgate/internal/mariadbd"
	"obgate/internal/testkit"
	"obgate/internal/testproxy"
	"obgate/mysqlproto"
)

// The tests in this file leave the broken-transaction state (txnbroken.go)
// the two ways other than ROLLBACK and COMMIT: COM_RESET_CONNECTION and
// COM_CHANGE_USER. While the state lasts every statement gets ERR 6002;
// after either command the session must run statements again, outside any
// transaction. go-sql-driver cannot send these commands
// (mysqlConn.ResetSession only checks the connection; v1.10.1 has no
// COM_RESET_CONNECTION at all), so a raw client sends them.

// rawOKStatus sends a command whose answer is a single OK and returns the
// OK's status flags; an ERR fails the test.
func rawOKStatus(t *testing.T, c *obRaw, payload []byte) mysqlproto.ServerStatus {
	t.Helper()
	if err := c.WritePacket(0, payload); err != nil {
		t.Fatal(err)
	}
	p, _, err := c.ReadPacket(hangLimit)
	if err != nil {
		t.Fatalf("answer to command %d: %v", payload[0], err)
	}
	if len(p) == 0 || p[0] != mysqlproto.OKHeader {
		if len(p) > 0 && p[0] == mysqlproto.ERRHeader {
			e, _ := mysqlproto.ParseERR(p)
			t.Fatalf("command %d: %v", payload[0], mysqlproto.SQLErrorFromERR(e))
		}
		t.Fatalf("command %d answered %q, want OK", payload[0], p)
	}
	ok, _ := mysqlproto.ParseOK(p, c.Caps)
	return ok.Status
}

// wantTxnRolledBack checks that q is refused with ERR 6002, the
// broken-transaction state's answer.
func wantTxnRolledBack(t *testing.T, c *obRaw, q string) {
	t.Helper()
	res := c.query(q)
	if len(res) != 1 || res[0].err == nil || res[0].err.Code != mysqlproto.OBTransRollbacked {
		t.Fatalf("%s in the broken transaction: %v, want ERR %d", abbrev(q), res, mysqlproto.OBTransRollbacked)
	}
}

// rawChangeUser sends COM_CHANGE_USER to user/pass in db, answering auth
// switches, and fails the test unless it ends with an OK.
func rawChangeUser(t *testing.T, c *obRaw, user, pass, db string) {
	t.Helper()
	cu := &mysqlproto.ChangeUser{User: user, AuthResponse: mysqlproto.NativeToken(c.Greeting.AuthData, []byte(pass)),
		Database: db, Charset: mysqlproto.CharsetUTF8MB4, HasCharset: true,
		AuthPlugin: mysqlproto.AuthNativePassword, HasAttrs: true}
	if err := c.changeUser(cu, pass, nil); err != nil {
		t.Fatalf("COM_CHANGE_USER to %s: %v", user, err)
	}
}

// TestOBBrokenTransactionEndsWithResetOrChangeUser breaks the server
// session of an open transaction, by a corrupt OB 2.0 frame or by
// stopping its node, checks the session is in the broken-transaction state
// (ERR 6002 for a plain SELECT, which runs nowhere), then sends
// COM_RESET_CONNECTION or COM_CHANGE_USER. It proves that either command
// ends the state: its OK carries no SERVER_STATUS_IN_TRANS, obgate shows
// the session outside a transaction, a read runs and answers, and a write
// right after commits by itself (autocommit: visible to another connection
// with no COMMIT), while nothing of the broken transaction was committed.
// Were the state kept, the read would get ERR 6002; were a transaction
// still open (a held BEGIN), the write would not be visible.
func TestOBBrokenTransactionEndsWithResetOrChangeUser(t *testing.T) {
	maria(t) // started outside the leak check when this test runs first
	testkit.CheckLeaks(t)
	c := startOBSim(t)
	addOBUser2(t, c)
	direct := directDB(t)
	key := 9100
	forEachMode(t, func(t *testing.T, haMode string) {
		p := startOBProxy(t, c, haMode)
		for _, brk := range []string{"corrupt", "stop"} {
			for _, exit := range []string{"reset", "change_user"} {
				t.Run(brk+"/"+exit, func(t *testing.T) {
					resetOBSim(t, c)
					key += 10
					k := key
					cl := dialOBRaw(t, p, 0)
					mk := newMarker("txnexit")
					cl.exec("BEGIN")
					cl.exec(fmt.Sprintf("INSERT INTO kv VALUES (%d, 'a') /* %s-1 */", k, mk))
					x := c.Node(entryFor(t, c, mk+"-1 ").Node)
					switch brk {
					case "corrupt":
						x.CorruptFrames(1)
						if res := cl.query(fmt.Sprintf("UPDATE kv SET v = 'b' WHERE id = %d /* %s-2 */", k, mk)); len(res) != 1 || res[0].err == nil {
							t.Fatalf("UPDATE whose answer was corrupt: %v, want an error", res)
						}
					case "stop":
						if err := x.Stop(); err != nil {
							t.Fatal(err)
						}
						defer x.Start()
						wantTxnRolledBack(t, cl, fmt.Sprintf("INSERT INTO kv VALUES (%d, 'b') /* %s-2 */", k+1, mk))
					}
					wantTxnRolledBack(t, cl, fmt.Sprintf("SELECT 1 /* %s-3 */", mk))
					if es := proxyEntries(c, mk+"-3 "); len(es) != 0 {
						t.Fatalf("a statement of the broken transaction reached a server:%s", describeEntries(es))
					}
					var st mysqlproto.ServerStatus
					switch exit {
					case "reset":
						st = rawOKStatus(t, cl, []byte{byte(mysqlproto.ComResetConnection)})
					case "change_user":
						rawChangeUser(t, cl, obUser2, obPass2, obDB)
						st = rawQueryStatus(t, cl, fmt.Sprintf("SELECT 0 /* %s-cu */", mk))
					}
					if st.Has(mysqlproto.StatusInTrans) {
						t.Errorf("after %s the status flags %#x still say in transaction", exit, st)
					}
					sess, ok := p.Server.Session(cl.Greeting.ConnectionID)
					if !ok {
						t.Fatal("obgate lost the session")
					}
					if sess.Info().InTrans {
						t.Errorf("after %s obgate shows the session in a transaction", exit)
					}
					if got := cl.row(fmt.Sprintf("SELECT 7 /* %s-4 */", mk)); got[0] != "7" {
						t.Fatalf("read after %s: %q", exit, got)
					}
					if e := entryFor(t, c, mk+"-4 "); e.Result != "ok" {
						t.Fatalf("read after %s: %+v", exit, e)
					}
					cl.exec(fmt.Sprintf("INSERT INTO kv VALUES (%d, 'after') /* %s-5 */", k+2, mk))
					if st := rawQueryStatus(t, cl, "SELECT 1"); st.Has(mysqlproto.StatusInTrans) {
						t.Errorf("a write after %s left the session in a transaction (status %#x)", exit, st)
					}
					if n := queryInt(t, direct, fmt.Sprintf("SELECT COUNT(*) FROM %s.kv WHERE id = %d", obDB, k+2)); n != 1 {
						t.Fatalf("the write after %s is not committed without a COMMIT: it ran in a transaction", exit)
					}
					if n := queryInt(t, direct, fmt.Sprintf("SELECT COUNT(*) FROM %s.kv WHERE id IN (%d, %d)", obDB, k, k+1)); n != 0 {
						t.Fatalf("%d writes of the broken transaction were committed", n)
					}
					if exit == "change_user" {
						if e := entryFor(t, c, mk+"-5 "); e.User != obUser2 {
							t.Errorf("the write after COM_CHANGE_USER ran as %s, want %s", e.User, obUser2)
						}
					}
				})
			}
		}
	})
}

// rawQueryStatus runs q on c, which must answer one result, and returns
// the status flags that ended it.
func rawQueryStatus(t *testing.T, c *obRaw, q string) mysqlproto.ServerStatus {
	t.Helper()
	if err := c.WritePacket(0, append([]byte{byte(mysqlproto.ComQuery)}, q...)); err != nil {
		t.Fatal(err)
	}
	pkts, err := c.ReadResponse(hangLimit)
	if err != nil {
		t.Fatalf("%s: %v", q, err)
	}
	last := pkts[len(pkts)-1]
	switch {
	case len(last) > 0 && last[0] == mysqlproto.ERRHeader:
		e, _ := mysqlproto.ParseERR(last)
		t.Fatalf("%s: %v", q, mysqlproto.SQLErrorFromERR(e))
	case len(pkts) > 1: // a result set, ended by an EOF (no CLIENT_DEPRECATE_EOF)
		eof, _ := mysqlproto.ParseEOF(last)
		return eof.Status
	}
	ok, _ := mysqlproto.ParseOK(last, c.Caps)
	return ok.Status
}

// startSecondMariaDB starts another MariaDB with database testDB and the
// user otherUser, for tests that front two servers in mysql routing mode;
// it is stopped in t.Cleanup.
func startSecondMariaDB(t *testing.T) *mariadbd.Server {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	second, err := mariadbd.Start(ctx, mariadbd.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { second.Stop() })
	if err := second.Exec(ctx, "CREATE DATABASE "+testDB,
		fmt.Sprintf("CREATE USER '%s'@'%%' IDENTIFIED BY '%s'", otherUser, otherPass),
		fmt.Sprintf("GRANT ALL ON %s.* TO '%s'@'%%'", testDB, otherUser)); err != nil {
		t.Fatal(err)
	}
	return second
}

// brokenMySQLTxn starts an obgate in mysql routing mode in front of second
// and the package's MariaDB, with otherUser's hash in mysql_user_hashes
// (its sessions may move), logs otherUser in until a session sits on
// second, opens a transaction there and stops second with SIGSTOP (undone
// in t.Cleanup): once the detect task finds it dead the statement waiting
// there gets ERR 6002, and so does the next one. It returns the session in
// the broken-transaction state.
func brokenMySQLTxn(t *testing.T, haMode string, second *mariadbd.Server) (*testproxy.Proxy, *obRaw) {
	t.Helper()
	hash := "*" + strings.ToUpper(hex.EncodeToString(mysqlproto.PasswordStage2(mysqlproto.PasswordStage1([]byte(otherPass)))))
	// A proxy of its own: another one's health view may still list the
	// server stopped before.
	p := startProxy(t, haMode, "rootservice_list", second.Addr()+";"+maria(t).Addr(),
		"mysql_user_hashes", otherUser+":"+hash,
		"server_detect_mode", "2", "detect_server_timeout", "1s", "server_detect_refresh_interval", "200ms")
	var cl *obRaw
	for i := 0; cl == nil; i++ {
		if i == 20 {
			t.Fatal("no session reached the second server in 20 logins")
		}
		rc, err := testkit.DialRaw(p.Addr, hangLimit)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { rc.Close() })
		if err := rc.Login(otherUser, otherPass, testDB, hangLimit); err != nil {
			t.Fatal(err)
		}
		c := &obRaw{t: t, RawConn: rc}
		if c.row("SELECT @@port")[0] == fmt.Sprint(second.Port()) {
			cl = c
		}
	}
	cl.exec("BEGIN")
	if got := cl.row("SELECT @@in_transaction, @@port"); got[0] != "1" {
		t.Fatalf("BEGIN did not open a transaction: %q", got)
	}
	sigstop(t, second.PID())
	t.Cleanup(func() { syscall.Kill(second.PID(), syscall.SIGCONT) })
	wantTxnRolledBack(t, cl, "SELECT @@port")
	wantTxnRolledBack(t, cl, "SELECT 1")
	return p, cl
}

// checkMovedOutsideTxn checks, after the command exit ended the broken
// transaction with status flags st, that the session runs statements on
// the package's MariaDB (it moved), as otherUser, outside a transaction.
func checkMovedOutsideTxn(t *testing.T, p *testproxy.Proxy, cl *obRaw, exit string, st mysqlproto.ServerStatus) {
	t.Helper()
	if st.Has(mysqlproto.StatusInTrans) {
		t.Errorf("after %s the status flags %#x still say in transaction", exit, st)
	}
	got := cl.row("SELECT @@in_transaction, @@port, CURRENT_USER()")
	if want := []string{"0", fmt.Sprint(maria(t).Port()), otherUser + "@%"}; strings.Join(got, ",") != strings.Join(want, ",") {
		t.Fatalf("after %s: in_transaction, port, user = %q, want %q (moved, outside a transaction)", exit, got, want)
	}
	if sess, ok := p.Server.Session(cl.Greeting.ConnectionID); !ok || sess.Info().InTrans {
		t.Errorf("after %s obgate shows the session in a transaction (or lost it: %v)", exit, ok)
	}
	if st := rawQueryStatus(t, cl, "SELECT 2"); st.Has(mysqlproto.StatusInTrans) {
		t.Errorf("a read after %s says in transaction (status %#x)", exit, st)
	}
}

// TestMySQLModeBrokenTransactionEndsWithResetOrChangeUser fronts two
// MariaDB servers in mysql routing mode with a movable session whose
// transaction breaks with its server (brokenMySQLTxn: ERR 6002 for the
// statement waiting there and for the next one). It proves that
// COM_RESET_CONNECTION, and COM_CHANGE_USER (to the same user), end the
// broken-transaction state as txnbroken.go says, and that the session,
// which could move but for its transaction, keeps its connection: the
// command is answered OK without SERVER_STATUS_IN_TRANS, and the session
// has moved to the other server (@@port) and runs statements there
// outside a transaction (@@in_transaction = 0). Were the state kept, the
// SELECT would get ERR 6002; had the session not moved, the command would
// fail with ERR 2013 and the client connection close (what COM_CHANGE_USER
// did at commit 71610cd, where noteMoveState marked the session stateful
// for a COM_CHANGE_USER before side.serverFor could move it).
func TestMySQLModeBrokenTransactionEndsWithResetOrChangeUser(t *testing.T) {
	maria(t)
	testkit.CheckLeaks(t)
	second := startSecondMariaDB(t)
	forEachMode(t, func(t *testing.T, haMode string) {
		t.Run("COM_RESET_CONNECTION", func(t *testing.T) {
			p, cl := brokenMySQLTxn(t, haMode, second)
			st := rawOKStatus(t, cl, []byte{byte(mysqlproto.ComResetConnection)})
			checkMovedOutsideTxn(t, p, cl, "COM_RESET_CONNECTION", st)
		})
		t.Run("COM_CHANGE_USER", func(t *testing.T) {
			p, cl := brokenMySQLTxn(t, haMode, second)
			rawChangeUser(t, cl, otherUser, otherPass, testDB)
			st := rawQueryStatus(t, cl, "SELECT 0")
			checkMovedOutsideTxn(t, p, cl, "COM_CHANGE_USER", st)
		})
	})
}
