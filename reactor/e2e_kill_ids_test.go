package reactor_test

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/go-sql-driver/mysql"

	"obgate/internal/testkit"
	"obgate/internal/testproxy"
	"obgate/mysqlproto"
	"obgate/reactor"
)

// cancelWithKill runs SELECT SLEEP(30) on victim and, once MariaDB (the
// package's server, behind obsim too) lists the statement running, sends
// KILL QUERY from a second connection, as applications do to stop a
// statement: kill builds it from the id the victim's CONNECTION_ID()
// returned (killByConnectionID when nil). It returns the statement's
// error.
func cancelWithKill(t *testing.T, db *sql.DB, victim *sql.Conn, kill func(connectionID uint32) string) error {
	t.Helper()
	var id uint32
	if err := victim.QueryRowContext(context.Background(), "SELECT CONNECTION_ID()").Scan(&id); err != nil {
		t.Fatalf("CONNECTION_ID(): %v", err)
	}
	killer, err := db.Conn(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	defer killer.Close()
	mk := newMarker("killme")
	dsn := maria(t).DSN("root", "", "")
	if kill == nil {
		kill = killByConnectionID
	}
	stmt := kill(id)
	killed := make(chan error, 1)
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), hangLimit)
		defer cancel()
		if err := waitRunning(ctx, dsn, mk); err != nil {
			killed <- err
			return
		}
		_, err := killer.ExecContext(ctx, stmt)
		killed <- err
	}()
	var slept int
	err = victim.QueryRowContext(context.Background(), "SELECT SLEEP(30) /* "+mk+" */").Scan(&slept)
	if kerr := <-killed; kerr != nil {
		t.Fatalf("%s: %v", stmt, kerr)
	}
	if err == nil && slept != 1 {
		return errors.New("SLEEP(30) was not interrupted")
	}
	return err
}

func killByConnectionID(id uint32) string { return fmt.Sprintf("KILL QUERY %d", id) }

// waitRunning waits until the MariaDB at dsn lists a statement whose text
// contains marker.
func waitRunning(ctx context.Context, dsn, marker string) error {
	admin, err := sql.Open("mysql", dsn)
	if err != nil {
		return err
	}
	defer admin.Close()
	for {
		var n int
		err := admin.QueryRowContext(ctx, "SELECT COUNT(*) FROM information_schema.PROCESSLIST WHERE INFO LIKE CONCAT('%', ?, '%') AND INFO NOT LIKE '%PROCESSLIST%'", marker).Scan(&n)
		if err != nil {
			return err
		}
		if n > 0 {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("statement %s never ran: %w", marker, ctx.Err())
		case <-time.After(5 * time.Millisecond):
		}
	}
}

