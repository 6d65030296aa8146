package reactor_test

import (
	"context"
	"encoding/binary"
	"fmt"
	"testing"

	"obgate/internal/testkit"
	"obgate/mysqlproto"
	"obgate/tools/obsim"
)

// TestOBPreparedAcrossServers prepares statements once and executes them
// many times with enable_cached_server=false: the executions run on
// several nodes (obgate prepares them again where needed, under its own
// statement id) and every result is right, session state included.
func TestOBPreparedAcrossServers(t *testing.T) {
	testkit.CheckLeaks(t)
	c := startOBSim(t)
	forEachMode(t, func(t *testing.T, mode string) {
		resetOBSim(t, c)
		p := startOBProxy(t, c, mode, "enable_cached_server", "false")
		_, conn := obConn(t, p)
		ctx, cancel := context.WithTimeout(context.Background(), hangLimit)
		defer cancel()
		mk := newMarker("ps")
		execCtx(t, conn, "SET time_zone = '+07:07'")

		plus := mk + "-plus "
		st, err := conn.PrepareContext(ctx, "SELECT ?+1, @@time_zone /* "+plus+"*/")
		if err != nil {
			t.Fatal(err)
		}
		for i := range 30 {
			var n int64
			var tz string
			if err := st.QueryRowContext(ctx, i*7).Scan(&n, &tz); err != nil {
				t.Fatalf("execute %d: %v", i, err)
			}
			if n != int64(i*7+1) || tz != "+07:07" {
				t.Errorf("execute %d: got %d %q, want %d +07:07", i, n, tz, i*7+1)
			}
		}
		st.Close()
		checkExecuteSpread(t, c, plus, 30)

		// A string and an integer parameter, executed repeatedly.
		mixed := mk + "-mixed "
		st, err = conn.PrepareContext(ctx, "SELECT CONCAT(?, ':', ? * 2), ? IS NULL /* "+mixed+"*/")
		if err != nil {
			t.Fatal(err)
		}
		for i := range 30 {
			var s string
			var isNull bool
			var third any
			if i%3 == 0 {
				third = nil
			} else {
				third = fmt.Sprintf("v%d", i)
			}
			if err := st.QueryRowContext(ctx, fmt.Sprintf("s'%d", i), i, third).Scan(&s, &isNull); err != nil {
				t.Fatalf("execute %d: %v", i, err)
			}
			if want := fmt.Sprintf("s'%d:%d", i, i*2); s != want || isNull != (i%3 == 0) {
				t.Errorf("execute %d: got %q %v, want %q %v", i, s, isNull, want, i%3 == 0)
			}
		}
		st.Close()
		checkExecuteSpread(t, c, mixed, 30)
	})
}

// checkExecuteSpread checks that the executions of the statement marked
// mk ran want times in all, on at least two nodes, each where the
// statement was prepared on that server session first.
func checkExecuteSpread(t *testing.T, c *obsim.Cluster, mk string, want int) {
	t.Helper()
	var execs []obsim.LogEntry
	prepared := map[uint32]bool{}
	for _, e := range proxyEntries(c, mk) {
		switch e.Command {
		case "prepare":
			prepared[e.Session] = true
		case "execute":
			execs = append(execs, e)
			if !prepared[e.Session] {
				t.Errorf("execute on server session %d before a prepare there", e.Session)
			}
		}
	}
	if len(execs) != want {
		t.Errorf("%d executions logged, want %d", len(execs), want)
	}
	if nodes := nodesOf(execs); len(nodes) < 2 {
		t.Errorf("with enable_cached_server=false %d executions ran on %v only, want several nodes", len(execs), nodes)
	}
}

