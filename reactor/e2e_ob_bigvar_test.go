package reactor_test

import (
	"context"
	"strings"
	"testing"
)

// TestOBBigUserVariable: a procedure that sets a large OUT user variable
// (MariaDB's sp_stress_case does ~175 KB), then SELECT of it: the server's
// session-state report of the variable is bigger than obgate's read
// buffer and must still reach the client as a well-formed OK.
func TestOBBigUserVariable(t *testing.T) {
	c := startOBSim(t)
	forEachMode(t, func(t *testing.T, mode string) {
		p := startOBProxy(t, c, mode)
		_, conn := obConn(t, p)
		ctx := context.Background()
		for _, q := range []string{
			"DROP PROCEDURE IF EXISTS big_out",
			"CREATE PROCEDURE big_out(OUT body LONGTEXT) BEGIN SET body = REPEAT('x', 180000); END",
			"CALL big_out(@body)",
		} {
			if _, err := conn.ExecContext(ctx, q); err != nil {
				t.Fatalf("%s: %v", q, err)
			}
		}
		var body string
		if err := conn.QueryRowContext(ctx, "SELECT @body").Scan(&body); err != nil {
			t.Fatalf("SELECT @body: %v", err)
		}
		if body != strings.Repeat("x", 180000) {
			t.Fatalf("SELECT @body gave %d bytes", len(body))
		}
		var n int
		if err := conn.QueryRowContext(ctx, "SELECT LENGTH(@body)").Scan(&n); err != nil || n != 180000 {
			t.Fatalf("LENGTH(@body) = %d, %v", n, err)
		}
	})
}
