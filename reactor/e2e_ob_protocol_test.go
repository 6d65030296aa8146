package reactor_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"

	"obgate/internal/testkit"
	"obgate/mysqlproto"
	"obgate/tools/obsim"

	"github.com/go-sql-driver/mysql"
)

// obProtocols are obgate's ways of talking to servers: the OB 2.0 protocol
// (the default), plain MySQL packets, and the MySQL compressed protocol
// (OceanBase's CHECKSUM capability).
var obProtocols = []struct {
	name string
	kv   []string
	want string // LogEntry.Protocol
}{
	{"ob20", nil, "ob20"},
	{"mysql", []string{"enable_ob_protocol_v2", "false"}, "mysql"},
	{"compressed", []string{"enable_ob_protocol_v2", "false", "enable_compression_protocol", "true"}, "compressed"},
}

// TestOBProtocolChoice checks which protocol obgate's server sessions
// speak: OB 2.0 by default, MySQL with enable_ob_protocol_v2=false, the
// compressed protocol when enable_compression_protocol is on as well.
func TestOBProtocolChoice(t *testing.T) {
	testkit.CheckLeaks(t)
	c := startOBSim(t)
	for _, proto := range obProtocols {
		t.Run(proto.name, func(t *testing.T) {
			resetOBSim(t, c)
			p := startOBProxy(t, c, "netpoll", append([]string{"enable_cached_server", "false"}, proto.kv...)...)
			_, conn := obConn(t, p)
			mk := newMarker("proto")
			execCtx(t, conn, fmt.Sprintf("SET @p = 1 /* %s */", mk))
			for i := range 10 {
				if got := rowStrings(t, conn, fmt.Sprintf("SELECT ?+@p /* %s */", mk), i); fmt.Sprint(got) != fmt.Sprintf("[[%d]]", i+1) {
					t.Fatalf("got %q", got)
				}
			}
			// A node logs a statement once it has answered it, so the
			// last execute's entry may come just after its row.
			executes := func() (n int) {
				for _, e := range c.Log() {
					if e.Client == "proxy" && e.Command == "execute" && strings.Contains(e.SQL, mk) {
						n++
					}
				}
				return n
			}
			testkit.EventuallyDescribe(t, hangLimit, func() bool { return executes() >= 10 }, func() string {
				return fmt.Sprintf("the nodes logged %d of the 10 executes", executes())
			})
			var n int
			for _, e := range c.Log() {
				if e.Client != "proxy" {
					continue
				}
				n++
				if e.Protocol != proto.want {
					t.Errorf("server session speaks %q, want %q:%s", e.Protocol, proto.want, describeEntries([]obsim.LogEntry{e}))
				}
			}
			if n < 12 {
				t.Errorf("only %d log entries of obgate's sessions", n)
			}
		})
	}
}

