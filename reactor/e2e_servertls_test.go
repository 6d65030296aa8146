package reactor_test

import (
	"context"
	"database/sql"
	"fmt"
	"strings"
	"testing"

	"obgate/internal/testkit"
	"obgate/mysqlproto"

	"github.com/go-sql-driver/mysql"
)

// sslCipher is the server's Ssl_cipher status for the session db runs on:
// empty when the session reached the server in plain text.
func sslCipher(t *testing.T, db interface {
	QueryRowContext(context.Context, string, ...any) *sql.Row
}) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), hangLimit)
	defer cancel()
	var name, value string
	if err := db.QueryRowContext(ctx, "SHOW STATUS LIKE 'Ssl_cipher'").Scan(&name, &value); err != nil {
		t.Fatalf("SHOW STATUS LIKE 'Ssl_cipher': %v", err)
	}
	return value
}

// streamedRows runs query on db and counts the rows as they arrive.
func streamedRows(t *testing.T, db *sql.DB, query string) int {
	t.Helper()
	rows, err := db.Query(query)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	n := 0
	for rows.Next() {
		n++
	}
	if err := rows.Err(); err != nil {
		t.Fatalf("%s: after %d rows: %v", query, n, err)
	}
	return n
}

// alter runs ALTER PROXYCONFIG SET name = 'value' on an administrator
// session.
func alter(t *testing.T, adm *mysqlproto.Client, name, value string) {
	t.Helper()
	if _, err := adm.Exec("ALTER PROXYCONFIG SET " + name + " = '" + value + "'"); err != nil {
		t.Fatalf("ALTER PROXYCONFIG SET %s: %v", name, err)
	}
}

