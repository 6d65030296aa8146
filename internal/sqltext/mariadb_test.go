package sqltext_test

import (
	"context"
	"database/sql"
	"encoding/hex"
	"strings"
	"testing"
	"time"

	"obgate/internal/mariadbd"
	"obgate/internal/sqltext"
)

// TestStringOnMariaDB asks a real server what each literal means:
// SELECT HEX(literal), 'end' under both sql_modes and in connection
// character sets where the quote, backslash or backquote can be part of a
// multi-byte character's bytes. Every statement must parse into those two
// columns and the literal must be the text byte for byte. It also checks
// that a user variable named by Ident takes its value (SET @`a b` = 1).
func TestStringOnMariaDB(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a MariaDB server")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	srv, err := mariadbd.Start(ctx, mariadbd.Options{})
	if err != nil {
		t.Skipf("no MariaDB server: %v", err)
	}
	defer srv.Stop()
	db, err := sql.Open("mysql", srv.DSN("root", "", ""))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	conn, err := db.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	texts := append(hostile, "plain", "", "中文", "a\nb")
	for _, charset := range []string{"utf8mb4", "gbk", "big5", "sjis", "latin1"} {
		for _, mode := range []string{"", "NO_BACKSLASH_ESCAPES"} {
			for _, q := range []string{"SET NAMES " + charset, "SET sql_mode = '" + mode + "'"} {
				if _, err := conn.ExecContext(ctx, q); err != nil {
					t.Fatalf("%s: %v", q, err)
				}
			}
			for _, s := range texts {
				lit := sqltext.String(s)
				var got, end string
				if err := conn.QueryRowContext(ctx, "SELECT HEX("+lit+"), 'end'").Scan(&got, &end); err != nil || end != "end" {
					t.Errorf("%s, sql_mode %q: SELECT HEX(%s): %v (end %q)", charset, mode, lit, err, end)
					continue
				}
				if !strings.EqualFold(got, hex.EncodeToString([]byte(s))) {
					t.Errorf("sql_mode %q: %s is %s, want the bytes of %q", mode, lit, got, s)
				}
			}
		}
	}
	if _, err := conn.ExecContext(ctx, "SET NAMES utf8mb4"); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"a b", "a`b", `x\`, "it's", "中"} {
		id, err := sqltext.Ident(name)
		if err != nil {
			t.Fatal(err)
		}
		var got string
		if _, err := conn.ExecContext(ctx, "SET @"+id+" = "+sqltext.String(name)); err != nil {
			t.Errorf("SET @%s: %v", id, err)
		} else if err := conn.QueryRowContext(ctx, "SELECT @"+id).Scan(&got); err != nil || got != name {
			t.Errorf("SELECT @%s = %q, %v; want %q", id, got, err, name)
		}
	}
}
