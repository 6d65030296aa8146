package reactor_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/go-sql-driver/mysql"

	"obgate/mysqlproto"
	"obgate/tools/obsim"
)

// TestTunnelRequestSizeThreshold: a read-only statement that a server
// refuses with an ERR another server may not give goes again elsewhere,
// unless it is longer than tunnel_request_size_threshold: then the client
// gets the ERR and the statement ran (was tried) once.
func TestTunnelRequestSizeThreshold(t *testing.T) {
	c := startOBSim(t)
	resetOBSim(t, c)
	pad := strings.Repeat("x", 2000)
	for _, tc := range []struct {
		threshold string
		padded    bool
		resent    bool
	}{
		{"8KB", true, true},  // the default: a 2 KB statement is kept
		{"1KB", false, true}, // short statements are still resent
		{"1KB", true, false}, // over the threshold: tunnelled, never resent
	} {
		p := startOBProxy(t, c, ioModes[0], "tunnel_request_size_threshold", tc.threshold)
		_, conn := obConn(t, p)
		mk := newMarker("tunnel")
		q := "SELECT 1 /* " + mk + " */"
		if tc.padded {
			q = "SELECT 1 /* " + mk + " */ /* " + pad + " */" // obsim logs a prefix
		}
		if _, err := c.InjectError(obsim.ErrorRule{Pattern: mk, Code: mysqlproto.OBServerIsStopping, Count: 1}); err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithTimeout(context.Background(), hangLimit)
		_, err := conn.ExecContext(ctx, q)
		cancel()
		tries := len(proxyEntries(c, mk))
		name := fmt.Sprintf("threshold %s, %d-byte statement", tc.threshold, len(q))
		switch {
		case tc.resent && (err != nil || tries != 2):
			t.Errorf("%s: %v after %d tries; want success on the second try", name, err, tries)
		case !tc.resent && (sqlErrorCode(err) != mysqlproto.OBServerIsStopping || tries != 1):
			t.Errorf("%s: %v after %d tries; want ERR %d after one try", name, err, tries, mysqlproto.OBServerIsStopping)
		}
		c.ClearErrors()
	}
}

// TestRequestBufferLengthBoundsFacts: the router reads request_buffer_length
// bytes of a statement. With the default (4 KB) a point select whose table
// name comes after 1.5 KB of comment still goes to its partition's leader;
// with 1 KB the statement is routed as one whose table obgate does not
// know, so some of them run away from their leaders.
func TestRequestBufferLengthBoundsFacts(t *testing.T) {
	c := startPartOBSim(t, false)
	pad := strings.Repeat("y", 1500)
	remote := map[string]int{}
	for _, size := range []string{"4KB", "1KB"} {
		p := startOBProxy(t, c, ioModes[0], "request_buffer_length", size)
		_, conn := obConn(t, p, func(cfg *mysql.Config) { cfg.DBName = partDB })
		mk := newMarker("reqbuf")
		ctx, cancel := context.WithTimeout(context.Background(), hangLimit)
		for id := range 30 {
			q := fmt.Sprintf("/* %s */ /* %s */ SELECT * FROM h_orders WHERE id = %d", mk, pad, id)
			if _, err := conn.ExecContext(ctx, q); err != nil {
				cancel()
				t.Fatalf("%s: %v", abbrev(q), err)
			}
		}
		cancel()
		es := proxyEntries(c, mk)
		if len(es) != 30 {
			t.Fatalf("request_buffer_length=%s: obsim logged %d statements, want 30", size, len(es))
		}
		for _, e := range es {
			if !e.Local {
				remote[size]++
			}
		}
	}
	if remote["4KB"] != 0 || remote["1KB"] == 0 {
		t.Fatalf("remote plans: %d of 30 with request_buffer_length=4KB (want 0), %d with 1KB (want some)", remote["4KB"], remote["1KB"])
	}
}
