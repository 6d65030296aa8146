package obsim

import (
	"context"
	"database/sql"
	"os"
	"sync"
	"testing"
	"time"

	"obgate/internal/testkit"

	"github.com/go-sql-driver/mysql"
)

// The tests share one cluster built from testdata/topology.json, started
// on first use and reset by each test that changes it. Tests that need
// another topology start their own.

var (
	sharedOnce    sync.Once
	sharedCluster *Cluster
	sharedErr     error
	sharedMu      sync.Mutex // serialises tests that change the shared cluster
)

func TestMain(m *testing.M) {
	code := m.Run()
	if sharedCluster != nil {
		sharedCluster.Close()
	}
	os.Exit(code)
}

// testCluster returns the shared cluster, reset, and holds it for the test.
func testCluster(t *testing.T) *Cluster {
	t.Helper()
	testkit.EndToEnd(t)
	sharedOnce.Do(func() {
		topo, err := LoadTopology("testdata/topology.json")
		if err != nil {
			sharedErr = err
			return
		}
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		defer cancel()
		sharedCluster, sharedErr = Start(ctx, Config{Topology: topo})
	})
	if sharedErr != nil {
		t.Fatal(sharedErr)
	}
	sharedMu.Lock()
	t.Cleanup(sharedMu.Unlock)
	if err := sharedCluster.Reset(); err != nil {
		t.Fatal(err)
	}
	sharedCluster.ClearLogs()
	return sharedCluster
}

// openDB opens a go-sql-driver pool to a node.
func openDB(t *testing.T, n *Node, user, password, db string) *sql.DB {
	t.Helper()
	cfg := mysql.NewConfig()
	cfg.User, cfg.Passwd, cfg.Net, cfg.Addr, cfg.DBName = user, password, "tcp", n.Addr(), db
	cfg.Timeout = 5 * time.Second
	cfg.ReadTimeout = 10 * time.Second
	connector, err := mysql.NewConnector(cfg)
	if err != nil {
		t.Fatal(err)
	}
	pool := sql.OpenDB(connector)
	pool.SetMaxOpenConns(2)
	t.Cleanup(func() { pool.Close() })
	return pool
}

// queryStrings runs a query and returns every row as strings (NULL as
// "NULL").
func queryStrings(t *testing.T, db interface {
	Query(string, ...any) (*sql.Rows, error)
}, q string, args ...any) [][]string {
	t.Helper()
	rows, err := db.Query(q, args...)
	if err != nil {
		t.Fatalf("%s: %v", q, err)
	}
	defer rows.Close()
	cols, _ := rows.Columns()
	var out [][]string
	for rows.Next() {
		vals := make([]sql.NullString, len(cols))
		ptrs := make([]any, len(cols))
		for i := range vals {
			ptrs[i] = &vals[i]
		}
		if err := rows.Scan(ptrs...); err != nil {
			t.Fatal(err)
		}
		row := make([]string, len(cols))
		for i, v := range vals {
			row[i] = "NULL"
			if v.Valid {
				row[i] = v.String
			}
		}
		out = append(out, row)
	}
	if err := rows.Err(); err != nil {
		t.Fatalf("%s: %v", q, err)
	}
	return out
}

// lastEntry returns the last log entry of n with the given command.
func lastEntry(t *testing.T, n *Node, command string) LogEntry {
	t.Helper()
	log := n.Log()
	for i := len(log) - 1; i >= 0; i-- {
		if log[i].Command == command {
			return log[i]
		}
	}
	t.Fatalf("node %s has no %s entry in %+v", n.Name(), command, log)
	return LogEntry{}
}
