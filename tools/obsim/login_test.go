package obsim

import (
	"bytes"
	"database/sql"
	"errors"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/go-sql-driver/mysql"

	"obgate/mysqlproto"
)

func sqlCode(err error) uint16 {
	var me *mysql.MySQLError
	if errors.As(err, &me) {
		return me.Number
	}
	if se, ok := mysqlproto.AsSQLError(err); ok {
		return se.Code
	}
	return 0
}

func TestLoginDirect(t *testing.T) {
	c := testCluster(t)
	n1 := c.Node("zone1-1")
	for _, tc := range []struct {
		user, pass string
		node       string
		code       uint16
	}{
		{"root@test", "", "zone1-1", 0},
		{"root", "", "zone3-1", 0}, // tenant sys by default
		{"root@sys#obtest", "", "zone2-1", 0},
		{"root@test#obtest:7", "", "zone2-1", 0},
		{"app@app", "app-secret", "zone2-1", 0},
		{"app@app", "wrong", "zone2-1", 1045},
		{"app@app", "app-secret", "zone3-1", 5150}, // tenant app has no unit in zone3
		{"root@nosuch", "", "zone1-1", 1045},
		{"root@test#other", "", "zone1-1", 4666},
		{"root@test#obtest:8", "", "zone1-1", 4666},
		{"nobody@test", "", "zone1-1", 1045},
	} {
		db := openDB(t, c.Node(tc.node), tc.user, tc.pass, "")
		err := db.Ping()
		if got := sqlCode(err); got != tc.code {
			t.Errorf("%s/%s on %s: err %v, want code %d", tc.user, tc.pass, tc.node, err, tc.code)
		}
	}
	e := lastEntry(t, c.Node("zone1-1"), "login")
	if e.Result != "error" || e.Code != 1045 || e.User != "nobody" {
		t.Errorf("last login entry %+v", e)
	}

	// The session runs as the same MariaDB user, so its privileges hold.
	admin := c.Admin()
	for _, q := range []string{"CREATE USER IF NOT EXISTS 'reader'@'%' IDENTIFIED BY 'r'", "GRANT SELECT ON test.* TO 'reader'@'%'"} {
		if _, err := admin.Exec(q); err != nil {
			t.Fatal(err)
		}
	}
	reader := openDB(t, n1, "reader@test", "r", "test")
	if rows := queryStrings(t, reader, "SELECT CURRENT_USER(), COUNT(*) FROM orders"); rows[0][0] != "reader@%" || rows[0][1] != "6" {
		t.Errorf("reader: %v", rows)
	}
	if _, err := reader.Exec("INSERT INTO orders VALUES (100, 'x', 1)"); sqlCode(err) != 1142 {
		t.Errorf("reader insert: %v", err)
	}
}

func TestLoginProxyScrambles(t *testing.T) {
	c := testCluster(t)
	addr := c.Node("zone2-1").Addr()
	// Fixed scramble.
	cl, err := dialOB(t, addr, obLogin{user: "app@app", password: "app-secret", proxy: true})
	if err != nil {
		t.Fatalf("fixed scramble: %v", err)
	}
	if r := cl.query("SELECT CURRENT_USER()"); r.err != nil || r.rows[0][0] != "app@%" {
		t.Errorf("query: %+v", r)
	}
	if e := lastEntry(t, c.Node("zone2-1"), "login"); e.Client != "proxy" || e.Result != "ok" {
		t.Errorf("login entry %+v", e)
	}
	// __proxy_scramble: the proxy's own scramble XOR the node's.
	own := []byte("0123456789abcdefghij")
	if _, err := dialOB(t, addr, obLogin{user: "app@app", password: "app-secret", proxy: true, proxyScramble: own}); err != nil {
		t.Fatalf("xor scramble: %v", err)
	}
	// A plain client must answer the node's scramble, not the fixed one.
	if _, err := dialOB(t, addr, obLogin{user: "app@app", password: "app-secret", proxyScramble: nil, proxy: false}); err != nil {
		t.Fatalf("plain client: %v", err)
	}
	// __cluster_name must match.
	if _, err := dialOB(t, addr, obLogin{user: "app@app", password: "app-secret", proxy: true, clusterName: "elsewhere"}); sqlCode(err) != 4666 {
		t.Errorf("cluster mismatch: %v", err)
	}
	if _, err := dialOB(t, addr, obLogin{user: "app@app", password: "app-secret", proxy: true, clusterName: "obtest"}); err != nil {
		t.Errorf("cluster match: %v", err)
	}
}

// odpServerCaps is what ODP asks of an OBServer by default with OB20 on
// (ob20-protocol.md §11.3).
const odpServerCaps mysqlproto.OBCapability = 10206039

