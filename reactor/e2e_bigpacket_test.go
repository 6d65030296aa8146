package reactor_test

import (
	"crypto/md5"
	"database/sql"
	"encoding/hex"
	"fmt"
	"math/rand/v2"
	"testing"

	"obgate/internal/testkit"

	"github.com/go-sql-driver/mysql"
)

// packetSizes are the logical packet payload sizes around the 16 MiB
// split: exactly one full physical packet (which needs a trailing empty
// one), one byte more, and several packets.
var packetSizes = []struct {
	name string
	n    int
}{
	{"16MiB-1", 1<<24 - 1},
	{"16MiB", 1 << 24},
	{"34MiB", 34 << 20},
}

// lenEncSize is the size of the length-encoded integer header of a string
// of n bytes.
func lenEncSize(n int) int {
	switch {
	case n < 251:
		return 1
	case n < 1<<16:
		return 3
	case n < 1<<24:
		return 4
	}
	return 9
}

// stringLenFor returns the string length L whose lenenc header plus L
// bytes, after overhead bytes, make exactly n.
func stringLenFor(n, overhead int) int {
	for _, h := range []int{9, 4, 3, 1} {
		if l := n - overhead - h; l >= 0 && lenEncSize(l) == h {
			return l
		}
	}
	panic("no string length fits")
}

// sqlSafeBytes returns n pseudo-random bytes that need no escaping inside
// a quoted SQL string.
func sqlSafeBytes(seed uint64, n int) []byte {
	const alphabet = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789 .,:;-_+*/#()[]{}<>=!?&%$@~^|"
	r := rand.New(rand.NewPCG(seed, 42))
	b := make([]byte, n)
	for i := range b {
		b[i] = alphabet[r.IntN(len(alphabet))]
	}
	return b
}

func md5Hex(b []byte) string {
	sum := md5.Sum(b)
	return hex.EncodeToString(sum[:])
}

// serverBlob returns LENGTH(b) and MD5(b) of row id as MariaDB computes
// them, bypassing obgate.
func serverBlob(t *testing.T, direct *sql.DB, tbl string, id int) (int, string) {
	t.Helper()
	var n int
	var sum string
	if err := direct.QueryRow("SELECT LENGTH(b), MD5(b) FROM "+tbl+" WHERE id = ?", id).Scan(&n, &sum); err != nil {
		t.Fatalf("read back row %d: %v", id, err)
	}
	return n, sum
}

