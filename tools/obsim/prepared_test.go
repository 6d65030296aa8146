package obsim

import (
	"encoding/binary"
	"reflect"
	"testing"

	"obgate/mysqlproto"
)

// test.orders: HASH(id) over 4 partitions, leaders p0 zone1-1, p1 zone2-1,
// p2 zone3-1, p3 zone1-1.

func TestPreparedPartitions(t *testing.T) {
	c := testCluster(t)
	z1, z2 := c.Node("zone1-1"), c.Node("zone2-1")
	db1 := openDB(t, z1, "root@test", "", "test")
	db2 := openDB(t, z2, "root@test", "", "test")
	check := func(n *Node, local bool, parts ...string) {
		t.Helper()
		e := lastEntry(t, n, "execute")
		if e.Local != local || !reflect.DeepEqual(e.Partitions, parts) || e.Result != "ok" {
			t.Errorf("%s: %+v, want local %v partitions %v", n.Name(), e, local, parts)
		}
	}
	var s string
	if err := db1.QueryRow("SELECT customer FROM orders WHERE id = ?", 1).Scan(&s); err != nil || s != "ann" {
		t.Fatal(s, err)
	}
	check(z1, false, "p1")
	if err := db2.QueryRow("SELECT customer FROM orders WHERE id = ?", 1).Scan(&s); err != nil {
		t.Fatal(err)
	}
	check(z2, true, "p1")
	if err := db1.QueryRow("SELECT customer FROM orders WHERE id = ?", 4).Scan(&s); err != nil || s != "dan" {
		t.Fatal(s, err)
	}
	check(z1, true, "p0")
	queryStrings(t, db2, "SELECT customer FROM orders WHERE id IN (?, ?)", 1, 5)
	check(z2, true, "p1")
	// Unsigned and string-typed integers locate as numbers do.
	if err := db1.QueryRow("SELECT customer FROM orders WHERE id = ?", uint64(4)).Scan(&s); err != nil {
		t.Fatal(err)
	}
	check(z1, true, "p0")
	if err := db1.QueryRow("SELECT customer FROM orders WHERE id = ?", "4").Scan(&s); err != nil {
		t.Fatal(err)
	}
	check(z1, true, "p0")
	// A parameter obsim cannot use as a key leaves every partition.
	if err := db1.QueryRow("SELECT customer FROM orders WHERE id = ?", 4.0).Scan(&s); err != nil {
		t.Fatal(err)
	}
	check(z1, false)

	if _, err := db1.Exec("INSERT INTO orders (id, customer, amount) VALUES (?, ?, ?)", 8, "hal", 80); err != nil {
		t.Fatal(err)
	}
	check(z1, true, "p0")
	if _, err := db1.Exec("DELETE FROM orders WHERE id = ?", 8); err != nil {
		t.Fatal(err)
	}
	check(z1, true, "p0")

	// KEY partitioning over a string: as the text form.
	want, err := c.PartitionOf("test.accounts", map[string]string{"name": "'carol'"})
	if err != nil {
		t.Fatal(err)
	}
	queryStrings(t, db1, "SELECT balance FROM accounts WHERE name = 'carol'")
	text := lastEntry(t, z1, "query")
	queryStrings(t, db1, "SELECT balance FROM accounts WHERE name = ?", "carol")
	e := lastEntry(t, z1, "execute")
	if !reflect.DeepEqual(e.Partitions, []string{want}) || !reflect.DeepEqual(text.Partitions, e.Partitions) || e.Local != text.Local {
		t.Errorf("accounts: execute %+v, query %+v, want partition %s", e, text, want)
	}
}

// A client that binds the parameter types once (as libmysqlclient does):
// later executes send the new-params-bound flag 0 and are located with the
// kept types; ob_proxy_partition_hit follows.
func TestPreparedKeptTypes(t *testing.T) {
	c := testCluster(t)
	n := c.Node("zone1-1")
	cl, err := dialOB(t, n.Addr(), obLogin{user: "root@test", db: "test"})
	if err != nil {
		t.Fatal(err)
	}
	cl.pio.ResetSequence()
	if err := cl.pio.WritePacketFlush(append([]byte{byte(mysqlproto.ComStmtPrepare)}, "UPDATE orders SET amount = amount WHERE id = ?"...)); err != nil {
		t.Fatal(err)
	}
	prep := cl.read()
	if prep[0] != mysqlproto.OKHeader || binary.LittleEndian.Uint16(prep[7:]) != 1 {
		t.Fatalf("prepare answer %x", prep)
	}
	cl.read() // the parameter definition
	cl.read() // EOF
	id := binary.LittleEndian.Uint32(prep[1:])
	exec := func(pkt []byte, hit string, parts ...string) {
		t.Helper()
		r := cl.command(pkt)
		if r.err != nil {
			t.Fatal(r.err)
		}
		if v, found := sessionVar(r.ok.SessionState, mysqlproto.OBPartitionHitVar); !found || v != hit {
			t.Errorf("ob_proxy_partition_hit %q (%v), want %s", v, found, hit)
		}
		if e := lastEntry(t, n, "execute"); !reflect.DeepEqual(e.Partitions, parts) || e.Local != (hit == "1") {
			t.Errorf("entry %+v, want partitions %v", e, parts)
		}
	}
	long := []byte{mysqlproto.TypeLong, 0}
	exec(execPacket(id, []byte{0}, long, binary.LittleEndian.AppendUint32(nil, 1)), "0", "p1")
	exec(execPacket(id, []byte{0}, nil, binary.LittleEndian.AppendUint32(nil, 4)), "1", "p0")
	exec(execPacket(lastStmtID, []byte{0}, long, binary.LittleEndian.AppendUint32(nil, 2)), "0", "p2")
	// After COM_STMT_SEND_LONG_DATA for the parameter, its value is not in
	// the packet: every partition.
	cl.pio.ResetSequence()
	ld := []byte{byte(mysqlproto.ComStmtSendLongData)}
	ld = binary.LittleEndian.AppendUint32(ld, id)
	ld = append(ld, 0, 0, '4')
	if err := cl.pio.WritePacketFlush(ld); err != nil {
		t.Fatal(err)
	}
	exec(execPacket(id, []byte{0}, []byte{mysqlproto.TypeBlob, 0}, nil), "0")
	// The long data is forgotten after that execute.
	exec(execPacket(id, []byte{0}, long, binary.LittleEndian.AppendUint32(nil, 4)), "1", "p0")
	exec(execPacket(id, []byte{0}, nil, binary.LittleEndian.AppendUint32(nil, 3)), "1", "p3")
}
