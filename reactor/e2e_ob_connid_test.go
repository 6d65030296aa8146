package reactor_test

import (
	"context"
	"testing"
)

// TestOBConnectionIDTextAndPrepared: a client session sees one
// CONNECTION_ID() for life, from text queries and prepared executes alike,
// whichever server session runs them (enable_cached_server off spreads
// them over the nodes). OceanBase evaluates CONNECTION_ID() as the
// session's id whatever the protocol (ObExprConnectionId), and every
// server session of a client carries its id; obsim's prepared statements
// used to reach MariaDB unrewritten and answer with MariaDB's thread id
// (what a Node mysql2 pool alternating text and prepared queries saw as
// six ids for three connections).
func TestOBConnectionIDTextAndPrepared(t *testing.T) {
	c := startOBSim(t)
	p := startOBProxy(t, c, "netpoll", "enable_cached_server", "false")
	_, conn := obConn(t, p)
	ctx := context.Background()
	var first int64
	if err := conn.QueryRowContext(ctx, "SELECT CONNECTION_ID()").Scan(&first); err != nil {
		t.Fatal(err)
	}
	for i := range 10 {
		var text, prepared, two int64
		if err := conn.QueryRowContext(ctx, "SELECT CONNECTION_ID()").Scan(&text); err != nil {
			t.Fatal(err)
		}
		if err := conn.QueryRowContext(ctx, "SELECT CONNECTION_ID(), ? * 2", i).Scan(&prepared, &two); err != nil {
			t.Fatal(err)
		}
		if text != first || prepared != first || two != int64(2*i) {
			t.Fatalf("statement %d: CONNECTION_ID() %d from text and %d prepared (and %d), want %d for both", i, text, prepared, two, first)
		}
	}
}
