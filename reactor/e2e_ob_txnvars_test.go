package reactor_test

import (
	"fmt"
	"testing"

	"github.com/go-sql-driver/mysql"

	"obgate/internal/testkit"
)

// TestOBSyncTransactionCharacteristics sets the session's isolation level
// and access mode, as JDBC's setTransactionIsolation and setReadOnly do,
// and reads them back with statements that enable_cached_server=false
// spreads over every node: each must show the new value.
//
// obgate replays a system variable on another server session with its
// scope, "SET @@session.name = value" (sessvars.Vars.resetSQL): without one, an assignment to tx_isolation, tx_read_only,
// transaction_isolation or transaction_read_only sets the characteristics
// of the next transaction only (MySQL's rule, which obsim follows, as the
// "direct" subtest shows), and the session value of every server session
// but the one that ran the statement would stay at the default. MariaDB
// Connector/J's setTransactionIsolation showed it (TestClientsJDBCReset).
func TestOBSyncTransactionCharacteristics(t *testing.T) {
	testkit.CheckLeaks(t)
	c := startOBSim(t)
	cases := []struct{ set, read, want string }{
		{"SET SESSION TRANSACTION ISOLATION LEVEL SERIALIZABLE", "SELECT @@tx_isolation", "SERIALIZABLE"},
		{"SET SESSION tx_isolation = 'READ-COMMITTED'", "SELECT @@session.tx_isolation", "READ-COMMITTED"},
		{"SET SESSION TRANSACTION READ ONLY", "SELECT @@tx_read_only", "1"},
	}

	t.Run("direct", func(t *testing.T) {
		cfg := mysql.NewConfig()
		cfg.User, cfg.Passwd, cfg.Net, cfg.Addr, cfg.DBName = obUser+"@"+obTenant, obPass, "tcp", c.Nodes()[0].Addr(), obDB
		db := openDB(t, cfg)
		db.SetMaxOpenConns(1)
		execCtx(t, db, "SET @@tx_isolation = 'SERIALIZABLE'")
		if got := rowStrings(t, db, "SELECT @@tx_isolation"); fmt.Sprint(got) != "[[REPEATABLE-READ]]" {
			t.Errorf("after SET @@tx_isolation without a scope the session value is %v, want the default", got)
		}
		execCtx(t, db, "SET @@session.tx_isolation = 'SERIALIZABLE'")
		if got := rowStrings(t, db, "SELECT @@tx_isolation"); fmt.Sprint(got) != "[[SERIALIZABLE]]" {
			t.Errorf("after SET @@session.tx_isolation the session value is %v", got)
		}
	})

	t.Run("obgate", func(t *testing.T) {
		p := startOBProxy(t, c, "netpoll", "enable_cached_server", "false")
		for _, tc := range cases {
			t.Run(tc.set, func(t *testing.T) {
				resetOBSim(t, c)
				cl := dialOBRaw(t, p, 0)
				mk := newMarker("txchar")
				cl.exec(fmt.Sprintf("%s /* %s */", tc.set, mk))
				spread(t, c, cl, mk, tc.read, 12, []string{tc.want})
			})
		}
	})
}
