package reactor_test

import (
	"context"
	"fmt"
	"testing"

	"obgate/internal/testkit"
	"obgate/mysqlproto"
)

// TestOBBrokenTransactionThroughDatabaseSQL loses the node of a
// database/sql transaction that uses prepared statements (as most Go
// programs write): the statement fails with ERR 6002, Tx.Rollback ends
// it, and the same pool goes on with autocommit writes and transactions.
func TestOBBrokenTransactionThroughDatabaseSQL(t *testing.T) {
	testkit.CheckLeaks(t)
	c := startOBSim(t)
	forEachMode(t, func(t *testing.T, haMode string) {
		resetOBSim(t, c)
		p := startOBProxy(t, c, haMode)
		db := openDB(t, obDriverConfig(p, obFullUser, obDB))
		db.SetMaxOpenConns(1)
		ctx := context.Background()
		mk := newMarker("pooltx")
		tx, err := db.BeginTx(ctx, nil)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := tx.ExecContext(ctx, fmt.Sprintf("INSERT INTO kv VALUES (?, ?) /* %s-1 */", mk), 8600, "a"); err != nil {
			t.Fatal(err)
		}
		var node string
		for _, e := range proxyEntries(c, mk+"-1") {
			node = e.Node
		}
		if err := c.Node(node).Stop(); err != nil {
			t.Fatal(err)
		}
		defer c.Node(node).Start()
		_, err = tx.ExecContext(ctx, fmt.Sprintf("INSERT INTO kv VALUES (?, ?) /* %s-2 */", mk), 8601, "b")
		if code := sqlErrorCode(err); code != mysqlproto.OBTransRollbacked {
			t.Fatalf("statement of the broken transaction: %v, want ERR 6002", err)
		}
		if err := tx.Rollback(); err != nil {
			t.Fatalf("Rollback: %v", err)
		}
		for i := range 4 {
			if _, err := db.ExecContext(ctx, fmt.Sprintf("INSERT INTO kv VALUES (?, ?) /* %s-3 */", mk), 8610+i, "c"); err != nil {
				t.Fatalf("autocommit write %d after the broken transaction: %v", i, err)
			}
			tx, err := db.BeginTx(ctx, nil)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := tx.ExecContext(ctx, fmt.Sprintf("INSERT INTO kv VALUES (?, ?) /* %s-4 */", mk), 8620+i, "d"); err != nil {
				t.Fatalf("transaction %d after the broken one: %v", i, err)
			}
			if err := tx.Commit(); err != nil {
				t.Fatalf("commit %d: %v", i, err)
			}
		}
	})
}