// TestOBPreparedTypesResent executes a statement with a raw client that
// sends the parameter types only with the first COM_STMT_EXECUTE
// (new-params-bound = 0 afterwards, as MySQL allows): obgate must put the
// types in for a server session that never saw them, or that server
// misreads the parameters.
func TestOBPreparedTypesResent(t *testing.T) {
	testkit.CheckLeaks(t)
	c := startOBSim(t)
	forEachMode(t, func(t *testing.T, mode string) {
		resetOBSim(t, c)
		p := startOBProxy(t, c, mode, "enable_cached_server", "false")
		r, err := testkit.DialRaw(p.Addr, hangLimit)
		if err != nil {
			t.Fatal(err)
		}
		defer r.Close()
		if err := r.Login(obFullUser, obPass, obDB, hangLimit); err != nil {
			t.Fatal(err)
		}
		mk := newMarker("types")
		sql := "SELECT CONCAT(?, '|', ? + 1000) /* " + mk + " */"
		if err := r.WritePacket(0, append([]byte{byte(mysqlproto.ComStmtPrepare)}, sql...)); err != nil {
			t.Fatal(err)
		}
		id := readPrepareOK(t, r, 2, 1)

		for i := range 24 {
			str := fmt.Sprintf("str-%d", i)
			body := binary.LittleEndian.AppendUint32([]byte{byte(mysqlproto.ComStmtExecute)}, id)
			body = append(body, 0)                           // flags: no cursor
			body = binary.LittleEndian.AppendUint32(body, 1) // iteration count
			body = append(body, 0)                           // NULL bitmap, 2 parameters
			if i == 0 {
				body = append(body, 1, 0xfd, 0, 0x08, 0) // new-params-bound, VAR_STRING, LONGLONG
			} else {
				body = append(body, 0) // types as before
			}
			body = mysqlproto.AppendLenEncBytes(body, []byte(str))
			body = binary.LittleEndian.AppendUint64(body, uint64(i))
			if err := r.WritePacket(0, body); err != nil {
				t.Fatal(err)
			}
			pkts, err := r.ReadResponse(hangLimit)
			if err != nil {
				t.Fatalf("execute %d: %v", i, err)
			}
			if pkts[0][0] == mysqlproto.ERRHeader {
				e, _ := mysqlproto.ParseERR(pkts[0])
				t.Fatalf("execute %d: %v", i, mysqlproto.SQLErrorFromERR(e))
			}
			got, ok := binaryRowString(pkts)
			if want := fmt.Sprintf("%s|%d", str, i+1000); !ok || got != want {
				t.Fatalf("execute %d (types sent: %v): got %q, want %q:%s", i, i == 0, got, want, describeEntries(proxyEntries(c, mk)))
			}
		}
		var execs []obsim.LogEntry
		for _, e := range proxyEntries(c, mk) {
			if e.Command == "execute" {
				execs = append(execs, e)
			}
		}
		if len(execs) != 24 {
			t.Fatalf("%d executions logged, want 24", len(execs))
		}
		moved := false
		for _, e := range execs[1:] {
			if e.Node != execs[0].Node {
				moved = true
			}
		}
		if !moved {
			t.Errorf("every execution ran on %s: no execute without types reached another server", execs[0].Node)
		}
	})
}

// readPrepareOK reads a COM_STMT_PREPARE answer with the given parameter
// and column counts and returns the statement id.
func readPrepareOK(t *testing.T, r *testkit.RawConn, params, columns int) uint32 {
	t.Helper()
	p, _, err := r.ReadPacket(hangLimit)
	if err != nil {
		t.Fatal(err)
	}
	if len(p) < 12 || p[0] != 0 {
		if len(p) > 0 && p[0] == mysqlproto.ERRHeader {
			e, _ := mysqlproto.ParseERR(p)
			t.Fatalf("prepare: %v", mysqlproto.SQLErrorFromERR(e))
		}
		t.Fatalf("prepare answer %x", p)
	}
	id := binary.LittleEndian.Uint32(p[1:])
	gotCols, gotParams := int(binary.LittleEndian.Uint16(p[5:])), int(binary.LittleEndian.Uint16(p[7:]))
	if gotCols != columns || gotParams != params {
		t.Fatalf("prepare: %d params, %d columns; want %d, %d", gotParams, gotCols, params, columns)
	}
	for _, n := range []int{params, columns} {
		if n == 0 {
			continue
		}
		for range n + 1 { // definitions and EOF
			if _, _, err := r.ReadPacket(hangLimit); err != nil {
				t.Fatal(err)
			}
		}
	}
	return id
}

// binaryRowString reads the single string column of a one-row binary
// result set (column count, column, EOF, row, EOF).
func binaryRowString(pkts [][]byte) (string, bool) {
	if len(pkts) != 5 {
		return "", false
	}
	row := pkts[3]
	if len(row) < 2 || row[0] != 0 {
		return "", false
	}
	// Header byte, NULL bitmap of (1 + 7 + 2) / 8 = 1 byte, value.
	if row[1]&0x04 != 0 {
		return "NULL", true
	}
	v, _, ok := mysqlproto.ReadLenEncString(row, 2)
	return string(v), ok
}
