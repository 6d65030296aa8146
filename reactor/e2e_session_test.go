package reactor_test

import (
	"database/sql"
	"encoding/binary"
	"testing"

	"obgate/internal/testkit"
	"obgate/mysqlproto"
	"obgate/reactor"
)

// TestE2EPipelining sends several commands in one write, as drivers do
// after a command without an answer (COM_STMT_CLOSE): each gets its
// answer, in order.
func TestE2EPipelining(t *testing.T) {
	forEachMode(t, func(t *testing.T, mode string) {
		testkit.CheckLeaks(t)
		p := startProxy(t, mode)
		c := loginRaw(t, p, "root", "")
		query := func(q string) []byte {
			b, _ := mysqlproto.AppendPacket(nil, 0, append([]byte{byte(mysqlproto.ComQuery)}, q...))
			return b
		}
		var b []byte
		b = append(b, query("SELECT 'first'")...)
		stmtClose, _ := mysqlproto.AppendPacket(nil, 0, binary.LittleEndian.AppendUint32([]byte{byte(mysqlproto.ComStmtClose)}, 12345))
		b = append(b, stmtClose...) // no answer
		b = append(b, query("SELECT 'second'")...)
		ping, _ := mysqlproto.AppendPacket(nil, 0, []byte{byte(mysqlproto.ComPing)})
		b = append(b, ping...)
		b = append(b, query("SELECT 'third'")...)
		if err := c.Write(b); err != nil {
			t.Fatal(err)
		}
		for _, want := range []string{"first", "second", "PING", "third"} {
			resp, err := c.ReadResponse(hangLimit)
			if err != nil {
				t.Fatalf("reading the answer to %s: %v", want, err)
			}
			if want == "PING" {
				if resp[0][0] != mysqlproto.OKHeader {
					t.Errorf("COM_PING answer %x, want OK", resp[0])
				}
				continue
			}
			// Column count, column, EOF, row, EOF.
			if len(resp) != 5 {
				t.Fatalf("answer to %s: %d packets %x", want, len(resp), resp)
			}
			if row := resp[3]; len(row) < 1 || string(row[1:]) != want {
				t.Errorf("row %q, want %q", row, want)
			}
		}
	})
}

// TestE2EServerSessionsReleased checks that every way a client leaves
// (COM_QUIT, hanging up, closing mid-statement) also ends obgate's server
// session on MariaDB.
func TestE2EServerSessionsReleased(t *testing.T) {
	forEachMode(t, func(t *testing.T, mode string) {
		testkit.CheckLeaks(t)
		p := startProxy(t, mode)
		direct := directDB(t)
		var serverIDs []uint32
		serverID := func(id uint32) uint32 {
			s, ok := p.Server.Session(id)
			if !ok {
				t.Fatalf("no session %d", id)
			}
			return s.Info().ServerID
		}

		quitter := dialClient(t, p, "root", "")
		serverIDs = append(serverIDs, serverID(quitter.ConnectionID()))
		quitter.Close() // COM_QUIT

		hangup := dialClient(t, p, "root", "")
		serverIDs = append(serverIDs, serverID(hangup.ConnectionID()))
		hangup.Conn().Close()

		// A client that hangs up in the middle of a statement: obgate
		// notices when the answer cannot be delivered.
		busy := dialClient(t, p, "root", "")
		serverIDs = append(serverIDs, serverID(busy.ConnectionID()))
		done := startSleep(t, p, direct, busy, 1)
		busy.Conn().Close()
		<-done

		inTxn := dialClient(t, p, "root", "")
		serverIDs = append(serverIDs, serverID(inTxn.ConnectionID()))
		if _, err := inTxn.Exec("BEGIN"); err != nil {
			t.Fatal(err)
		}
		inTxn.Conn().Close()

		waitNoClients(t, p)
		testkit.Eventually(t, hangLimit, func() bool { return countThreads(t, direct, serverIDs) == 0 },
			"MariaDB still has %d of the server sessions %v", countThreads(t, direct, serverIDs), serverIDs)
	})
}

func countThreads(t *testing.T, direct *sql.DB, ids []uint32) int {
	t.Helper()
	n := 0
	for _, id := range ids {
		var k int
		if err := direct.QueryRow("SELECT COUNT(*) FROM information_schema.PROCESSLIST WHERE ID = ?", id).Scan(&k); err != nil {
			t.Fatal(err)
		}
		n += k
	}
	return n
}

