package reactor_test

// Adversarial tests of what a server (broken, hostile, or impersonated)
// can make obgate do to its clients: read a TLS client's password off a
// plain link, or have a client send a local file it never offered.

import (
	"bytes"
	"context"
	"crypto/tls"
	"errors"
	"testing"

	"obgate/internal/testkit"
	"obgate/internal/testproxy"
	"obgate/mysqlproto"
)

// TestAttackClearPasswordToPlainServer: a client on TLS answers a request
// for its password in clear (mysql_clear_password, caching_sha2's full
// authentication) with the password itself; obgate must not relay such a
// round to a server it reaches without TLS. The client gets ERR 1045 and
// the server never sees the password.
func TestAttackClearPasswordToPlainServer(t *testing.T) {
	certFile, keyFile, err := testkit.WriteSelfSignedCert(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	const password = "do-not-leak-me"
	cases := []struct {
		name string
		srv  *hostileServer
	}{
		{"auth switch to mysql_clear_password", &hostileServer{
			afterLogin: mysqlproto.AuthSwitchRequest{Plugin: mysqlproto.AuthClearPassword}.Append(nil)}},
		{"caching_sha2_password full authentication", &hostileServer{plugin: mysqlproto.AuthCachingSha2,
			afterLogin: []byte{mysqlproto.AuthMoreDataHeader, mysqlproto.CachingSha2FullAuth}}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			srv := startHostileServer(t, tc.srv)
			cfg, err := testproxy.Config(srv.addr(), "netpoll", "client_ssl_cert_file", certFile,
				"client_ssl_key_file", keyFile, "enable_client_ssl", "true")
			if err != nil {
				t.Fatal(err)
			}
			p := testproxy.Start(t, cfg)
			ctx, cancel := context.WithTimeout(context.Background(), hangLimit)
			defer cancel()
			_, err = mysqlproto.Dial(ctx, p.Addr, mysqlproto.ClientOptions{User: "app", Password: password,
				TLS: &tls.Config{InsecureSkipVerify: true}})
			var se *mysqlproto.SQLError
			if !errors.As(err, &se) || se.Code != mysqlproto.ERAccessDenied {
				t.Errorf("TLS login asked for its password in clear by a plain server: %v, want ERR 1045", err)
			}
			if got := srv.got(); bytes.Contains(got, []byte(password)) {
				t.Errorf("the server received the TLS client's password in clear: %q", got)
			}
		})
	}
}

// TestAttackLocalInfileNotOffered: a server that asks a client for a local
// file the client never offered (no CLIENT_LOCAL_FILES) gets nothing, and
// the request never reaches the client: some clients would answer it.
func TestAttackLocalInfileNotOffered(t *testing.T) {
	srv := startHostileServer(t, &hostileServer{onQuery: append([]byte{mysqlproto.LocalInfileHeader}, "/etc/passwd"...)})
	cfg, err := testproxy.Config(srv.addr(), "netpoll")
	if err != nil {
		t.Fatal(err)
	}
	p := testproxy.Start(t, cfg)
	for _, offered := range []bool{false, true} {
		c, err := testkit.DialRaw(p.Addr, hangLimit)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		login, _ := mysqlproto.ParseHandshakeResponse(c.LoginPacket("app", "", ""))
		login.Capability &^= mysqlproto.ClientLocalFiles
		if offered {
			login.Capability |= mysqlproto.ClientLocalFiles
		}
		if err := c.WritePacket(1, login.Append(nil)); err != nil {
			t.Fatal(err)
		}
		if ok, _, err := c.ReadPacket(hangLimit); err != nil || ok[0] != mysqlproto.OKHeader {
			t.Fatalf("login: %x %v", ok, err)
		}
		if err := c.WritePacket(0, append([]byte{byte(mysqlproto.ComQuery)}, "SELECT 1"...)); err != nil {
			t.Fatal(err)
		}
		p, _, err := c.ReadPacket(hangLimit)
		if err != nil {
			t.Fatal(err)
		}
		switch {
		case !offered && p[0] != mysqlproto.ERRHeader:
			t.Errorf("client without CLIENT_LOCAL_FILES got %q, want an ERR and no file request", p)
		case !offered:
			if e, _ := mysqlproto.ParseERR(p); e.Code != mysqlproto.ERNotAllowedCommand {
				t.Errorf("client without CLIENT_LOCAL_FILES: ERR %d, want 1148", e.Code)
			}
		case p[0] != mysqlproto.LocalInfileHeader:
			t.Errorf("client with CLIENT_LOCAL_FILES got %q, want the server's file request", p)
		}
	}
}