// TestOBCorruptFrame makes the node that serves a session send one OB 2.0
// frame with a wrong checksum. No byte of the damaged answer reaches the
// client. A read-only statement is sent again to another server session
// and the client gets its answer without an error; any other statement
// fails with ERR 8003 (its outcome is unknown). Either way the session
// goes on, on another server session, with its state.
func TestOBCorruptFrame(t *testing.T) {
	testkit.CheckLeaks(t)
	c := startOBSim(t)
	forEachMode(t, func(t *testing.T, mode string) {
		resetOBSim(t, c)
		p := startOBProxy(t, c, mode)
		_, conn := obConn(t, p)
		mk := newMarker("corrupt")
		execCtx(t, conn, fmt.Sprintf("SET @keep = 'kept', time_zone = '+05:05' /* %s-set */", mk))
		ctx, cancel := context.WithTimeout(context.Background(), hangLimit)
		defer cancel()
		damageNext := func(probe string) obsim.LogEntry {
			rowStrings(t, conn, "SELECT 1 /* "+probe+"*/")
			x := entryFor(t, c, probe)
			c.Node(x.Node).CorruptFrames(1)
			return x
		}
		for round := range 3 {
			x := damageNext(fmt.Sprintf("%s-probe%d ", mk, round))
			read := fmt.Sprintf("%s-read%d ", mk, round)
			got := rowStrings(t, conn, fmt.Sprintf("SELECT CONCAT('secret-', %d), @keep /* %s*/", round, read))
			if want := fmt.Sprintf("[[secret-%d kept]]", round); fmt.Sprint(got) != want {
				t.Fatalf("round %d: read whose answer was damaged: %q, want %s", round, got, want)
			}
			if es := proxyEntries(c, read); len(es) != 2 || es[0].Session != x.Session || es[1].Session == x.Session {
				t.Errorf("round %d: the read should have run on server session %d of %s, then once elsewhere:%s", round, x.Session, x.Node, describeEntries(es))
			}

			y := damageNext(fmt.Sprintf("%s-probe%db ", mk, round))
			write := fmt.Sprintf("%s-write%d ", mk, round)
			_, err := conn.ExecContext(ctx, fmt.Sprintf("UPDATE kv SET v = v WHERE id = -1 /* %s*/", write))
			if code := sqlErrorCode(err); code != mysqlproto.OBPacketChecksumError {
				t.Fatalf("round %d: write whose answer was damaged: %v, want ERR 8003", round, err)
			}
			if es := proxyEntries(c, write); len(es) != 1 || es[0].Session != y.Session {
				t.Errorf("round %d: the write should have run once, on server session %d of %s:%s", round, y.Session, y.Node, describeEntries(es))
			}

			next := fmt.Sprintf("%s-next%d ", mk, round)
			got = rowStrings(t, conn, fmt.Sprintf("SELECT CONCAT('fine-', %d), @keep, @@time_zone /* %s*/", round, next))
			if want := fmt.Sprintf("[[fine-%d kept +05:05]]", round); fmt.Sprint(got) != want {
				t.Errorf("round %d: after ERR 8003: %q, want %s", round, got, want)
			}
			if e := entryFor(t, c, next); e.Session == y.Session {
				t.Errorf("round %d: the server session whose frame was damaged (%d) was used again", round, y.Session)
			}
		}
		if n, _ := testkit.MetricSum(p.MetricsText(), "obgate_statement_resent_total"); n != 3 {
			t.Errorf("obgate_statement_resent_total = %v, want 3", n)
		}
	})
}