// TestE2EKillByConnectionID: KILL QUERY <CONNECTION_ID()> from another
// connection interrupts exactly that statement, the victim stays usable,
// and no other session (whose obgate id might equal the victim's server
// thread id) is touched.
func TestE2EKillByConnectionID(t *testing.T) {
	forEachMode(t, func(t *testing.T, mode string) {
		p := startProxy(t, mode)
		db := openDB(t, driverConfig(p, "root", "", testDB))
		// Bystanders run statements that would fail if a KILL reached them.
		var bystanders []*sql.Conn
		for range 3 {
			c, err := db.Conn(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			bystanders = append(bystanders, c)
		}
		victim, err := db.Conn(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		defer victim.Close()
		done := make(chan error, len(bystanders))
		for _, b := range bystanders {
			go func() {
				var v int
				done <- b.QueryRowContext(context.Background(), "SELECT SLEEP(2)").Scan(&v)
			}()
		}
		err = cancelWithKill(t, db, victim, nil)
		var me *mysql.MySQLError
		if err != nil && (!errors.As(err, &me) || me.Number != mysqlproto.ERQueryInterrupted) {
			t.Fatalf("interrupted statement: %v, want ERR 1317 or SLEEP returning 1", err)
		}
		var one int
		if err := victim.QueryRowContext(context.Background(), "SELECT 1").Scan(&one); err != nil {
			t.Fatalf("victim after KILL QUERY: %v", err)
		}
		for range bystanders {
			if err := <-done; err != nil {
				t.Errorf("a bystander's statement failed: %v", err)
			}
		}
	})
}

// TestE2EKillBySignedConnectionID: MariaDB Connector/J 2.x keeps the
// handshake's connection id in a signed 32-bit int, so its
// Statement.cancel() and setQueryTimeout() send KILL QUERY -1769996222 for
// a mysql-mode id above 2^31 (which all are: their top bit marks them as
// obgate's). obgate takes that id as the one it gave.
func TestE2EKillBySignedConnectionID(t *testing.T) {
	forEachMode(t, func(t *testing.T, mode string) {
		p := startProxy(t, mode)
		db := openDB(t, driverConfig(p, "root", "", testDB))
		victim, err := db.Conn(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		defer victim.Close()
		// The handshake's id, which Connector/J keeps: obgate's id of
		// the session whose server thread CONNECTION_ID() names.
		var kill string
		signedKill := func(thread uint32) string {
			for _, info := range p.Server.Sessions() {
				if info.ServerID == thread {
					if int32(info.ID) >= 0 {
						t.Errorf("session id %d is below 2^31; the test proves nothing", info.ID)
					}
					kill = fmt.Sprintf("KILL QUERY %d", int32(info.ID))
					return kill
				}
			}
			t.Fatalf("no session runs on server thread %d", thread)
			return ""
		}
		err = cancelWithKill(t, db, victim, signedKill)
		var me *mysql.MySQLError
		if err != nil && (!errors.As(err, &me) || me.Number != mysqlproto.ERQueryInterrupted) {
			t.Fatalf("statement cancelled with %s: %v, want ERR 1317 or SLEEP returning 1", kill, err)
		}
	})
}

// TestE2EKillIDsNeverCross: obgate's client ids and the server's thread
// ids cannot be confused: a client id is never a live server thread id,
// and KILL of an id nobody holds is ERR 1094.
func TestE2EKillIDsNeverCross(t *testing.T) {
	forEachMode(t, func(t *testing.T, mode string) {
		p := startProxy(t, mode)
		a := dialClient(t, p, "root", "")
		b := dialClient(t, p, "root", "")
		sa, _ := p.Server.Session(a.ConnectionID())
		threadA := sa.Info().ServerID
		if _, ok := p.Server.Session(threadA); ok {
			t.Fatalf("server thread id %d is also an obgate session id", threadA)
		}
		if a.ConnectionID() < 1<<31 {
			t.Fatalf("client session id %d lacks obgate's mark", a.ConnectionID())
		}
		// KILL by the server thread id reaches a's session, not b's.
		if _, err := b.Exec(fmt.Sprintf("KILL %d", threadA)); err != nil {
			t.Fatalf("KILL %d (a's thread id): %v", threadA, err)
		}
		testkit.EventuallyDescribe(t, hangLimit, func() bool { _, ok := p.Server.Session(a.ConnectionID()); return !ok },
			func() string {
				return fmt.Sprintf("the session owning thread %d is still there: %+v", threadA, p.Server.Sessions())
			})
		if _, err := b.Query("SELECT 1"); err != nil {
			t.Fatalf("the killer broke: %v", err)
		}
		for _, id := range []uint32{a.ConnectionID(), a.ConnectionID() + 1<<20, 3999999999} {
			if _, err := b.Exec(fmt.Sprintf("KILL QUERY %d", id)); sqlCode(err) != mysqlproto.ERNoSuchThread {
				t.Errorf("KILL QUERY %d of no session: %v, want ERR 1094", id, err)
			}
		}
	})
}

// TestOBKillByConnectionID: in OceanBase mode, CONNECTION_ID() gives
// obgate's client id with either client_session_id_version (obgate always
// negotiates the server's client session id), and KILL QUERY of that id
// from another connection interrupts exactly that statement, wherever the
// two sessions run.
func TestOBKillByConnectionID(t *testing.T) {
	c := startOBSim(t)
	for _, version := range []string{"1", "2"} {
		t.Run("client_session_id_version="+version, func(t *testing.T) {
			forEachMode(t, func(t *testing.T, mode string) {
				p := startOBProxy(t, c, mode, "client_session_id_version", version)
				db, victim := obConn(t, p)
				var id uint32
				if err := victim.QueryRowContext(context.Background(), "SELECT CONNECTION_ID()").Scan(&id); err != nil {
					t.Fatal(err)
				}
				if _, own := p.Server.Session(id); !own {
					t.Fatalf("CONNECTION_ID() %d is not the obgate session's id", id)
				}
				err := cancelWithKill(t, db, victim, nil)
				var me *mysql.MySQLError
				if err != nil && (!errors.As(err, &me) || me.Number != mysqlproto.ERQueryInterrupted) {
					t.Fatalf("interrupted statement: %v, want ERR 1317 or SLEEP returning 1", err)
				}
				var one int
				if err := victim.QueryRowContext(context.Background(), "SELECT 1").Scan(&one); err != nil {
					t.Fatalf("victim after KILL QUERY: %v", err)
				}
			})
		})
	}
}

// TestOBShowProcesslist: with client_session_id_version 1 obgate answers
// SHOW PROCESSLIST itself with ODP's columns and its own ids; with 2 the
// server answers, naming the session by obgate's id too. Either way the
// listed id is the one KILL takes.
func TestOBShowProcesslist(t *testing.T) {
	c := startOBSim(t)
	for _, version := range []string{"1", "2"} {
		t.Run("client_session_id_version="+version, func(t *testing.T) {
			p := startOBProxy(t, c, "net", "client_session_id_version", version)
			_, conn := obConn(t, p)
			var mine uint32
			for id, s := range sessionsOf(p) {
				if !s.Admin {
					mine = id
				}
			}
			rows, err := conn.QueryContext(context.Background(), "SHOW PROCESSLIST")
			if err != nil {
				t.Fatal(err)
			}
			cols, _ := rows.Columns()
			got, err := scanStrings(rows)
			if err != nil {
				t.Fatal(err)
			}
			if version == "1" && (len(cols) != 10 || cols[0] != "Id" || cols[1] != "Tenant" || cols[6] != "svr_session_count") {
				t.Fatalf("columns %v, want ODP's", cols)
			}
			found := false
			for _, r := range got {
				found = found || r[0] == fmt.Sprint(mine)
			}
			if !found {
				t.Fatalf("SHOW PROCESSLIST %v does not list session %d", got, mine)
			}
		})
	}
}

func sessionsOf(p *testproxy.Proxy) map[uint32]reactor.SessionInfo {
	out := map[uint32]reactor.SessionInfo{}
	for _, s := range p.Server.Sessions() {
		out[s.ID] = s
	}
	return out
}
