package reactor_test

import (
	"context"
	"database/sql"
	"encoding/binary"
	"errors"
	"fmt"
	"testing"
	"time"

	"obgate/internal/testkit"
	"obgate/internal/testproxy"
	"obgate/mysqlproto"
)

// dialClient logs in through obgate with mysqlproto's client, whose
// Handshake.ConnectionID is obgate's connection id.
func dialClient(t *testing.T, p *testproxy.Proxy, user, pass string) *mysqlproto.Client {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	c, err := mysqlproto.Dial(ctx, p.Addr, mysqlproto.ClientOptions{User: user, Password: pass, Database: testDB})
	if err != nil {
		t.Fatalf("login as %s: %v", user, err)
	}
	t.Cleanup(func() { c.Conn().Close() })
	return c
}

type queryResult struct {
	res *mysqlproto.Result
	err error
}

// startSleep runs SELECT SLEEP(secs) on c in a goroutine and waits until
// MariaDB runs it; the result arrives on the returned channel.
func startSleep(t *testing.T, p *testproxy.Proxy, direct *sql.DB, c *mysqlproto.Client, secs int) <-chan queryResult {
	t.Helper()
	done := make(chan queryResult, 1)
	go func() {
		res, err := c.Query(fmt.Sprintf("SELECT SLEEP(%d)", secs))
		done <- queryResult{res, err}
	}()
	sess, ok := p.Server.Session(c.ConnectionID())
	if !ok {
		t.Fatalf("obgate has no session %d", c.ConnectionID())
	}
	serverID := sess.Info().ServerID
	testkit.Eventually(t, hangLimit, func() bool {
		var n int
		err := direct.QueryRow("SELECT COUNT(*) FROM information_schema.PROCESSLIST WHERE ID = ? AND INFO LIKE 'SELECT SLEEP%'", serverID).Scan(&n)
		return err == nil && n == 1
	}, "MariaDB thread %d is not running the SLEEP", serverID)
	return done
}

func waitResult(t *testing.T, done <-chan queryResult) queryResult {
	t.Helper()
	select {
	case r := <-done:
		return r
	case <-time.After(hangLimit):
		t.Fatal("the query did not return")
	}
	return queryResult{}
}

func sqlCode(err error) uint16 {
	if se, ok := mysqlproto.AsSQLError(err); ok {
		return se.Code
	}
	return 0
}

