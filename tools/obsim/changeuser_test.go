package obsim

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"obgate/mysqlproto"
)

// send sends one command packet of a new request.
func (c *obClient) send(payload []byte) {
	c.t.Helper()
	if c.ob20 != nil {
		c.ob20.BeginRequest()
	}
	c.pio.ResetSequence()
	if err := c.pio.WritePacketFlush(payload); err != nil {
		c.t.Fatal(err)
	}
}

// TestChangeUserFromProxy changes the user of a proxy's session as ODP
// does: the token is computed against the proxy's own scramble (the one
// __proxy_scramble carried at login), and a client naming another plugin
// gets an auth switch carrying that scramble. The new login takes the
// client's charset and keeps the multi-statement option; user variables
// are gone.
func TestChangeUserFromProxy(t *testing.T) {
	c := testCluster(t)
	n := c.Node("zone1-1")
	proxyScramble := []byte("0123456789abcdefghij")
	cl, err := dialOB(t, n.Addr(), obLogin{user: "root@test", db: "test", proxy: true, proxyScramble: proxyScramble,
		obCaps: mysqlproto.OBCapProtocolV2 | mysqlproto.OBCapProxyNewExtraInfo})
	if err != nil {
		t.Fatal(err)
	}
	if cl.ob20 == nil {
		t.Fatal("want an OB 2.0 session")
	}
	if r := cl.query("SET @u = 'old'"); r.err != nil {
		t.Fatal(r.err)
	}
	cl.send([]byte{byte(mysqlproto.ComSetOption), 1, 0}) // MULTI_STATEMENTS_OFF
	if p := cl.read(); p[0] != mysqlproto.OKHeader {
		t.Fatalf("COM_SET_OPTION: %x", p)
	}
	cu := mysqlproto.ChangeUser{User: "app", AuthResponse: mysqlproto.CachingSha2Token(proxyScramble, []byte("app-secret")),
		Database: "test", Charset: 8, HasCharset: true, AuthPlugin: mysqlproto.AuthCachingSha2, HasAttrs: true}
	cl.send(cu.Append(nil, cl.caps))
	p := cl.read()
	sw, ok := mysqlproto.ParseAuthSwitchRequest(p)
	if !ok || sw.Plugin != mysqlproto.AuthNativePassword || !bytes.Equal(sw.Data, proxyScramble) {
		t.Fatalf("COM_CHANGE_USER naming %s: got %q, want an auth switch to %s with the proxy's scramble",
			mysqlproto.AuthCachingSha2, p, mysqlproto.AuthNativePassword)
	}
	if cl.ob20 != nil {
		cl.ob20.BeginRequest()
	}
	if err := cl.pio.WritePacketFlush(mysqlproto.NativeToken(proxyScramble, []byte("app-secret"))); err != nil {
		t.Fatal(err)
	}
	if p := cl.read(); p[0] != mysqlproto.OKHeader {
		t.Fatalf("after the auth switch: %q", p)
	}
	r := cl.query("SELECT CURRENT_USER(), DATABASE(), @u, @@character_set_client, @@collation_connection")
	if r.err != nil || strings.Join(r.rows[0], ",") != "app@%,test,,latin1,latin1_swedish_ci" {
		t.Errorf("after COM_CHANGE_USER: %+v", r)
	}
	if r := cl.query("SELECT 1; SELECT 2"); r.err == nil || r.err.Code != 1064 {
		t.Errorf("multi-statement query after COM_CHANGE_USER with MULTI_STATEMENTS_OFF: %+v, want ERR 1064", r)
	}
	if e := lastEntry(t, n, "change_user"); e.User != "app" || e.Tenant != "test" || e.Result != "ok" {
		t.Errorf("change_user entry %+v", e)
	}
}

// TestChangeUserRefused checks the refusals: another tenant (OceanBase's
// OB_OP_NOT_ALLOW) and a wrong password (1045). Either ends the session,
// as OBServer 4.x does.
func TestChangeUserRefused(t *testing.T) {
	c := testCluster(t)
	n := c.Node("zone2-1")
	for _, tc := range []struct {
		user, pass string
		code       uint16
	}{
		{"app@app", "app-secret", obOpNotAllow},
		{"app", "wrong", mysqlproto.ERAccessDenied},
	} {
		cl, err := dialOB(t, n.Addr(), obLogin{user: "root@test", db: "test"})
		if err != nil {
			t.Fatal(err)
		}
		cu := mysqlproto.ChangeUser{User: tc.user, AuthResponse: mysqlproto.NativeToken(cl.scramble, []byte(tc.pass)),
			Charset: 45, HasCharset: true, AuthPlugin: mysqlproto.AuthNativePassword}
		cl.send(cu.Append(nil, cl.caps))
		p := cl.read()
		e, _ := mysqlproto.ParseERR(p)
		if p[0] != mysqlproto.ERRHeader || e.Code != tc.code {
			t.Errorf("COM_CHANGE_USER to %s: %q, want ERR %d", tc.user, p, tc.code)
		}
		if !cl.closed(10 * time.Second) {
			t.Errorf("the session stayed open after a refused COM_CHANGE_USER to %s", tc.user)
		}
	}
}

// TestResetConnectionKeepsTracking checks that after COM_RESET_CONNECTION
// the node still reports changed variables (MariaDB's reset turns its
// session tracking back to its defaults, which leave sql_mode out) and
// that the database stays.
func TestResetConnectionKeepsTracking(t *testing.T) {
	c := testCluster(t)
	n := c.Node("zone3-1")
	cl, err := dialOB(t, n.Addr(), obLogin{user: "root@test", db: "test", proxy: true})
	if err != nil {
		t.Fatal(err)
	}
	cl.query("SET @u = 1")
	cl.send([]byte{byte(mysqlproto.ComResetConnection)})
	if p := cl.read(); p[0] != mysqlproto.OKHeader {
		t.Fatalf("reset: %x", p)
	}
	r := cl.query("SET sql_mode = 'ANSI_QUOTES'")
	if v, ok := sessionVar(r.ok.SessionState, "sql_mode"); r.err != nil || !ok || v != "ANSI_QUOTES" {
		t.Errorf("SET sql_mode after COM_RESET_CONNECTION reported %q (%v), want sql_mode = ANSI_QUOTES", r.ok.SessionState, r.err)
	}
	if r := cl.query("SELECT @u, DATABASE()"); r.err != nil || strings.Join(r.rows[0], ",") != ",test" {
		t.Errorf("after COM_RESET_CONNECTION: %+v", r)
	}
}

// TestLoginCharset checks that the charset of the handshake response
// becomes the session's, as on an OBServer.
func TestLoginCharset(t *testing.T) {
	c := testCluster(t)
	cl, err := dialOB(t, c.Node("zone1-1").Addr(), obLogin{user: "root@test", db: "test", charset: 48}) // latin1_general_ci
	if err != nil {
		t.Fatal(err)
	}
	r := cl.query("SELECT @@character_set_client, @@character_set_connection, @@character_set_results, @@collation_connection")
	if r.err != nil || strings.Join(r.rows[0], ",") != "latin1,latin1,latin1,latin1_general_ci" {
		t.Errorf("session charset: %+v", r)
	}
}