// changeUserPacket builds a COM_CHANGE_USER payload for user with
// mysql_native_password against scramble, and an empty attribute list
// (MariaDB requires one when CLIENT_CONNECT_ATTRS is on).
func changeUserPacket(user, pass, db string, scramble []byte) []byte {
	pl := []byte{byte(mysqlproto.ComChangeUser)}
	pl = append(pl, user...)
	pl = append(pl, 0)
	tok := mysqlproto.NativeToken(scramble, []byte(pass))
	pl = append(pl, byte(len(tok)))
	pl = append(pl, tok...)
	pl = append(pl, db...)
	pl = append(pl, 0)
	pl = binary.LittleEndian.AppendUint16(pl, mysqlproto.CharsetUTF8MB4)
	pl = append(pl, mysqlproto.AuthNativePassword...)
	return append(pl, 0, 0)
}

// changeUserExchange sends the COM_CHANGE_USER payload pkt on c and
// answers the server's auth switches with password until the OK.
func changeUserExchange(t *testing.T, c *testkit.RawConn, pkt []byte, password string) {
	t.Helper()
	if err := c.WritePacket(0, pkt); err != nil {
		t.Fatal(err)
	}
	for {
		resp, seq, err := c.ReadPacket(hangLimit)
		if err != nil {
			t.Fatal(err)
		}
		switch resp[0] {
		case mysqlproto.OKHeader:
			return
		case mysqlproto.AuthSwitchRequestHeader:
			sw, _ := mysqlproto.ParseAuthSwitchRequest(resp)
			if err := c.WritePacket(seq+1, mysqlproto.NativeToken(sw.Data, []byte(password))); err != nil {
				t.Fatal(err)
			}
		default:
			t.Fatalf("COM_CHANGE_USER answer %q", resp)
		}
	}
}

// TestE2EChangeUser relays COM_CHANGE_USER, with MariaDB's auth switch in
// between, and checks that obgate then shows the session under the new
// user.
func TestE2EChangeUser(t *testing.T) {
	forEachMode(t, func(t *testing.T, mode string) {
		testkit.CheckLeaks(t)
		p := startProxy(t, mode)
		c, err := testkit.DialRaw(p.Addr, hangLimit)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		if err := c.Login("root", "", "", hangLimit); err != nil {
			t.Fatal(err)
		}
		changeUserExchange(t, c, changeUserPacket(otherUser, otherPass, testDB, c.Greeting.AuthData), otherPass)
		query := func(q string) [][]byte {
			if err := c.WritePacket(0, append([]byte{byte(mysqlproto.ComQuery)}, q...)); err != nil {
				t.Fatal(err)
			}
			resp, err := c.ReadResponse(hangLimit)
			if err != nil {
				t.Fatal(err)
			}
			return resp
		}
		// Column count, column, EOF, row, EOF.
		if resp := query("SELECT CURRENT_USER()"); len(resp) != 5 || string(resp[3][1:]) != otherUser+"@%" {
			t.Fatalf("CURRENT_USER() after COM_CHANGE_USER: %q, want %s@%%", resp, otherUser)
		}
		var info reactor.SessionInfo
		for _, s := range p.Server.Sessions() {
			info = s
		}
		if info.User != otherUser || info.Identity.User != otherUser {
			t.Errorf("obgate shows the session as user %q (%q), want %q", info.User, info.Identity.User, otherUser)
		}
		// SHOW PROXYSESSION as the new user lists the session.
		if resp := query("SHOW PROXYSESSION"); len(resp) < 4 || resp[len(resp)-2][0] == mysqlproto.EOFHeader {
			t.Errorf("SHOW PROXYSESSION as %s after COM_CHANGE_USER lists nothing: %q", otherUser, resp)
		}
	})
}