// TestOBCorruptFrameInTransaction damages the answer to a statement of an
// open transaction: the transaction cannot go on elsewhere, so the client
// gets ERR 6002 (transaction rolled back) for that statement and for every
// later one until its ROLLBACK, which succeeds; nothing of the transaction
// is committed, the statements after it never run on another node, and
// after the ROLLBACK the session works again.
func TestOBCorruptFrameInTransaction(t *testing.T) {
	testkit.CheckLeaks(t)
	c := startOBSim(t)
	forEachMode(t, func(t *testing.T, mode string) {
		resetOBSim(t, c)
		p := startOBProxy(t, c, mode)
		_, conn := obConn(t, p)
		mk := newMarker("ctxn")
		key := int(markerSeq.Add(1))
		execCtx(t, conn, fmt.Sprintf("BEGIN /* %s-begin */", mk))
		execCtx(t, conn, fmt.Sprintf("INSERT INTO kv VALUES (%d, 'txn') /* %s-insert */", key, mk))
		x := entryFor(t, c, mk+"-insert ")
		c.Node(x.Node).CorruptFrames(1)
		ctx, cancel := context.WithTimeout(context.Background(), hangLimit)
		defer cancel()
		_, err := conn.ExecContext(ctx, fmt.Sprintf("UPDATE kv SET v = 'upd' WHERE id = %d /* %s-update */", key, mk))
		if code := sqlErrorCode(err); code != mysqlproto.OBTransRollbacked {
			t.Fatalf("UPDATE whose answer was damaged inside a transaction: %v (code %d), want ERR %d", err, code, mysqlproto.OBTransRollbacked)
		}
		for i, q := range []string{
			fmt.Sprintf("INSERT INTO kv VALUES (%d, 'after') /* %s-after */", key+1, mk),
			fmt.Sprintf("SELECT v FROM kv WHERE id = %d /* %s-after */", key, mk),
		} {
			_, err := conn.ExecContext(ctx, q)
			if code := sqlErrorCode(err); code != mysqlproto.OBTransRollbacked {
				t.Fatalf("statement %d after the transaction's server session failed: %v (code %d), want ERR %d", i+1, err, code, mysqlproto.OBTransRollbacked)
			}
		}
		if es := proxyEntries(c, mk+"-after "); len(es) != 0 {
			t.Errorf("a statement of the broken transaction ran on another server session:%s", describeEntries(es))
		}
		if _, err := conn.ExecContext(ctx, "ROLLBACK"); err != nil {
			t.Fatalf("ROLLBACK of the broken transaction: %v, want OK", err)
		}
		if got := rowStrings(t, conn, fmt.Sprintf("SELECT 7 /* %s-again */", mk)); fmt.Sprint(got) != "[[7]]" {
			t.Fatalf("SELECT after the ROLLBACK: %q", got)
		}
		if es := proxyEntries(c, mk+"-again "); len(es) != 1 {
			t.Errorf("the SELECT after the ROLLBACK ran %d times:%s", len(es), describeEntries(es))
		}
		var n int
		if err := c.Admin().QueryRow("SELECT COUNT(*) FROM "+obDB+".kv WHERE id IN (?, ?)", key, key+1).Scan(&n); err != nil || n != 0 {
			t.Errorf("rows of the broken transaction: %d, %v; want none", n, err)
		}
	})
}

