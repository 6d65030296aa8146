package reactor_test

import (
	"strings"
	"testing"
)

// TestE2EPreparedManyParams is go-sql-driver's TestPreparedManyCols
// through obgate in mysql routing mode: a statement of 65535 parameters,
// whose prepare answer (about 4 MB of parameter and column definitions)
// arrives over several of netpoll's buffer nodes, is prepared and
// executed on fresh connections again and again. obgate writes its own
// statement id into the prepare's OK; that must reach the client however
// the answer was buffered. (It did not when the OK was relayed from a
// view over several nodes: the view's next extension copied the nodes
// again, without the new id, and the client's execute named the server's
// id: ERR 1243, in about one run in five.)
func TestE2EPreparedManyParams(t *testing.T) {
	p := startProxy(t, "netpoll")
	query := "SELECT ?" + strings.Repeat(",?", 65534)
	params := make([]any, 65535)
	for i := range 30 {
		db := rootDB(t, p)
		stmt, err := db.Prepare(query)
		if err != nil {
			t.Fatal(err)
		}
		rows, err := stmt.Query(params...)
		if err != nil {
			t.Fatalf("run %d: execute after the prepare: %v", i, err)
		}
		rows.Close()
		stmt.Close()
		db.Close()
	}
}
