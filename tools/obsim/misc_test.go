package obsim

import (
	"encoding/binary"
	"net"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"obgate/mysqlproto"
)

func TestPreparedStatements(t *testing.T) {
	c := testCluster(t)
	n := c.Node("zone1-1")
	db := openDB(t, n, "root@test", "", "test")
	var customer string
	if err := db.QueryRow("SELECT customer FROM orders WHERE id = ?", 4).Scan(&customer); err != nil || customer != "dan" {
		t.Fatalf("prepared query: %q %v", customer, err)
	}
	if _, err := db.Exec("UPDATE orders SET amount = ? WHERE id = ?", 40, 4); err != nil {
		t.Fatal(err)
	}
	p := lastEntry(t, n, "prepare")
	e := lastEntry(t, n, "execute")
	if p.SQL != "UPDATE orders SET amount = ? WHERE id = ?" || e.SQL != p.SQL || e.Table != "test.orders" || e.Result != "ok" {
		t.Errorf("prepare %+v\nexecute %+v", p, e)
	}
	// Injected errors apply to executions too.
	if _, err := c.InjectError(ErrorRule{Pattern: "amount = \\?", Code: 4012, Count: 1}); err != nil {
		t.Fatal(err)
	}
	if _, err := db.Exec("UPDATE orders SET amount = ? WHERE id = ?", 40, 4); sqlCode(err) != 4012 {
		t.Errorf("injected on execute: %v", err)
	}
}

func TestChangeUserAndResetConnection(t *testing.T) {
	c := testCluster(t)
	n := c.Node("zone2-1")
	cl, err := dialOB(t, n.Addr(), obLogin{user: "root@test", db: "test"})
	if err != nil {
		t.Fatal(err)
	}
	if r := cl.query("SET ob_query_timeout = 77"); r.err != nil {
		t.Fatal(r.err)
	}
	// COM_RESET_CONNECTION clears the OceanBase variables too.
	cl.pio.ResetSequence()
	if err := cl.pio.WritePacketFlush([]byte{byte(mysqlproto.ComResetConnection)}); err != nil {
		t.Fatal(err)
	}
	if p := cl.read(); p[0] != mysqlproto.OKHeader {
		t.Fatalf("reset connection: %x", p)
	}
	if r := cl.query("SELECT @@ob_query_timeout"); r.rows[0][0] != "10000000" {
		t.Errorf("after reset: %v", r.rows)
	}
	// COM_CHANGE_USER to app of the same tenant.
	token := mysqlproto.NativeToken(cl.scramble, []byte("app-secret"))
	payload := []byte{byte(mysqlproto.ComChangeUser)}
	payload = mysqlproto.AppendNullString(payload, "app@test")
	payload = append(payload, byte(len(token)))
	payload = append(payload, token...)
	payload = mysqlproto.AppendNullString(payload, "test")
	payload = binary.LittleEndian.AppendUint16(payload, 45)
	payload = mysqlproto.AppendNullString(payload, mysqlproto.AuthNativePassword)
	cl.pio.ResetSequence()
	if err := cl.pio.WritePacketFlush(payload); err != nil {
		t.Fatal(err)
	}
	if p := cl.read(); p[0] != mysqlproto.OKHeader {
		t.Fatalf("change user: %x", p)
	}
	if r := cl.query("SELECT CURRENT_USER(), DATABASE()"); r.err != nil || strings.Join(r.rows[0], ",") != "app@%,test" {
		t.Errorf("after change user: %+v", r)
	}
	if e := lastEntry(t, n, "query"); e.User != "app" || e.Tenant != "test" {
		t.Errorf("entry after change user %+v", e)
	}
}

// TestStartupFootprint starts the demo cluster and reports how long it took
// and how much memory obsim and MariaDB use. It reports; it does not
// assert (timings depend on the machine).
func TestStartupFootprint(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a second cluster")
	}
	start := time.Now()
	c := StartForTest(t, nil) // the demo topology on free ports
	took := time.Since(start)
	db := openDB(t, c.Node("zone1-1"), "root@test", "", "test")
	if rows := queryStrings(t, db, "SELECT COUNT(*) FROM orders"); rows[0][0] != "120" {
		t.Fatalf("demo data: %v", rows)
	}
	self := rssKiB(t, "self")
	maria := rssKiB(t, strconv.Itoa(c.MariaDB().PID()))
	t.Logf("3-node demo cluster started in %v (MariaDB %v); RSS: MariaDB %d MiB, obsim (test binary) %d MiB, total %d MiB",
		took.Round(time.Millisecond), c.MariaDB().StartupTime().Round(time.Millisecond), maria/1024, self/1024, (maria+self)/1024)
}

// rssKiB reads VmRSS of a process from /proc.
func rssKiB(t *testing.T, pid string) int {
	raw, err := os.ReadFile("/proc/" + pid + "/status")
	if err != nil {
		t.Skipf("no /proc: %v", err)
	}
	for _, line := range strings.Split(string(raw), "\n") {
		if strings.HasPrefix(line, "VmRSS:") {
			f := strings.Fields(line)
			n, _ := strconv.Atoi(f[1])
			return n
		}
	}
	return 0
}

// TestHandshakeProbe is ODP's detect probe: connect, read the greeting,
// hang up without logging in.
func TestHandshakeProbe(t *testing.T) {
	c := testCluster(t)
	for range 3 {
		conn, err := net.DialTimeout("tcp", c.Node("zone1-1").Addr(), time.Second)
		if err != nil {
			t.Fatal(err)
		}
		_ = conn.SetDeadline(time.Now().Add(5 * time.Second))
		p, err := mysqlproto.NewPacketIO(conn, conn).ReadPacket()
		if err != nil {
			t.Fatal(err)
		}
		hs, err := mysqlproto.ParseHandshake(p)
		if err != nil || !strings.Contains(hs.ServerVersion, "OceanBase") || hs.ConnectionID == 0 || len(hs.AuthData) != 20 {
			t.Fatalf("greeting %+v %v", hs, err)
		}
		conn.Close()
	}
	if err := openDB(t, c.Node("zone1-1"), "root@sys", "", "").Ping(); err != nil {
		t.Fatalf("node unusable after probes: %v", err)
	}
}
