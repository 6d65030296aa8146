package obsim

import (
	"database/sql"
	"testing"

	"github.com/go-sql-driver/mysql"
)

// benchCluster gives benchmarks the shared cluster without a testing.T.
func benchCluster(b *testing.B) *Cluster {
	b.Helper()
	sharedOnce.Do(func() {
		topo, err := LoadTopology("testdata/topology.json")
		if err != nil {
			sharedErr = err
			return
		}
		sharedCluster, sharedErr = Start(b.Context(), Config{Topology: topo})
	})
	if sharedErr != nil {
		b.Fatal(sharedErr)
	}
	return sharedCluster
}

func benchDB(b *testing.B, addr, user string) *sql.DB {
	cfg := mysql.NewConfig()
	cfg.User, cfg.Net, cfg.Addr, cfg.DBName = user, "tcp", addr, "test"
	connector, err := mysql.NewConnector(cfg)
	if err != nil {
		b.Fatal(err)
	}
	db := sql.OpenDB(connector)
	db.SetMaxIdleConns(8)
	b.Cleanup(func() { db.Close() })
	return db
}

// BenchmarkPointSelect compares a point query through a node with the same
// query sent to MariaDB directly.
func BenchmarkPointSelect(b *testing.B) {
	c := benchCluster(b)
	for _, tc := range []struct{ name, addr, user string }{
		{"direct-mariadb", c.MariaDBAddr(), "root"},
		{"obsim-node", c.Node("zone1-1").Addr(), "root@test"},
	} {
		b.Run(tc.name, func(b *testing.B) {
			db := benchDB(b, tc.addr, tc.user)
			b.ReportAllocs()
			b.RunParallel(func(pb *testing.PB) {
				var s string
				for pb.Next() {
					if err := db.QueryRow("SELECT customer FROM orders WHERE id = 3").Scan(&s); err != nil {
						b.Error(err)
						return
					}
				}
			})
		})
	}
}

// BenchmarkPointSelectPrepared is BenchmarkPointSelect with a prepared
// statement, which the node locates from its bound parameter (local on
// zone1-1, the leader of id 3's partition).
func BenchmarkPointSelectPrepared(b *testing.B) {
	c := benchCluster(b)
	db := benchDB(b, c.Node("zone1-1").Addr(), "root@test")
	stmt, err := db.Prepare("SELECT customer FROM orders WHERE id = ?")
	if err != nil {
		b.Fatal(err)
	}
	defer stmt.Close()
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		var s string
		for pb.Next() {
			if err := stmt.QueryRow(3).Scan(&s); err != nil {
				b.Error(err)
				return
			}
		}
	})
}
