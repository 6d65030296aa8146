package reactor_test

import (
	"context"
	"fmt"
	"testing"

	"obgate/internal/testkit"
	"obgate/mysqlproto"
)

// TestOBCorruptFramePrepared is TestOBCorruptFrame for the way most
// applications talk: go-sql-driver with arguments, which prepares the
// statement on the server and executes it. The execute of a prepared
// SELECT is a read: when its answer is damaged it goes again, on another
// server session where obgate prepares it anew, and the client gets its
// rows. The execute of a prepared UPDATE may have run: it fails with ERR
// 8003 and runs once.
func TestOBCorruptFramePrepared(t *testing.T) {
	testkit.CheckLeaks(t)
	c := startOBSim(t)
	forEachMode(t, func(t *testing.T, mode string) {
		resetOBSim(t, c)
		p := startOBProxy(t, c, mode)
		_, conn := obConn(t, p)
		mk := newMarker("pscorrupt")
		ctx, cancel := context.WithTimeout(context.Background(), hangLimit)
		defer cancel()
		execsOf := func(marker string) []string {
			var out []string
			for _, e := range proxyEntries(c, marker) {
				if e.Command == "execute" {
					out = append(out, fmt.Sprintf("%s/%d", e.Node, e.Session))
				}
			}
			return out
		}
		for round := range 3 {
			// The answer to the prepare is damaged: the prepare goes
			// again elsewhere.
			probe := fmt.Sprintf("%s-probe%d ", mk, round)
			rowStrings(t, conn, "SELECT 1 /* "+probe+"*/")
			x := entryFor(t, c, probe)
			c.Node(x.Node).CorruptFrames(1)
			read := fmt.Sprintf("%s-read%d ", mk, round)
			stmt, err := conn.PrepareContext(ctx, "SELECT CONCAT('secret-', ?) /* "+read+"*/")
			if err != nil {
				t.Fatalf("round %d: prepare whose answer was damaged: %v", round, err)
			}
			// Now the answer to an execute is damaged.
			probe = fmt.Sprintf("%s-probe%da ", mk, round)
			rowStrings(t, conn, "SELECT 1 /* "+probe+"*/")
			x = entryFor(t, c, probe)
			c.Node(x.Node).CorruptFrames(1)
			var got string
			if err := stmt.QueryRowContext(ctx, round).Scan(&got); err != nil {
				t.Fatalf("round %d: prepared read whose answer was damaged: %v", round, err)
			}
			_ = stmt.Close()
			if want := fmt.Sprintf("secret-%d", round); got != want {
				t.Fatalf("round %d: prepared read: %q, want %q", round, got, want)
			}
			if execs := execsOf(read); len(execs) != 2 || execs[0] != fmt.Sprintf("%s/%d", x.Node, x.Session) || execs[1] == execs[0] {
				t.Errorf("round %d: the execute should have run on %s/%d, then once elsewhere: %v", round, x.Node, x.Session, execs)
			}

			write := fmt.Sprintf("%s-write%d ", mk, round)
			upd, err := conn.PrepareContext(ctx, "UPDATE kv SET v = v WHERE id = ? /* "+write+"*/")
			if err != nil {
				t.Fatal(err)
			}
			probe = fmt.Sprintf("%s-probe%db ", mk, round)
			rowStrings(t, conn, "SELECT 1 /* "+probe+"*/")
			y := entryFor(t, c, probe)
			c.Node(y.Node).CorruptFrames(1)
			_, err = upd.ExecContext(ctx, -1-round)
			_ = upd.Close()
			if code := sqlErrorCode(err); code != mysqlproto.OBPacketChecksumError {
				t.Fatalf("round %d: prepared write whose answer was damaged: %v, want ERR 8003", round, err)
			}
			if writes := len(execsOf(write)); writes != 1 {
				t.Errorf("round %d: the prepared write ran %d times, want once:%s", round, writes, describeEntries(proxyEntries(c, write)))
			}
		}
	})
}