// TestE2EServerTLS checks TLS between obgate and MariaDB: with
// enable_server_ssl the server sees a cipher on the session (also when
// the client talks TLS to obgate, go-sql-driver's own TLS test), prepared
// statements, streamed results and 16 MiB+ packets pass, the setting
// applies live, and a certificate the verification refuses fails the
// login with the reason without blocklisting the server.
func TestE2EServerTLS(t *testing.T) {
	maria(t)
	if serverCA == "" {
		t.Fatal("the package's MariaDB was started without TLS")
	}
	clientCert, clientKey, err := testkit.WriteSelfSignedCert(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	forEachMode(t, func(t *testing.T, mode string) {
		testkit.CheckLeaks(t)
		t.Run("verified", func(t *testing.T) {
			p := startProxy(t, mode, "enable_server_ssl", "true", "server_ssl_verify", "verify_identity",
				"server_ssl_ca_file", serverCA)
			db := rootDB(t, p)
			db.SetMaxOpenConns(1)
			if c := sslCipher(t, db); c == "" {
				t.Fatal("MariaDB sees no cipher on the session through obgate with enable_server_ssl")
			}
			tbl := "stls_" + mode
			mustExec(t, db, "DROP TABLE IF EXISTS "+tbl)
			mustExec(t, db, "CREATE TABLE "+tbl+" (id INT PRIMARY KEY, b LONGBLOB)")
			mustExec(t, db, "INSERT INTO "+tbl+" VALUES (?, ?)", 1, "small")
			var s string
			if err := db.QueryRow("SELECT b FROM "+tbl+" WHERE id = ?", 1).Scan(&s); err != nil || s != "small" {
				t.Fatalf("prepared SELECT over server TLS: %q, %v", s, err)
			}
			data := sqlSafeBytes(7, 17<<20)
			mustExec(t, db, "INSERT INTO "+tbl+" VALUES (2, '"+string(data)+"')")
			var got []byte
			if err := db.QueryRow("SELECT b FROM " + tbl + " WHERE id = 2").Scan(&got); err != nil {
				t.Fatal(err)
			}
			if md5Hex(got) != md5Hex(data) {
				t.Errorf("17 MiB row read back with %d bytes, md5 %s; want %d, %s", len(got), md5Hex(got), len(data), md5Hex(data))
			}
			if n := streamedRows(t, db, "SELECT seq FROM seq_1_to_100000"); n != 100000 {
				t.Errorf("streamed %d rows over server TLS, want 100000", n)
			}
			mustExec(t, db, "DROP TABLE "+tbl)
		})

		t.Run("TLS on both sides", func(t *testing.T) {
			p := startProxy(t, mode, "enable_server_ssl", "true",
				"client_ssl_cert_file", clientCert, "client_ssl_key_file", clientKey, "enable_client_ssl", "true")
			// What go-sql-driver's TestTLS does through obgate.
			db := rootDB(t, p, func(c *mysql.Config) { c.TLSConfig = "skip-verify" })
			if err := db.Ping(); err != nil {
				t.Fatal(err)
			}
			if c := sslCipher(t, db); c == "" {
				t.Error("no Cipher")
			}
		})

		t.Run("off, then on live", func(t *testing.T) {
			p := startProxy(t, mode)
			db := rootDB(t, p)
			db.SetMaxIdleConns(0) // every statement a new session
			if c := sslCipher(t, db); c != "" {
				t.Fatalf("cipher %q without enable_server_ssl", c)
			}
			adm := dialClient(t, p, "root@proxysys", "")
			alter(t, adm, "enable_server_ssl", "true")
			if c := sslCipher(t, db); c == "" {
				t.Error("a session opened after ALTER PROXYCONFIG SET enable_server_ssl = 'true' is plain text")
			}
			alter(t, adm, "enable_server_ssl", "false")
			if c := sslCipher(t, db); c != "" {
				t.Errorf("cipher %q after enable_server_ssl was turned off", c)
			}
		})

		t.Run("refused certificate", func(t *testing.T) {
			// clientCert is a CA that did not sign MariaDB's certificate.
			p := startProxy(t, mode, "enable_server_ssl", "true", "server_ssl_verify", "verify_ca",
				"server_ssl_ca_file", clientCert)
			db := rootDB(t, p)
			db.SetMaxIdleConns(0)
			err := db.Ping()
			if err == nil || !strings.Contains(err.Error(), "certificate") {
				t.Fatalf("login with a server certificate the CA did not sign: %v, want an error naming the certificate", err)
			}
			for _, v := range p.Server.Health().Views("", true) {
				if v.Congested || v.StatConnFailures > 0 {
					t.Errorf("server %s counted as failing after a refused certificate: %+v", v.Addr, v)
				}
			}
			alter(t, dialClient(t, p, "root@proxysys", ""), "server_ssl_ca_file", serverCA)
			if c := sslCipher(t, db); c == "" {
				t.Error("after the right CA was configured the session is plain text")
			}
		})
	})
}

// TestOBServerTLS checks TLS between obgate and OceanBase servers: every
// server session of a client runs OB 2.0 inside TLS (obsim sees TLS
// logins and answers Ssl_cipher), transactions and prepared statements
// pass, and a server without TLS is still served in plain text unless
// server_ssl_verify requires TLS.
func TestOBServerTLS(t *testing.T) {
	c, certFile := startOBSimTLS(t)
	forEachMode(t, func(t *testing.T, mode string) {
		testkit.CheckLeaks(t)
		resetOBSim(t, c)
		before := tlsLogins(c)
		p := startOBProxy(t, c, mode, "enable_server_ssl", "true", "server_ssl_verify", "verify_identity",
			"server_ssl_ca_file", certFile)
		db, conn := obConn(t, p)
		if cipher := sslCipher(t, conn); cipher == "" {
			t.Fatal("obsim sees no cipher on the session through obgate with enable_server_ssl")
		}
		for i := range 20 {
			if _, err := conn.ExecContext(context.Background(), "INSERT INTO kv VALUES (?, ?)", i, fmt.Sprint("v", i)); err != nil {
				t.Fatalf("prepared INSERT %d: %v", i, err)
			}
		}
		tx, err := db.Begin()
		if err != nil {
			t.Fatal(err)
		}
		if _, err := tx.Exec("UPDATE kv SET v = 'tx' WHERE id = ?", 3); err != nil {
			t.Fatal(err)
		}
		if err := tx.Commit(); err != nil {
			t.Fatal(err)
		}
		var v string
		if err := conn.QueryRowContext(context.Background(), "SELECT v FROM kv WHERE id = ?", 3).Scan(&v); err != nil || v != "tx" {
			t.Errorf("read back %q, %v; want tx", v, err)
		}
		after := tlsLogins(c)
		servers := 0
		for _, info := range p.Server.Sessions() {
			sess, ok := p.Server.Session(info.ID)
			if !ok {
				continue
			}
			for i, ss := range sess.ServerSessions() {
				servers++
				if !ss.TLS || ss.Protocol != "ob20" {
					t.Errorf("server session %s#%d: TLS %v protocol %s, want OB 2.0 inside TLS", ss.Addr, ss.ID, ss.TLS, ss.Protocol)
				}
				attr := fmt.Sprintf("SHOW PROXYSESSION ATTRIBUTE %d LIKE 'server_session[%d].using_ssl'", info.ID, i)
				admin := dialClient(t, p, "root@proxysys", "")
				if res, err := admin.Query(attr); err != nil || len(res.Rows) != 1 || res.String(0, "value") != "true" {
					t.Errorf("%s: %v, want one row saying true", attr, err)
				}
				admin.Close()
			}
		}
		if servers == 0 || after-before < int64(servers) {
			t.Errorf("%d server sessions, obsim counted %d TLS logins", servers, after-before)
		}
	})

	t.Run("server without TLS", func(t *testing.T) {
		testkit.CheckLeaks(t)
		plain := startOBSim(t)
		p := startOBProxy(t, plain, "netpoll", "enable_server_ssl", "true")
		_, conn := obConn(t, p)
		if cipher := sslCipher(t, conn); cipher != "" {
			t.Errorf("cipher %q from a server without TLS", cipher)
		}
		if _, err := conn.ExecContext(context.Background(), "SELECT 1"); err != nil {
			t.Fatalf("after Ssl_cipher: %v", err)
		}
		q := startOBProxy(t, plain, "netpoll", "enable_server_ssl", "true", "server_ssl_verify", "verify_ca")
		db := openDB(t, obDriverConfig(q, obFullUser, obDB))
		if err := db.Ping(); err == nil || !strings.Contains(err.Error(), "TLS") {
			t.Errorf("server_ssl_verify=verify_ca against servers without TLS: %v, want an error naming TLS", err)
		}
	})
}