// TestE2ECursor opens a read-only cursor with COM_STMT_EXECUTE and reads
// it with COM_STMT_FETCH, whose answers carry rows without column
// definitions; the session stays usable afterwards.
func TestE2ECursor(t *testing.T) {
	forEachMode(t, func(t *testing.T, mode string) {
		testkit.CheckLeaks(t)
		p := startProxy(t, mode)
		c := loginRaw(t, p, "root", "")
		read := func() []byte {
			b, _, err := c.ReadPacket(hangLimit)
			if err != nil {
				t.Fatal(err)
			}
			return b
		}
		isEOF := func(b []byte) bool { return mysqlproto.IsEOFPacket(b) }
		if err := c.WritePacket(0, append([]byte{byte(mysqlproto.ComStmtPrepare)}, "SELECT seq FROM seq_1_to_10"...)); err != nil {
			t.Fatal(err)
		}
		ok := read()
		if ok[0] != mysqlproto.OKHeader || len(ok) < 12 {
			t.Fatalf("COM_STMT_PREPARE answer %x", ok)
		}
		id := binary.LittleEndian.Uint32(ok[1:])
		read() // the column
		if b := read(); !isEOF(b) {
			t.Fatalf("want EOF after the column, got %x", b)
		}
		exec := binary.LittleEndian.AppendUint32([]byte{byte(mysqlproto.ComStmtExecute)}, id)
		exec = append(exec, 0x01)                        // CURSOR_TYPE_READ_ONLY
		exec = binary.LittleEndian.AppendUint32(exec, 1) // iteration count
		if err := c.WritePacket(0, exec); err != nil {
			t.Fatal(err)
		}
		read() // column count
		read() // column
		eof := read()
		if st, _ := mysqlproto.ParseEOF(eof); !isEOF(eof) || !st.Status.Has(mysqlproto.StatusCursorExists) {
			t.Fatalf("execute with a cursor ended with %x, want EOF with SERVER_STATUS_CURSOR_EXISTS", eof)
		}
		var got []uint64
		for last := false; !last; {
			fetch := binary.LittleEndian.AppendUint32([]byte{byte(mysqlproto.ComStmtFetch)}, id)
			fetch = binary.LittleEndian.AppendUint32(fetch, 4)
			if err := c.WritePacket(0, fetch); err != nil {
				t.Fatal(err)
			}
			for {
				b := read()
				if isEOF(b) {
					st, _ := mysqlproto.ParseEOF(b)
					last = st.Status.Has(mysqlproto.StatusLastRowSent)
					break
				}
				// Binary row: 0x00, NULL bitmap, BIGINT UNSIGNED.
				if len(b) != 10 {
					t.Fatalf("row %x", b)
				}
				got = append(got, binary.LittleEndian.Uint64(b[2:]))
			}
			if len(got) > 10 {
				t.Fatalf("fetched %d rows from a 10-row cursor", len(got))
			}
		}
		if len(got) != 10 || got[0] != 1 || got[9] != 10 {
			t.Errorf("fetched %v, want 1..10", got)
		}
		if err := c.WritePacket(0, append([]byte{byte(mysqlproto.ComQuery)}, "SELECT 'after'"...)); err != nil {
			t.Fatal(err)
		}
		if resp, err := c.ReadResponse(hangLimit); err != nil || len(resp) != 5 || string(resp[3][1:]) != "after" {
			t.Errorf("statement after the cursor: %q, %v", resp, err)
		}
	})
}

// TestE2ECurrentDB checks that obgate follows the current database (USE,
// COM_INIT_DB, the login's database) and shows it in SHOW PROXYSESSION.
func TestE2ECurrentDB(t *testing.T) {
	forEachMode(t, func(t *testing.T, mode string) {
		testkit.CheckLeaks(t)
		p := startProxy(t, mode)
		db := func(c *mysqlproto.Client) string {
			s, ok := p.Server.Session(c.ConnectionID())
			if !ok {
				t.Fatal("no session")
			}
			res, err := c.Query("SHOW PROXYSESSION")
			if err != nil {
				t.Fatal(err)
			}
			for i := range res.Rows {
				if res.String(i, "proxy_sessid") == itoa(int64(c.ConnectionID())) {
					if got := res.String(i, "db"); got != s.DB() {
						t.Errorf("SHOW PROXYSESSION db %q, Session.DB %q", got, s.DB())
					}
				}
			}
			return s.DB()
		}
		c := dialClient(t, p, "root", "") // logs in to obtest
		if got := db(c); got != testDB {
			t.Errorf("after login with a database: %q, want %q", got, testDB)
		}
		if _, err := c.Exec("USE mysql"); err != nil {
			t.Fatal(err)
		}
		if got := db(c); got != "mysql" {
			t.Errorf("after USE mysql: %q", got)
		}
		// COM_INIT_DB, as drivers send it.
		r := loginRaw(t, p, "root", "")
		if err := r.WritePacket(0, append([]byte{byte(mysqlproto.ComInitDB)}, "information_schema"...)); err != nil {
			t.Fatal(err)
		}
		if resp, err := r.ReadResponse(hangLimit); err != nil || resp[0][0] != mysqlproto.OKHeader {
			t.Fatalf("COM_INIT_DB: %x %v", resp, err)
		}
		// obgate records the database after the OK is on its way; once
		// the next command is answered it has.
		if err := r.WritePacket(0, []byte{byte(mysqlproto.ComPing)}); err != nil {
			t.Fatal(err)
		}
		if _, err := r.ReadResponse(hangLimit); err != nil {
			t.Fatal(err)
		}
		var info reactor.SessionInfo
		for _, s := range p.Server.Sessions() {
			if s.ID != c.ConnectionID() {
				info = s
			}
		}
		if info.DB != "information_schema" {
			t.Errorf("after COM_INIT_DB: %q, want information_schema", info.DB)
		}
		if _, err := c.Exec("USE no_such_db"); sqlCode(err) != 1049 {
			t.Errorf("USE no_such_db: %v, want ERR 1049", err)
		}
		if got := db(c); got != "mysql" {
			t.Errorf("after a failed USE: %q, want mysql", got)
		}
	})
}
