package reactor_test

import (
	"context"
	"testing"

	"obgate/internal/testkit"
	"obgate/mysqlproto"
)

// TestLRUDisconnectAtConnectionLimit: at client_max_connections a new
// client is refused with ERR 1203, unless
// enable_client_connection_lru_disconnect is on: then the client idle for
// longest is closed (with a diagnosis line) and the new one gets in, while
// the more recently used client keeps working.
func TestLRUDisconnectAtConnectionLimit(t *testing.T) {
	for _, lru := range []bool{false, true} {
		on := "false"
		if lru {
			on = "true"
		}
		p := startProxy(t, ioModes[0], "client_max_connections", "2", "enable_client_connection_lru_disconnect", on)
		db := rootDB(t, p)
		old := oneConn(t, db)
		defer old.Close()
		recent := oneConn(t, db)
		defer recent.Close()
		ctx := context.Background()
		if _, err := recent.ExecContext(ctx, "SELECT 2"); err != nil { // recent is now the more recently used
			t.Fatal(err)
		}
		err := openDB(t, driverConfig(p, "root", "", testDB)).Ping()
		if !lru {
			if sqlErrorCode(err) != mysqlproto.ERTooManyUserConnections {
				t.Fatalf("third client without LRU disconnect: %v, want ERR 1203", err)
			}
			continue
		}
		if err != nil {
			t.Fatalf("third client with LRU disconnect: %v", err)
		}
		l := waitDiag(t, p, "disconnect", map[string]string{"reason": "lru_disconnect"})
		if l.Str("trace_type") != "PROXY_INTERNAL_TRACE" || l.Str("side") != "proxy" {
			t.Fatalf("the LRU victim's line: %v", l)
		}
		testkit.Eventually(t, hangLimit, func() bool { return old.PingContext(ctx) != nil }, "the least recently used client still answers")
		if _, err := recent.ExecContext(ctx, "SELECT 3"); err != nil {
			t.Fatalf("the recently used client lost its connection: %v", err)
		}
	}
}
