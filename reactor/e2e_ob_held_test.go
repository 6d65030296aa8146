package reactor_test

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/go-sql-driver/mysql"
)

// TestOBHeldBeginChain: obgate holds a plain BEGIN until the first real
// statement. COMMIT AND CHAIN / ROLLBACK AND CHAIN of a held transaction
// start the next one (a later INSERT is rolled back with it), and
// ROLLBACK TO SAVEPOINT reaches the server, which knows no such savepoint.
func TestOBHeldBeginChain(t *testing.T) {
	c := startOBSim(t)
	forEachMode(t, func(t *testing.T, mode string) {
		p := startOBProxy(t, c, mode)
		_, conn := obConn(t, p)
		ctx := context.Background()
		for i, end := range []string{"COMMIT AND CHAIN", "ROLLBACK AND CHAIN", "COMMIT WORK AND CHAIN"} {
			id := 9100 + i
			for _, q := range []string{"BEGIN", end, fmt.Sprintf("INSERT INTO kv VALUES (%d, 'chained')", id), "ROLLBACK"} {
				if _, err := conn.ExecContext(ctx, q); err != nil {
					t.Fatalf("%s: %v", q, err)
				}
			}
			var n int
			if err := conn.QueryRowContext(ctx, fmt.Sprintf("SELECT COUNT(*) FROM kv WHERE id = %d", id)).Scan(&n); err != nil || n != 0 {
				t.Errorf("after BEGIN; %s; INSERT; ROLLBACK: %d rows (%v), want the insert rolled back", end, n, err)
			}
		}
		if _, err := conn.ExecContext(ctx, "BEGIN"); err != nil {
			t.Fatal(err)
		}
		_, err := conn.ExecContext(ctx, "ROLLBACK TO SAVEPOINT nosuch")
		var me *mysql.MySQLError
		if !errors.As(err, &me) || me.Number != 1305 {
			t.Errorf("ROLLBACK TO SAVEPOINT of a held transaction: %v, want the server's ERR 1305", err)
		}
		if _, err := conn.ExecContext(ctx, "ROLLBACK"); err != nil {
			t.Fatal(err)
		}
	})
}

// TestOBShowWarningsStays: SHOW WARNINGS, @@warning_count and
// LAST_INSERT_ID() read what the previous statement left on its server,
// so they run there even when statements otherwise spread over servers.
func TestOBShowWarningsStays(t *testing.T) {
	c := startOBSim(t)
	p := startOBProxy(t, c, "net", "enable_cached_server", "false")
	_, conn := obConn(t, p)
	ctx := context.Background()
	for i := range 12 {
		var v int
		if err := conn.QueryRowContext(ctx, "SELECT CAST('12abc' AS SIGNED)").Scan(&v); err != nil {
			t.Fatal(err)
		}
		rows, err := conn.QueryContext(ctx, "SHOW WARNINGS")
		if err != nil {
			t.Fatal(err)
		}
		got, err := scanStrings(rows)
		if err != nil {
			t.Fatal(err)
		}
		if len(got) != 1 {
			t.Fatalf("round %d: SHOW WARNINGS after a truncating CAST listed %v, want its warning", i, got)
		}
		if err := conn.QueryRowContext(ctx, "SELECT CAST('12abc' AS SIGNED)").Scan(&v); err != nil {
			t.Fatal(err)
		}
		var n int
		if err := conn.QueryRowContext(ctx, "SELECT @@warning_count").Scan(&n); err != nil || n != 1 {
			t.Fatalf("round %d: @@warning_count = %d (%v), want 1", i, n, err)
		}
	}
}
