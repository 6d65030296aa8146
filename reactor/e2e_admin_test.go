package reactor_test

import (
	"context"
	"crypto/sha1"
	"encoding/hex"
	"fmt"
	"slices"
	"strings"
	"testing"

	"obgate/internal/testkit"
	"obgate/internal/testproxy"
	"obgate/mysqlproto"
)

func sha1Hex(s string) string {
	sum := sha1.Sum([]byte(s))
	return hex.EncodeToString(sum[:])
}

// dialErr logs in and returns the error (nil after a good login; the
// connection is then closed).
func dialErr(p *testproxy.Proxy, user, pass string) error {
	ctx, cancel := context.WithTimeout(context.Background(), hangLimit)
	defer cancel()
	c, err := mysqlproto.Dial(ctx, p.Addr, mysqlproto.ClientOptions{User: user, Password: pass})
	if err == nil {
		c.Close()
	}
	return err
}

// configValue reads an item's value with SHOW PROXYCONFIG LIKE.
func configValue(t *testing.T, adm *mysqlproto.Client, name string) string {
	t.Helper()
	res, err := adm.Query("SHOW PROXYCONFIG LIKE '" + name + "'")
	if err != nil {
		t.Fatalf("SHOW PROXYCONFIG LIKE '%s': %v", name, err)
	}
	if len(res.Rows) != 1 {
		t.Fatalf("SHOW PROXYCONFIG LIKE '%s': %d rows", name, len(res.Rows))
	}
	return res.String(0, "value")
}

// TestE2EAdminLogin checks root@proxysys logins with and without
// obproxy_sys_password.
func TestE2EAdminLogin(t *testing.T) {
	forEachMode(t, func(t *testing.T, mode string) {
		testkit.CheckLeaks(t)

		t.Run("no password set", func(t *testing.T) {
			p := startProxy(t, mode)
			if err := dialErr(p, "root@proxysys", ""); err != nil {
				t.Errorf("root@proxysys without a password: %v", err)
			}
			if err := dialErr(p, "root@proxysys", "anything"); sqlCode(err) != mysqlproto.ERAccessDenied {
				t.Errorf("root@proxysys with a password when none is set: %v, want ERR 1045", err)
			}
		})

		t.Run("obproxy_sys_password", func(t *testing.T) {
			p := startProxy(t, mode, "obproxy_sys_password", sha1Hex("s3cret"))
			if err := dialErr(p, "root@proxysys", "s3cret"); err != nil {
				t.Fatalf("right password: %v", err)
			}
			out := cli(t, p, "", "-u", "root@proxysys", "-ps3cret", "-N", "-B", "-e", "SELECT PROXY_VERSION()")
			if strings.TrimSpace(out) != testproxy.Version {
				t.Errorf("mariadb CLI with the password: %q", out)
			}
			for _, wrong := range []string{"", "S3cret", "s3cret "} {
				c, err := testkit.DialRaw(p.Addr, hangLimit)
				if err != nil {
					t.Fatal(err)
				}
				err = c.Login("root@proxysys", wrong, "", hangLimit)
				if sqlCode(err) != mysqlproto.ERAccessDenied {
					t.Errorf("password %q: %v, want ERR 1045", wrong, err)
				}
				if rest, err := c.WaitClosed(hangLimit); err != nil || len(rest) != 0 {
					t.Errorf("password %q: after ERR 1045 got %d bytes, %v; want the connection closed", wrong, len(rest), err)
				}
				c.Close()
			}
			// ALTER PROXYCONFIG takes a plaintext password and stores its SHA1.
			adm := dialClient(t, p, "root@proxysys", "s3cret")
			if _, err := adm.Exec("ALTER PROXYCONFIG SET obproxy_sys_password = 'n3w'"); err != nil {
				t.Fatalf("ALTER PROXYCONFIG SET obproxy_sys_password: %v", err)
			}
			if got := p.Store.Load().ObproxySysPassword; got != sha1Hex("n3w") {
				t.Errorf("stored password %q, want SHA1 hex %s", got, sha1Hex("n3w"))
			}
			if got := configValue(t, adm, "obproxy_sys_password"); got == sha1Hex("n3w") {
				t.Errorf("SHOW PROXYCONFIG shows the password's SHA1 %q; want it masked", got)
			}
			if err := dialErr(p, "root@proxysys", "n3w"); err != nil {
				t.Errorf("new password: %v", err)
			}
			if err := dialErr(p, "root@proxysys", "s3cret"); sqlCode(err) != mysqlproto.ERAccessDenied {
				t.Errorf("old password after the change: %v, want ERR 1045", err)
			}
		})
	})
}