func TestOB20Exchange(t *testing.T) {
	c := testCluster(t)
	n := c.Node("zone1-1")
	cl, err := dialOB(t, n.Addr(), obLogin{user: "root@test", db: "test", proxy: true, obCaps: odpServerCaps})
	if err != nil {
		t.Fatal(err)
	}
	want := odpServerCaps & (mysqlproto.OBCapPartitionTable | mysqlproto.OBCapChangeUser | mysqlproto.OBCapReadWeak |
		mysqlproto.OBCapProtocolV2 | mysqlproto.OBCapProxyNewExtraInfo | mysqlproto.OBCapLocalFiles |
		mysqlproto.OBCapExtraOKPacketForStatistics)
	if cl.granted != want || !cl.loginOK.Status.Has(mysqlproto.StatusSessionStateChange) {
		t.Fatalf("granted %v (%d), want %v", cl.granted, cl.granted, want)
	}
	r := cl.query("SELECT id, customer FROM orders WHERE id IN (1, 2) ORDER BY id")
	if r.err != nil || len(r.rows) != 2 || r.rows[1][1] != "bob" {
		t.Fatalf("result: %+v", r)
	}
	// EXTRA_OK_PACKET_FOR_STATISTICS: the result set's EOF is followed by
	// an OK that carries its partition hit.
	if _, found := sessionVar(r.ok.SessionState, mysqlproto.OBPartitionHitVar); !r.extraOK || !found {
		t.Errorf("no extra OK with the partition hit after the result set: %+v", r)
	}
	if h := cl.ob20.Header(); h.RequestID != 0x8B45D4 || h.Seq != 1 || !h.Flags.Has(mysqlproto.OB20LastPacket) || h.ConnectionID != cl.connID {
		t.Errorf("response header %+v", h)
	}
	r = cl.query("UPDATE orders SET amount = amount WHERE id = 3")
	if r.err != nil {
		t.Fatal(r.err)
	}
	if _, found := sessionVar(r.ok.SessionState, mysqlproto.OBPartitionHitVar); !found {
		t.Errorf("no partition hit in OK: %x", r.ok.SessionState)
	}
	if r = cl.query("SELECT * FROM no_such_table"); r.err == nil || r.err.Code != 1146 {
		t.Errorf("error result: %+v", r)
	}
	// A large result spans several frames.
	r = cl.query("SELECT REPEAT('x', 200000)")
	if r.err != nil || len(r.rows[0][0]) != 200000 {
		t.Fatalf("large result: err %v", r.err)
	}
	if e := lastEntry(t, n, "query"); e.Protocol != "ob20" || e.Client != "proxy" {
		t.Errorf("log entry %+v", e)
	}
}

// TestOB20RawFrames checks the frames on the wire against the codec and
// that a request with a bad checksum closes the connection.
func TestOB20RawFrames(t *testing.T) {
	c := testCluster(t)
	cl, err := dialOB(t, c.Node("zone3-1").Addr(), obLogin{user: "root@test", proxy: true,
		obCaps: mysqlproto.OBCapProtocolV2 | mysqlproto.OBCapProxyNewExtraInfo})
	if err != nil {
		t.Fatal(err)
	}
	packet, _ := mysqlproto.AppendPacket(nil, 0, append([]byte{byte(mysqlproto.ComQuery)}, "select 1"...))
	extra := mysqlproto.AppendOB20ExtraItem(nil, mysqlproto.OB20ExtraTraceInfo, []byte("client_ip=127.0.0.1"))
	req := mysqlproto.AppendOB20Frame(nil, mysqlproto.OB20Header{ConnectionID: cl.connID, RequestID: 7,
		Flags: mysqlproto.OB20LastPacket | mysqlproto.OB20NewExtraInfo}, extra, packet)
	if _, err := cl.conn.Write(req); err != nil {
		t.Fatal(err)
	}
	_ = cl.conn.SetReadDeadline(time.Now().Add(5 * time.Second))
	hdr := make([]byte, mysqlproto.OB20FrameHeaderLen)
	if _, err := io.ReadFull(cl.br, hdr); err != nil {
		t.Fatal(err)
	}
	n, _ := mysqlproto.OB20FrameLen(hdr)
	frame := append(hdr, make([]byte, n-len(hdr))...)
	if _, err := io.ReadFull(cl.br, frame[len(hdr):]); err != nil {
		t.Fatal(err)
	}
	h, payload, _, err := mysqlproto.ParseOB20Frame(frame)
	if err != nil {
		t.Fatalf("response frame: %v", err)
	}
	if h.RequestID != 7 || h.Seq != 1 || h.CompressedSeq != 1 || h.ConnectionID != cl.connID || h.Flags != mysqlproto.OB20LastPacket || h.HeaderChecksum == 0 {
		t.Errorf("response header %+v", h)
	}
	if !bytes.Contains(payload, []byte{0x01, '1'}) {
		t.Errorf("payload %x lacks the row", payload)
	}
	// Corrupt one payload byte of the next request.
	bad := bytes.Clone(req)
	bad[len(bad)-6] ^= 0x01
	if _, err := cl.conn.Write(bad); err != nil {
		t.Fatal(err)
	}
	if !cl.closed(5 * time.Second) {
		t.Fatal("connection still open after a frame with a bad checksum")
	}
}