// TestE2ELargePackets sends and receives logical packets of 16 MiB - 1,
// 16 MiB and 34 MiB through obgate: a COM_QUERY of exactly that payload
// size, result rows of exactly that size (text and binary protocol), and a
// 34 MiB prepared-statement parameter sent inline and as
// COM_STMT_SEND_LONG_DATA. Contents are checked with MD5 on the server and
// locally.
func TestE2ELargePackets(t *testing.T) {
	if testing.Short() {
		t.Skip("moves about 300 MiB; skipped with -short")
	}
	forEachMode(t, func(t *testing.T, mode string) {
		testkit.CheckLeaks(t)
		p := startProxy(t, mode)
		db := rootDB(t, p, func(c *mysql.Config) { c.MaxAllowedPacket = 0 }) // ask the server: 1 GiB
		db.SetMaxIdleConns(1)
		direct := directDB(t)
		tbl := "big_" + mode
		mustExec(t, db, "DROP TABLE IF EXISTS "+tbl)
		mustExec(t, db, "CREATE TABLE "+tbl+" (id INT PRIMARY KEY, b LONGBLOB)")

		for i, sz := range packetSizes {
			t.Run("COM_QUERY "+sz.name, func(t *testing.T) {
				id := 1 + i
				prefix := fmt.Sprintf("INSERT INTO %s (id, b) VALUES (%d, '", tbl, id)
				const suffix = "')"
				fill := sz.n - 1 - len(prefix) - len(suffix) // 1: the command byte
				data := sqlSafeBytes(uint64(id), fill)
				query := prefix + string(data) + suffix
				if got := 1 + len(query); got != sz.n {
					t.Fatalf("built a COM_QUERY payload of %d bytes, want %d", got, sz.n)
				}
				mustExec(t, db, query)
				n, sum := serverBlob(t, direct, tbl, id)
				if n != len(data) || sum != md5Hex(data) {
					t.Errorf("server stored %d bytes md5 %s, sent %d bytes md5 %s", n, sum, len(data), md5Hex(data))
				}
			})
		}

		for i, sz := range packetSizes {
			id := 11 + i
			// Binary content made on the server: every byte value occurs.
			gen := func(l int) {
				mustExec(t, direct, fmt.Sprintf(
					"REPLACE INTO %s (id, b) VALUES (%d, RPAD(UNHEX(SHA2('start', 512)), %d, UNHEX(SHA2('%d', 512))))", tbl, id, l, id))
			}
			t.Run("text row "+sz.name, func(t *testing.T) {
				// A text row of one column is lenenc length + bytes.
				l := stringLenFor(sz.n, 0)
				gen(l)
				var got []byte
				if err := db.QueryRow(fmt.Sprintf("SELECT b FROM %s WHERE id = %d", tbl, id)).Scan(&got); err != nil {
					t.Fatal(err)
				}
				n, sum := serverBlob(t, direct, tbl, id)
				if n != l || len(got) != l || md5Hex(got) != sum {
					t.Errorf("received %d bytes md5 %s; server has %d bytes md5 %s (want %d)", len(got), md5Hex(got), n, sum, l)
				}
			})
			t.Run("binary row "+sz.name, func(t *testing.T) {
				// A binary row of one column is 0x00, a one-byte NULL bitmap,
				// then lenenc length + bytes.
				l := stringLenFor(sz.n, 2)
				gen(l)
				var got []byte
				if err := db.QueryRow("SELECT b FROM "+tbl+" WHERE id = ?", id).Scan(&got); err != nil {
					t.Fatal(err)
				}
				n, sum := serverBlob(t, direct, tbl, id)
				if n != l || len(got) != l || md5Hex(got) != sum {
					t.Errorf("received %d bytes md5 %s; server has %d bytes md5 %s (want %d)", len(got), md5Hex(got), n, sum, l)
				}
			})
		}

		big := make([]byte, 34<<20)
		r := rand.New(rand.NewPCG(7, 7))
		for i := range big {
			big[i] = byte(r.Uint32())
		}
		t.Run("prepared 34MiB parameter inline", func(t *testing.T) {
			mustExec(t, db, "REPLACE INTO "+tbl+" (id, b) VALUES (?, ?)", 21, big)
			if n, sum := serverBlob(t, direct, tbl, 21); n != len(big) || sum != md5Hex(big) {
				t.Errorf("server stored %d bytes md5 %s, sent %d bytes md5 %s", n, sum, len(big), md5Hex(big))
			}
		})
		t.Run("prepared 34MiB parameter as long data", func(t *testing.T) {
			// With a 4 MiB limit the driver sends a parameter this large in
			// COM_STMT_SEND_LONG_DATA pieces, which have no answer.
			small := rootDB(t, p, func(c *mysql.Config) { c.MaxAllowedPacket = 4 << 20 })
			before := longDataCount(t, direct)
			mustExec(t, small, "REPLACE INTO "+tbl+" (id, b) VALUES (?, ?)", 22, big)
			if after := longDataCount(t, direct); after-before < int64(len(big)/(4<<20)) {
				t.Errorf("Com_stmt_send_long_data went from %d to %d: the driver did not use long data", before, after)
			}
			if n, sum := serverBlob(t, direct, tbl, 22); n != len(big) || sum != md5Hex(big) {
				t.Errorf("server stored %d bytes md5 %s, sent %d bytes md5 %s", n, sum, len(big), md5Hex(big))
			}
			var got []byte
			if err := small.QueryRow("SELECT b FROM "+tbl+" WHERE id = ?", 22).Scan(&got); err != nil {
				t.Fatal(err)
			}
			if md5Hex(got) != md5Hex(big) {
				t.Errorf("read back %d bytes md5 %s, want md5 %s", len(got), md5Hex(got), md5Hex(big))
			}
		})
		mustExec(t, direct, "DROP TABLE "+tbl)
	})
}

func longDataCount(t *testing.T, db *sql.DB) int64 {
	t.Helper()
	var name string
	var n int64
	if err := db.QueryRow("SHOW GLOBAL STATUS LIKE 'Com_stmt_send_long_data'").Scan(&name, &n); err != nil {
		t.Fatal(err)
	}
	return n
}