// TestOBClients drives obgate in front of obsim with the mariadb client
// and go-sql-driver, with each server protocol: multi-statement batches,
// server-side prepared statements and a 100,000-row result.
func TestOBClients(t *testing.T) {
	testkit.CheckLeaks(t)
	c := startOBSim(t)
	forEachMode(t, func(t *testing.T, mode string) {
		for _, proto := range obProtocols {
			t.Run(proto.name, func(t *testing.T) {
				resetOBSim(t, c)
				p := startOBProxy(t, c, mode, proto.kv...)
				tbl := fmt.Sprintf("cli_%s_%s", mode, proto.name)

				t.Run("mariadb CLI", func(t *testing.T) {
					args := []string{"-u", obFullUser, "-p" + obPass, "-D", obDB, "-N", "-B"}
					out := cli(t, p, "", append(args, "-e", fmt.Sprintf(
						"DROP TABLE IF EXISTS %[1]s; CREATE TABLE %[1]s (id INT PRIMARY KEY, v VARCHAR(20));"+
							" INSERT INTO %[1]s VALUES (1,'one'),(2,'two'); SET @x = 'three';"+
							" INSERT INTO %[1]s VALUES (3, @x); SELECT COUNT(*) FROM %[1]s; SELECT v FROM %[1]s ORDER BY id DESC;"+
							" SELECT COUNT(*), SUM(seq) FROM seq_1_to_100000", tbl))...)
					if got, want := lines(out), []string{"3", "three", "two", "one", "100000\t5000050000"}; !slices.Equal(got, want) {
						t.Errorf("batch output %q, want %q", got, want)
					}
					out = cli(t, p, "", append(args, "-e", "SELECT seq FROM seq_1_to_100000")...)
					got := lines(out)
					if len(got) != 100000 {
						t.Fatalf("100k-row result: %d lines", len(got))
					}
					for _, i := range []int{0, 4095, 65535, 99999} {
						if got[i] != itoa(int64(i+1)) {
							t.Errorf("line %d is %q", i, got[i])
						}
					}
				})

				t.Run("go-sql-driver", func(t *testing.T) {
					db, conn := obConn(t, p, func(cfg *mysql.Config) { cfg.MultiStatements = true })
					ctx, cancel := context.WithTimeout(context.Background(), hangLimit)
					defer cancel()
					execCtx(t, conn, fmt.Sprintf("DROP TABLE IF EXISTS %[1]s_d; CREATE TABLE %[1]s_d (id INT PRIMARY KEY, s VARCHAR(64), f DOUBLE, b BLOB)", tbl))

					// Multi-statement query with several result sets.
					rows, err := conn.QueryContext(ctx, "SELECT 1; SELECT 'two', 2; DO 0; SELECT 3")
					if err != nil {
						t.Fatal(err)
					}
					var sets []string
					for {
						got, err := scanStrings(rows)
						if err != nil {
							t.Fatal(err)
						}
						sets = append(sets, fmt.Sprint(got))
						if !rows.NextResultSet() {
							break
						}
					}
					rows.Close()
					if want := []string{"[[1]]", "[[two 2]]", "[]", "[[3]]"}; !slices.Equal(sets, want) && !slices.Equal(sets, []string{"[[1]]", "[[two 2]]", "[[3]]"}) {
						t.Errorf("result sets %q, want %q", sets, want)
					}

					// Prepared-statement workload (interpolateParams=false).
					ins, err := conn.PrepareContext(ctx, fmt.Sprintf("INSERT INTO %s_d VALUES (?, ?, ?, ?)", tbl))
					if err != nil {
						t.Fatal(err)
					}
					sel, err := conn.PrepareContext(ctx, fmt.Sprintf("SELECT s, f, b FROM %s_d WHERE id = ?", tbl))
					if err != nil {
						t.Fatal(err)
					}
					for i := range 200 {
						s := fmt.Sprintf("row '%d' \\ \"q\" é", i)
						b := []byte{byte(i), 0, 0xff, '\\', '\''}
						if _, err := ins.ExecContext(ctx, i, s, float64(i)/4, b); err != nil {
							t.Fatalf("insert %d: %v", i, err)
						}
						var gs string
						var gf float64
						var gb []byte
						if err := sel.QueryRowContext(ctx, i).Scan(&gs, &gf, &gb); err != nil {
							t.Fatalf("select %d: %v", i, err)
						}
						if gs != s || gf != float64(i)/4 || string(gb) != string(b) {
							t.Fatalf("row %d: got %q %v %x, want %q %v %x", i, gs, gf, gb, s, float64(i)/4, b)
						}
					}
					ins.Close()
					sel.Close()

					// 100,000 rows, text and binary protocol.
					for _, q := range []struct {
						sql  string
						args []any
					}{{"SELECT seq FROM seq_1_to_100000", nil}, {"SELECT seq FROM seq_1_to_100000 WHERE seq > ?", []any{0}}} {
						rows, err := db.QueryContext(ctx, q.sql, q.args...)
						if err != nil {
							t.Fatal(err)
						}
						var n, sum, prev int64
						for rows.Next() {
							var v int64
							if err := rows.Scan(&v); err != nil {
								t.Fatal(err)
							}
							if v != prev+1 {
								t.Fatalf("%s: row %d is %d after %d", q.sql, n, v, prev)
							}
							prev = v
							n++
							sum += v
						}
						if err := rows.Err(); err != nil {
							t.Fatal(err)
						}
						rows.Close()
						if n != 100000 || sum != 5000050000 {
							t.Errorf("%s: %d rows summing to %d", q.sql, n, sum)
						}
					}
				})
				for _, e := range c.Log() {
					if e.Client == "proxy" && e.Protocol != proto.want {
						t.Errorf("a server session speaks %q, want %q", e.Protocol, proto.want)
						break
					}
				}
			})
		}
	})
}