func TestCompressedExchange(t *testing.T) {
	c := testCluster(t)
	n := c.Node("zone2-1")
	cl, err := dialOB(t, n.Addr(), obLogin{user: "root@test", db: "test", proxy: true, obCaps: mysqlproto.OBCapChecksum})
	if err != nil {
		t.Fatal(err)
	}
	if cl.granted != mysqlproto.OBCapChecksum {
		t.Fatalf("granted %v", cl.granted)
	}
	r := cl.query("SELECT customer FROM orders WHERE id = 5")
	if r.err != nil || r.rows[0][0] != "eve" {
		t.Fatalf("result: %+v", r)
	}
	before := cl.comp.CompressedFramesRead()
	if r = cl.query("SELECT REPEAT('ab', 100000)"); r.err != nil || len(r.rows[0][0]) != 200000 {
		t.Fatalf("large result: %v", r.err)
	}
	// The 200 kB row is zlib-framed; the final EOF may come in a frame of
	// its own, too short to compress.
	if cl.comp.CompressedFramesRead() == before {
		t.Error("no frame of the large response was zlib-framed")
	}
	if e := lastEntry(t, n, "query"); e.Protocol != "compressed" {
		t.Errorf("log entry %+v", e)
	}

	// A MySQL client asking for CLIENT_COMPRESS gets the compressed
	// protocol too.
	cfg := mysql.NewConfig()
	cfg.User, cfg.Net, cfg.Addr, cfg.DBName = "root@test", "tcp", n.Addr(), "test"
	if err := cfg.Apply(mysql.EnableCompression(true)); err != nil {
		t.Fatal(err)
	}
	db := openDBConfig(t, cfg)
	if rows := queryStrings(t, db, "SELECT COUNT(*), REPEAT('y', 5000) FROM orders"); rows[0][0] != "6" || len(rows[0][1]) != 5000 {
		t.Errorf("compressed go-sql-driver: %v", rows[0][0])
	}
	if e := lastEntry(t, n, "query"); e.Protocol != "compressed" || e.Client != "direct" {
		t.Errorf("log entry %+v", e)
	}
}

func TestSessionVariables(t *testing.T) {
	c := testCluster(t)
	cl, err := dialOB(t, c.Node("zone1-1").Addr(), obLogin{user: "root@test", db: "test", proxy: true, obCaps: odpServerCaps})
	if err != nil {
		t.Fatal(err)
	}
	r := cl.query("SET @@ob_query_timeout = 10000000, @@autocommit = 1;")
	if r.err != nil {
		t.Fatal(r.err)
	}
	if v, ok := sessionVar(r.ok.SessionState, "ob_query_timeout"); !ok || v != "10000000" {
		t.Errorf("ob_query_timeout state %q %v in %x", v, ok, r.ok.SessionState)
	}
	if v, ok := sessionVar(r.ok.SessionState, "autocommit"); !ok || v != "ON" {
		t.Errorf("autocommit state %q %v", v, ok)
	}
	r = cl.query("SET ob_query_timeout = 1234, ob_read_consistency = 'WEAK'")
	if r.err != nil {
		t.Fatal(r.err)
	}
	r = cl.query("SELECT @@ob_query_timeout, @@ob_read_consistency, @@session.ob_trx_timeout, ob_version()")
	if r.err != nil || strings.Join(r.rows[0], ",") != "1234,WEAK,86400000000,4.2.1.0" ||
		strings.Join(r.columns, ",") != "@@ob_query_timeout,@@ob_read_consistency,@@session.ob_trx_timeout,ob_version()" {
		t.Errorf("select vars: %+v", r)
	}
	if r = cl.query("SET @@ob_proxy_partition_hit = 0"); r.err == nil || r.err.Code != 1238 {
		t.Errorf("read-only var: %+v", r.err)
	}
	r = cl.query("SET @@session.transaction_isolation = 'READ-COMMITTED'")
	if r.err != nil {
		t.Fatal(r.err)
	}
	if r = cl.query("SELECT @@transaction_isolation"); r.err != nil || r.rows[0][0] != "READ-COMMITTED" {
		t.Errorf("transaction_isolation: %+v", r)
	}
	// Schema changes are tracked.
	if r = cl.query("USE appdb"); r.err != nil {
		t.Fatal(r.err)
	}
	if r = cl.query("SELECT DATABASE()"); r.rows[0][0] != "appdb" {
		t.Errorf("database: %v", r.rows)
	}
}

func openDBConfig(t *testing.T, cfg *mysql.Config) *sql.DB {
	t.Helper()
	connector, err := mysql.NewConnector(cfg)
	if err != nil {
		t.Fatal(err)
	}
	db := sql.OpenDB(connector)
	t.Cleanup(func() { db.Close() })
	return db
}
