package reactor_test

import (
	"context"
	"crypto/tls"
	"errors"
	"strings"
	"testing"

	"obgate/internal/testkit"
	"obgate/mysqlproto"

	"github.com/go-sql-driver/mysql"
)

// proxySessionSSL returns the using_ssl column of SHOW PROXYSESSION by
// proxy_sessid, as seen from c.
func proxySessionSSL(t *testing.T, c *mysqlproto.Client) map[string]string {
	t.Helper()
	res, err := c.Query("SHOW PROXYSESSION")
	if err != nil {
		t.Fatalf("SHOW PROXYSESSION: %v", err)
	}
	out := map[string]string{}
	for i := range res.Rows {
		out[res.String(i, "proxy_sessid")] = res.String(i, "using_ssl")
	}
	return out
}

// TestE2ETLS checks client TLS: go-sql-driver with tls=skip-verify and the
// mariadb CLI with --ssl work, SHOW PROXYSESSION reports using_ssl, and a
// client that asks for TLS from an obgate without it fails cleanly.
func TestE2ETLS(t *testing.T) {
	certFile, keyFile, err := testkit.WriteSelfSignedCert(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	forEachMode(t, func(t *testing.T, mode string) {
		testkit.CheckLeaks(t)
		p := startProxy(t, mode, "client_ssl_cert_file", certFile, "client_ssl_key_file", keyFile,
			"enable_client_ssl", "true")

		t.Run("go-sql-driver", func(t *testing.T) {
			waitNoClients(t, p)
			db := rootDB(t, p, func(c *mysql.Config) { c.TLSConfig = "skip-verify" })
			db.SetMaxOpenConns(1)
			mustExec(t, db, "DROP TABLE IF EXISTS tls_"+mode)
			mustExec(t, db, "CREATE TABLE tls_"+mode+" (id INT PRIMARY KEY, v VARCHAR(10))")
			mustExec(t, db, "INSERT INTO tls_"+mode+" VALUES (?, ?)", 1, "secret")
			var v string
			if err := db.QueryRow("SELECT v FROM tls_"+mode+" WHERE id = ?", 1).Scan(&v); err != nil || v != "secret" {
				t.Fatalf("prepared SELECT over TLS: %q, %v", v, err)
			}
			if n := queryInt(t, db, "SELECT COUNT(*) FROM (SELECT seq FROM seq_1_to_100000) s"); n != 100000 {
				t.Errorf("count %d", n)
			}
			if n := streamedRows(t, db, "SELECT seq FROM seq_1_to_100000"); n != 100000 {
				t.Errorf("streamed %d rows over TLS, want 100000", n)
			}
			var ssl []string
			rows, err := db.Query("SHOW PROXYSESSION")
			if err != nil {
				t.Fatal(err)
			}
			cols, _ := rows.Columns()
			for rows.Next() {
				vals := make([]any, len(cols))
				ptrs := make([]any, len(cols))
				for i := range vals {
					ptrs[i] = &vals[i]
				}
				if err := rows.Scan(ptrs...); err != nil {
					t.Fatal(err)
				}
				ssl = append(ssl, string(vals[len(cols)-1].([]byte)))
			}
			rows.Close()
			if cols[len(cols)-1] != "using_ssl" || len(ssl) != 1 || ssl[0] != "true" {
				t.Errorf("SHOW PROXYSESSION column %q = %q, want using_ssl = [true] for the one TLS session", cols[len(cols)-1], ssl)
			}
		})

		t.Run("large packets over TLS", func(t *testing.T) {
			db := rootDB(t, p, func(c *mysql.Config) {
				c.TLSConfig = "skip-verify"
				c.MaxAllowedPacket = 0
			})
			tbl := "tlsbig_" + mode
			mustExec(t, db, "DROP TABLE IF EXISTS "+tbl)
			mustExec(t, db, "CREATE TABLE "+tbl+" (id INT PRIMARY KEY, b LONGBLOB)")
			data := sqlSafeBytes(99, 17<<20)
			mustExec(t, db, "INSERT INTO "+tbl+" VALUES (1, '"+string(data)+"')")
			var got []byte
			if err := db.QueryRow("SELECT b FROM " + tbl + " WHERE id = 1").Scan(&got); err != nil {
				t.Fatal(err)
			}
			if len(got) != len(data) || md5Hex(got) != md5Hex(data) {
				t.Errorf("read back %d bytes md5 %s, sent %d bytes md5 %s", len(got), md5Hex(got), len(data), md5Hex(data))
			}
			mustExec(t, db, "DROP TABLE "+tbl)
		})

		t.Run("using_ssl per session", func(t *testing.T) {
			waitNoClients(t, p)
			ctx, cancel := context.WithTimeout(context.Background(), hangLimit)
			defer cancel()
			tc, err := mysqlproto.Dial(ctx, p.Addr, mysqlproto.ClientOptions{User: "root",
				TLS: &tls.Config{InsecureSkipVerify: true}})
			if err != nil {
				t.Fatalf("TLS login: %v", err)
			}
			defer tc.Close()
			if _, isTLS := tc.Conn().(*tls.Conn); !isTLS {
				t.Fatal("the client did not upgrade to TLS")
			}
			plain := dialClient(t, p, "root", "")
			// An administrator over TLS sees both as well.
			adm, err := mysqlproto.Dial(ctx, p.Addr, mysqlproto.ClientOptions{User: "root@proxysys",
				TLS: &tls.Config{InsecureSkipVerify: true}})
			if err != nil {
				t.Fatalf("root@proxysys over TLS: %v", err)
			}
			defer adm.Close()
			if got := proxySessionSSL(t, adm)[itoa(int64(adm.ConnectionID()))]; got != "true" {
				t.Errorf("root@proxysys over TLS: using_ssl %q, want true", got)
			}
			for _, view := range []*mysqlproto.Client{tc, plain, adm} {
				got := proxySessionSSL(t, view)
				if got[itoa(int64(tc.ConnectionID()))] != "true" || got[itoa(int64(plain.ConnectionID()))] != "false" {
					t.Errorf("using_ssl by session %v; want %d true, %d false", got, tc.ConnectionID(), plain.ConnectionID())
				}
			}
			for _, s := range p.Server.Sessions() {
				want := mode
				if s.ID == tc.ConnectionID() || s.ID == adm.ConnectionID() {
					want = "tls"
				}
				if s.Transport != want {
					t.Errorf("session %d transport %q, want %q", s.ID, s.Transport, want)
				}
			}
		})

		t.Run("mariadb --ssl", func(t *testing.T) {
			waitNoClients(t, p)
			out := cli(t, p, "", "--ssl", "-e", "status")
			if !strings.Contains(out, "Cipher in use") {
				t.Errorf("status does not show a TLS cipher:\n%s", out)
			}
			waitNoClients(t, p)
			// With the certificate as CA the client can verify obgate too.
			got := lines(cli(t, p, "", "--ssl", "--ssl-ca="+certFile, "--ssl-verify-server-cert",
				"-N", "-B", "-D", testDB, "-e", "SELECT COUNT(*) FROM seq_1_to_50000; SHOW PROXYSESSION"))
			if len(got) != 2 || got[0] != "50000" || !strings.HasSuffix(got[1], "\ttrue") {
				t.Errorf("output %q, want 50000 and one session with using_ssl true", got)
			}
		})
	})

	t.Run("TLS disabled", func(t *testing.T) {
		forEachMode(t, func(t *testing.T, mode string) {
			testkit.CheckLeaks(t)
			p := startProxy(t, mode)
			db := rootDB(t, p, func(c *mysql.Config) { c.TLSConfig = "skip-verify" })
			if err := db.Ping(); !errors.Is(err, mysql.ErrNoTLS) {
				t.Errorf("go-sql-driver asking for TLS: %v, want %v", err, mysql.ErrNoTLS)
			}
			// --ssl alone falls back to plain text in MariaDB 10.11;
			// verifying the server makes TLS mandatory.
			if _, errOut, err := cliResult(p, "", "--ssl", "--ssl-verify-server-cert", "-e", "SELECT 1"); err == nil {
				t.Error("mariadb --ssl succeeded against an obgate without TLS")
			} else if !strings.Contains(errOut, "SSL") {
				t.Errorf("mariadb --ssl failed without mentioning SSL: %s", errOut)
			}
			// A client that sends an SSLRequest anyway is closed.
			c, err := testkit.DialRaw(p.Addr, hangLimit)
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			if c.Greeting.Capability.Has(mysqlproto.ClientSSL) {
				t.Error("greeting offers TLS")
			}
			req := mysqlproto.AppendSSLRequest(nil, mysqlproto.DefaultClientCapability, 1<<24, byte(mysqlproto.CharsetUTF8MB4))
			if err := c.WritePacket(1, req); err != nil {
				t.Fatal(err)
			}
			if _, err := c.WaitClosed(hangLimit); err != nil {
				t.Errorf("SSLRequest to an obgate without TLS: %v, want the connection closed", err)
			}
			waitNoClients(t, p)
			if n := queryInt(t, rootDB(t, p), "SELECT 1"); n != 1 {
				t.Error("plain login after the refused TLS client failed")
			}
		})
	})
}