// TestE2EKill checks KILL [QUERY] with obgate's connection ids: obgate
// translates them to the server's ids, refuses unknown ones with ERR 1094,
// and handles a session killing itself.
func TestE2EKill(t *testing.T) {
	forEachMode(t, func(t *testing.T, mode string) {
		testkit.CheckLeaks(t)
		p := startProxy(t, mode)
		direct := directDB(t)

		t.Run("KILL QUERY", func(t *testing.T) {
			victim := dialClient(t, p, "root", "")
			killer := dialClient(t, p, "root", "")
			id := victim.ConnectionID()
			sess, _ := p.Server.Session(id)
			if sid := sess.Info().ServerID; sid == id {
				t.Fatalf("obgate id %d equals MariaDB's thread id: the test could not tell them apart", id)
			}
			done := startSleep(t, p, direct, victim, 30)
			if _, err := killer.Exec(fmt.Sprintf("KILL QUERY %d", id)); err != nil {
				t.Fatalf("KILL QUERY %d: %v", id, err)
			}
			r := waitResult(t, done)
			// MariaDB ends an interrupted SLEEP with ERR 1317 or with the
			// value 1; an uninterrupted one returns 0.
			switch {
			case r.err != nil && sqlCode(r.err) != mysqlproto.ERQueryInterrupted:
				t.Errorf("killed SLEEP failed with %v, want ERR 1317 or 1", r.err)
			case r.err == nil && r.res.String(0, "SLEEP(30)") != "1":
				t.Errorf("killed SLEEP returned %q, want 1 (interrupted)", r.res.String(0, "SLEEP(30)"))
			}
			res, err := victim.Query("SELECT 1 AS one")
			if err != nil || res.String(0, "one") != "1" {
				t.Fatalf("after KILL QUERY the session fails: %v", err)
			}
		})

		t.Run("KILL connection while running", func(t *testing.T) {
			victim := dialClient(t, p, "root", "")
			killer := dialClient(t, p, "root", "")
			id := victim.ConnectionID()
			done := startSleep(t, p, direct, victim, 30)
			if _, err := killer.Exec(fmt.Sprintf("KILL CONNECTION %d", id)); err != nil {
				t.Fatalf("KILL CONNECTION %d: %v", id, err)
			}
			if r := waitResult(t, done); r.err == nil {
				t.Errorf("the killed session's SLEEP returned %q, want an error", r.res.String(0, "SLEEP(30)"))
			}
			testkit.Eventually(t, hangLimit, func() bool { _, ok := p.Server.Session(id); return !ok },
				"session %d still exists after KILL", id)
		})

		t.Run("KILL idle", func(t *testing.T) {
			victim := dialClient(t, p, "root", "")
			killer := dialClient(t, p, "root", "")
			id := victim.ConnectionID()
			sess, _ := p.Server.Session(id)
			serverID := sess.Info().ServerID
			if _, err := killer.Exec(fmt.Sprintf("KILL %d", id)); err != nil {
				t.Fatalf("KILL %d: %v", id, err)
			}
			if _, err := victim.Query("SELECT 1"); err == nil {
				t.Error("the killed session still answers")
			}
			testkit.Eventually(t, hangLimit, func() bool { _, ok := p.Server.Session(id); return !ok },
				"session %d still exists after KILL", id)
			testkit.Eventually(t, hangLimit, func() bool {
				var n int
				err := direct.QueryRow("SELECT COUNT(*) FROM information_schema.PROCESSLIST WHERE ID = ?", serverID).Scan(&n)
				return err == nil && n == 0
			}, "MariaDB thread %d of the killed session is still there", serverID)
			if _, err := killer.Query("SELECT 1"); err != nil {
				t.Errorf("the killer's session broke: %v", err)
			}
		})

		t.Run("COM_PROCESS_KILL", func(t *testing.T) {
			victim := dialClient(t, p, "root", "")
			id := victim.ConnectionID()
			k, err := testkit.DialRaw(p.Addr, hangLimit)
			if err != nil {
				t.Fatal(err)
			}
			defer k.Close()
			if err := k.Login("root", "", "", hangLimit); err != nil {
				t.Fatal(err)
			}
			payload := binary.LittleEndian.AppendUint32([]byte{byte(mysqlproto.ComProcessKill)}, id)
			if err := k.WritePacket(0, payload); err != nil {
				t.Fatal(err)
			}
			resp, _, err := k.ReadPacket(hangLimit)
			if err != nil || len(resp) == 0 || resp[0] != mysqlproto.OKHeader {
				t.Fatalf("COM_PROCESS_KILL answer %x, %v; want OK", resp, err)
			}
			if _, err := victim.Query("SELECT 1"); err == nil {
				t.Error("the killed session still answers")
			}
		})

		t.Run("another user's session", func(t *testing.T) {
			victim := dialClient(t, p, "root", "")
			o := dialClient(t, p, otherUser, otherPass)
			for _, stmt := range []string{"KILL QUERY %d", "KILL %d"} {
				_, err := o.Exec(fmt.Sprintf(stmt, victim.ConnectionID()))
				if code := sqlCode(err); code != mysqlproto.ERKillDenied {
					t.Errorf("%s of root's session as %s: %v, want ERR 1095", stmt, otherUser, err)
				}
			}
			if _, err := victim.Query("SELECT 1"); err != nil {
				t.Errorf("root's session broke: %v", err)
			}
		})

		t.Run("unknown id", func(t *testing.T) {
			c := dialClient(t, p, "root", "")
			for _, stmt := range []string{"KILL QUERY 4000000000", "KILL 4000000000", "KILL CONNECTION 4000000000"} {
				_, err := c.Exec(stmt)
				if code := sqlCode(err); code != mysqlproto.ERNoSuchThread {
					t.Errorf("%s: err %v, want ERR 1094", stmt, err)
				}
			}
			// An administrator session is not a thread a user can kill.
			adm := dialClient(t, p, "root@proxysys", "")
			if _, err := c.Exec(fmt.Sprintf("KILL %d", adm.ConnectionID())); sqlCode(err) != mysqlproto.ERNoSuchThread {
				t.Errorf("KILL of root@proxysys session: err %v, want ERR 1094", err)
			}
			if _, err := adm.Query("PING PROXY"); err != nil {
				t.Errorf("the administrator session broke: %v", err)
			}
			if _, err := c.Query("SELECT 1"); err != nil {
				t.Errorf("session broke after the failed KILLs: %v", err)
			}
		})

		t.Run("own id", func(t *testing.T) {
			c := dialClient(t, p, "root", "")
			id := c.ConnectionID()
			_, err := c.Exec(fmt.Sprintf("KILL QUERY %d", id))
			if code := sqlCode(err); code != mysqlproto.ERQueryInterrupted {
				t.Errorf("KILL QUERY of own id: err %v, want ERR 1317", err)
			}
			if _, err := c.Query("SELECT 1"); err != nil {
				t.Fatalf("KILL QUERY of own id broke the session: %v", err)
			}
			_, err = c.Exec(fmt.Sprintf("KILL %d", id))
			if err == nil {
				t.Error("KILL of own id answered OK")
			}
			var se *mysqlproto.SQLError
			if !errors.As(err, &se) {
				t.Errorf("KILL of own id: err %v, want an ERR packet before the close", err)
			}
			if _, err := c.Query("SELECT 1"); err == nil {
				t.Error("the session survived KILL of its own id")
			}
			testkit.Eventually(t, hangLimit, func() bool { _, ok := p.Server.Session(id); return !ok },
				"session %d still exists after killing itself", id)
		})
	})
}
