package reactor_test

import (
	"context"
	"errors"
	"testing"

	"github.com/go-sql-driver/mysql"
)

// TestOBBadRouteReject: with enable_bad_route_reject, a transaction whose
// first statement after BEGIN names no table is refused as ODP refuses it
// (ERR 1235, "Not supported, bad route request") and the BEGIN is thrown
// away: what follows runs outside a transaction. A first statement that
// names a table is routed as usual, and without the option a tableless
// first statement runs.
func TestOBBadRouteReject(t *testing.T) {
	c := startOBSim(t)
	forEachMode(t, func(t *testing.T, mode string) {
		resetOBSim(t, c)
		ctx := context.Background()

		plain := startOBProxy(t, c, mode)
		_, pc := obConn(t, plain)
		for _, q := range []string{"BEGIN", "SELECT 1", "ROLLBACK"} {
			if _, err := pc.ExecContext(ctx, q); err != nil {
				t.Fatalf("enable_bad_route_reject off: %s: %v", q, err)
			}
		}

		p := startOBProxy(t, c, mode, "enable_bad_route_reject", "true")
		_, conn := obConn(t, p)
		exec := func(q string) {
			t.Helper()
			if _, err := conn.ExecContext(ctx, q); err != nil {
				t.Fatalf("%s: %v", q, err)
			}
		}
		rows := func(id int) int {
			t.Helper()
			var n int
			if err := conn.QueryRowContext(ctx, "SELECT COUNT(*) FROM kv WHERE id = ?", id).Scan(&n); err != nil {
				t.Fatal(err)
			}
			return n
		}

		exec("BEGIN")
		_, err := conn.ExecContext(ctx, "SELECT 1")
		var me *mysql.MySQLError
		if !errors.As(err, &me) || me.Number != 1235 || string(me.SQLState[:]) != "0A000" || me.Message != "Not supported, bad route request" {
			t.Fatalf("BEGIN; SELECT 1: %v, want ERR 1235 (0A000) Not supported, bad route request", err)
		}
		exec("INSERT INTO kv VALUES (9301, 'after refused')")
		exec("ROLLBACK")
		if n := rows(9301); n != 1 {
			t.Errorf("after the refused first statement an INSERT was rolled back (%d rows): the BEGIN was not thrown away", n)
		}

		exec("BEGIN")
		exec("INSERT INTO kv VALUES (9302, 'in txn')")
		exec("ROLLBACK")
		if n := rows(9302); n != 0 {
			t.Errorf("BEGIN; INSERT INTO kv; ROLLBACK left %d rows, want the transaction rolled back", n)
		}
	})
}
