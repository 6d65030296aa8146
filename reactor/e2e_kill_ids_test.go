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
	"obgate/mysqlproto"
	"obgate/reactor"
)

// cancelWithKill runs SELECT SLEEP(30) on victim under a context that is
// cancelled after a moment; on cancel a second connection sends KILL QUERY
// with the id the victim's CONNECTION_ID() returned, as applications do
// to stop a statement. It returns the statement's error.
func cancelWithKill(t *testing.T, db *sql.DB, victim *sql.Conn) error {
	t.Helper()
	var id uint64
	if err := victim.QueryRowContext(context.Background(), "SELECT CONNECTION_ID()").Scan(&id); err != nil {
		t.Fatalf("CONNECTION_ID(): %v", err)
	}
	killer, err := db.Conn(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	defer killer.Close()
	ctx, cancel := context.WithCancel(context.Background())
	stop := context.AfterFunc(ctx, func() {
		kctx, kcancel := context.WithTimeout(context.Background(), hangLimit)
		defer kcancel()
		if _, err := killer.ExecContext(kctx, fmt.Sprintf("KILL QUERY %d", id)); err != nil {
			t.Errorf("KILL QUERY %d: %v", id, err)
		}
	})
	defer stop()
	time.AfterFunc(300*time.Millisecond, cancel)
	var slept int
	err = victim.QueryRowContext(context.Background(), "SELECT SLEEP(30)").Scan(&slept)
	if err == nil && slept != 1 {
		return errors.New("SLEEP(30) was not interrupted")
	}
	return err
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
		err = cancelWithKill(t, db, victim)
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
				err := cancelWithKill(t, db, victim)
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

func sessionsOf(p *testkit.Proxy) map[uint32]reactor.SessionInfo {
	out := map[uint32]reactor.SessionInfo{}
	for _, s := range p.Server.Sessions() {
		out[s.ID] = s
	}
	return out
}