// TestE2EAdminCommands checks ALTER PROXYCONFIG (effect and refusal),
// KILL PROXYSESSION, and what normal users may run.
func TestE2EAdminCommands(t *testing.T) {
	forEachMode(t, func(t *testing.T, mode string) {
		testkit.CheckLeaks(t)
		p := startProxy(t, mode)

		t.Run("client_max_connections", func(t *testing.T) {
			waitNoClients(t, p)
			adm := dialClient(t, p, "root@proxysys", "")
			if _, err := adm.Exec("ALTER PROXYCONFIG SET client_max_connections = 3"); err != nil {
				t.Fatal(err)
			}
			if got := configValue(t, adm, "client_max_connections"); got != "3" {
				t.Errorf("SHOW PROXYCONFIG: client_max_connections = %q, want 3", got)
			}
			adm.Close()
			waitNoClients(t, p)
			var clients []*mysqlproto.Client
			for i := range 3 {
				clients = append(clients, dialClient(t, p, "root", ""))
				if _, err := clients[i].Query("SELECT 1"); err != nil {
					t.Fatalf("client %d of 3: %v", i+1, err)
				}
			}
			err := dialErr(p, "root", "")
			if se, ok := mysqlproto.AsSQLError(err); !ok || se.Code != mysqlproto.ERTooManyUserConnections || !strings.Contains(se.Message, "Too many sessions") {
				t.Errorf("4th client: %v, want ERR 1203 Too many sessions", err)
			}
			// Administrators are let in beyond the limit, and can lift it.
			adm = dialClient(t, p, "root@proxysys", "")
			if _, err := adm.Exec("ALTER PROXYCONFIG SET client_max_connections = 0"); err != nil {
				t.Fatal(err)
			}
			if err := dialErr(p, "root", ""); err != nil {
				t.Errorf("after lifting the limit: %v", err)
			}
			for _, c := range clients {
				c.Close()
			}
			adm.Close()
			waitNoClients(t, p)
		})

		t.Run("invalid values", func(t *testing.T) {
			waitNoClients(t, p)
			adm := dialClient(t, p, "root@proxysys", "")
			for _, tc := range []struct {
				stmt string
				code uint16
			}{
				{"ALTER PROXYCONFIG SET client_max_connections = -1", mysqlproto.ERWrongValueForVar},
				{"ALTER PROXYCONFIG SET client_max_connections = 'many'", mysqlproto.ERWrongValueForVar},
				{"ALTER PROXYCONFIG SET client_handshake_timeout = '2h'", mysqlproto.ERWrongValueForVar},
				{"ALTER PROXYCONFIG SET no_such_item = 1", mysqlproto.ERUnknownSystemVariable},
			} {
				if _, err := adm.Exec(tc.stmt); sqlCode(err) != tc.code {
					t.Errorf("%s: %v, want ERR %d", tc.stmt, err, tc.code)
				}
			}
			if got := configValue(t, adm, "client_max_connections"); got != "0" {
				t.Errorf("client_max_connections = %q after refused changes, want 0", got)
			}
			if _, err := adm.Query("PING PROXY"); err != nil {
				t.Errorf("administrator session broke: %v", err)
			}
		})

		t.Run("KILL PROXYSESSION", func(t *testing.T) {
			waitNoClients(t, p)
			adm := dialClient(t, p, "root@proxysys", "")
			victim := dialClient(t, p, "root", "")
			id := victim.ConnectionID()
			if _, err := adm.Exec(fmt.Sprintf("KILL PROXYSESSION %d", id)); err != nil {
				t.Fatalf("KILL PROXYSESSION %d: %v", id, err)
			}
			if _, err := victim.Query("SELECT 1"); err == nil {
				t.Error("the killed session still answers")
			}
			testkit.Eventually(t, hangLimit, func() bool { _, ok := p.Server.Session(id); return !ok },
				"session %d still exists", id)
			if _, err := adm.Exec("KILL PROXYSESSION 4000000000"); sqlCode(err) != mysqlproto.ERNoSuchThread {
				t.Errorf("KILL PROXYSESSION of an unknown id: %v, want ERR 1094", err)
			}
		})

		t.Run("normal users", func(t *testing.T) {
			waitNoClients(t, p)
			adm := dialClient(t, p, "root@proxysys", "")
			r1 := dialClient(t, p, "root", "")
			r2 := dialClient(t, p, "root", "")
			o := dialClient(t, p, otherUser, otherPass)
			ids := func(c *mysqlproto.Client) []string {
				res, err := c.Query("SHOW PROXYSESSION")
				if err != nil {
					t.Fatalf("SHOW PROXYSESSION: %v", err)
				}
				var out []string
				for i := range res.Rows {
					out = append(out, res.String(i, "proxy_sessid"))
				}
				slices.Sort(out)
				return out
			}
			id := func(c *mysqlproto.Client) string { return itoa(int64(c.ConnectionID())) }
			sorted := func(s ...string) []string { slices.Sort(s); return s }
			if got, want := ids(o), sorted(id(o)); !slices.Equal(got, want) {
				t.Errorf("%s sees sessions %q, want only its own %q", otherUser, got, want)
			}
			if got, want := ids(r1), sorted(id(r1), id(r2)); !slices.Equal(got, want) {
				t.Errorf("root sees sessions %q, want its own %q", got, want)
			}
			if got, want := ids(adm), sorted(id(adm), id(r1), id(r2), id(o)); !slices.Equal(got, want) {
				t.Errorf("root@proxysys sees sessions %q, want all %q", got, want)
			}
			// Internal commands every user may run.
			if _, err := o.Query("PING PROXY"); err != nil {
				t.Errorf("PING PROXY as %s: %v", otherUser, err)
			}
			if res, err := o.Query("SELECT PROXY_VERSION()"); err != nil || len(res.Rows) != 1 || string(res.Rows[0][0]) != testproxy.Version {
				t.Errorf("SELECT PROXY_VERSION() as %s: %v", otherUser, err)
			}
			// The rest goes to MariaDB, which does not know them.
			for _, stmt := range []string{"SHOW PROXYCONFIG", "SHOW PROXYCONFIG LIKE 'client%'",
				"ALTER PROXYCONFIG SET client_max_connections = 1"} {
				_, err := r1.Query(stmt)
				se, ok := mysqlproto.AsSQLError(err)
				if !ok || se.Code != mysqlproto.ERParseError || !strings.Contains(se.Message, "MariaDB") {
					t.Errorf("%s as root: %v, want MariaDB's syntax error 1064", stmt, err)
				}
			}
			if _, err := r1.Query(fmt.Sprintf("KILL PROXYSESSION %d", r2.ConnectionID())); err == nil {
				t.Error("KILL PROXYSESSION as a normal user answered OK")
			}
			if _, err := r2.Query("SELECT 1"); err != nil {
				t.Errorf("KILL PROXYSESSION from a normal user closed the session: %v", err)
			}
			if got := configValue(t, adm, "client_max_connections"); got != "0" {
				t.Errorf("client_max_connections = %q after a normal user's ALTER, want 0", got)
			}
		})
	})
}
