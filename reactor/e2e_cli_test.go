package reactor_test

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"obgate/config"
	"obgate/internal/testkit"
	"obgate/internal/testproxy"
)

// TestE2ECLI drives obgate with the mariadb command-line client: batch
// mode with several statements (-e and stdin), LOAD DATA LOCAL INFILE, a
// 100,000-row result, a login with tenant and cluster in the user name,
// and root@proxysys internal commands.
func TestE2ECLI(t *testing.T) {
	forEachMode(t, func(t *testing.T, mode string) {
		testkit.CheckLeaks(t)
		p := startProxy(t, mode)
		tbl := testDB + ".cli_" + mode

		t.Run("multi-statement -e", func(t *testing.T) {
			out := cli(t, p, "", "-N", "-B", "-e", fmt.Sprintf(
				"DROP TABLE IF EXISTS %[1]s; CREATE TABLE %[1]s (id INT PRIMARY KEY, v VARCHAR(20));"+
					" INSERT INTO %[1]s VALUES (1,'one'),(2,'two'); INSERT INTO %[1]s VALUES (3,'three');"+
					" SELECT COUNT(*) FROM %[1]s; SELECT v FROM %[1]s ORDER BY id DESC", tbl))
			want := []string{"3", "three", "two", "one"}
			if got := lines(out); !slices.Equal(got, want) {
				t.Errorf("output %q, want %q", got, want)
			}
		})

		t.Run("multi-statement stdin", func(t *testing.T) {
			script := fmt.Sprintf("USE %s;\nUPDATE cli_%s SET v = 'uno' WHERE id = 1;\n"+
				"SELECT v FROM cli_%[2]s WHERE id = 1;\nDELETE FROM cli_%[2]s WHERE id > 1;\n"+
				"SELECT COUNT(*), DATABASE() FROM cli_%[2]s;\n", testDB, mode)
			out := cli(t, p, script, "-N", "-B")
			want := []string{"uno", "1\t" + testDB}
			if got := lines(out); !slices.Equal(got, want) {
				t.Errorf("output %q, want %q", got, want)
			}
		})

		t.Run("LOAD DATA LOCAL INFILE", func(t *testing.T) {
			const rows = 50000
			path := filepath.Join(t.TempDir(), "rows.tsv")
			var sb strings.Builder
			var idSum, lenSum int64
			for i := 1; i <= rows; i++ {
				name := fmt.Sprintf("row-%d-%s", i, strings.Repeat("x", i%97))
				fmt.Fprintf(&sb, "%d\t%s\n", i, name)
				idSum += int64(i)
				lenSum += int64(len(name))
			}
			if err := os.WriteFile(path, []byte(sb.String()), 0o644); err != nil {
				t.Fatal(err)
			}
			load := testDB + ".load_" + mode
			out := cli(t, p, "", "--local-infile=1", "-N", "-B", "-e", fmt.Sprintf(
				"DROP TABLE IF EXISTS %[1]s; CREATE TABLE %[1]s (id INT PRIMARY KEY, name VARCHAR(200));"+
					" LOAD DATA LOCAL INFILE '%[2]s' INTO TABLE %[1]s (id, name);"+
					" SELECT COUNT(*), SUM(id), SUM(LENGTH(name)) FROM %[1]s", load, path))
			want := fmt.Sprintf("%d\t%d\t%d", rows, idSum, lenSum)
			if got := strings.TrimSpace(out); got != want {
				t.Errorf("after loading %d rows (%d bytes): got %q, want %q", rows, sb.Len(), got, want)
			}
		})

		t.Run("100k-row result", func(t *testing.T) {
			out := cli(t, p, "", "-N", "-B", "-D", testDB, "-e", "SELECT seq FROM seq_1_to_100000")
			got := lines(out)
			if len(got) != 100000 {
				t.Fatalf("got %d lines, want 100000", len(got))
			}
			for _, i := range []int{0, 4095, 65535, 99999} {
				if got[i] != itoa(int64(i+1)) {
					t.Errorf("line %d is %q, want %d", i+1, got[i], i+1)
				}
			}
		})

		t.Run("compression requested", func(t *testing.T) {
			// obgate does not compress towards clients and does not offer
			// it; the client goes on uncompressed.
			out := cli(t, p, "", "--compress", "-N", "-B", "-D", testDB, "-e",
				"SELECT COUNT(*), SUM(seq) FROM seq_1_to_20000")
			if got := strings.TrimSpace(out); got != "20000\t200010000" {
				t.Errorf("output %q", got)
			}
		})

		t.Run("tenant and cluster in user name", func(t *testing.T) {
			// mysql routing mode passes a login name to the server as it
			// is: root@sys#demo is a MySQL user of that name, which the
			// server does not know (TestAttackMySQLUserNames).
			waitNoClients(t, p)
			_, stderr, err := cliResult(p, "", "-N", "-B", "-u", "root@sys#demo", "-e", "SELECT USER()")
			if err == nil || !strings.Contains(stderr, "Access denied for user 'root@sys#demo'") {
				t.Errorf("login as root@sys#demo: %v %q; want the server's access denied for that very name", err, stderr)
			}
		})

		t.Run("root@proxysys", func(t *testing.T) {
			waitNoClients(t, p)
			admin := func(stmt string) []string {
				waitNoClients(t, p) // the previous client's session is gone
				return lines(cli(t, p, "", "-N", "-B", "-u", "root@proxysys", "-e", stmt))
			}
			var want []string
			for _, it := range config.Items() {
				if strings.HasPrefix(it.Name(), "client") {
					want = append(want, it.Name())
				}
			}
			rows := admin("SHOW PROXYCONFIG LIKE 'client%'")
			var names []string
			for _, r := range rows {
				f := strings.Split(r, "\t")
				names = append(names, f[0])
				if f[0] == "client_io_mode" && (len(f) < 2 || f[1] != mode) {
					t.Errorf("client_io_mode row %q, want value %s", r, mode)
				}
			}
			if !slices.Equal(names, want) {
				t.Errorf("SHOW PROXYCONFIG LIKE 'client%%' names %q, want %q", names, want)
			}

			rows = admin("SHOW PROXYSESSION")
			if len(rows) != 1 {
				t.Fatalf("SHOW PROXYSESSION rows %q, want exactly the admin's own session", rows)
			}
			if f := strings.Split(rows[0], "\t"); len(f) < 5 || f[3] != "proxysys" || f[4] != "root" {
				t.Errorf("SHOW PROXYSESSION row %q, want tenant proxysys, user root", rows[0])
			}

			if rows := admin("PING PROXY"); len(rows) != 0 {
				t.Errorf("PING PROXY printed %q, want nothing (an OK)", rows)
			}
			if rows := admin("SELECT PROXY_VERSION()"); !slices.Equal(rows, []string{testproxy.Version}) {
				t.Errorf("SELECT PROXY_VERSION() = %q, want %q", rows, testproxy.Version)
			}
			if rows := admin("select @@version_comment limit 1"); len(rows) != 1 || !strings.Contains(rows[0], "obgate") {
				t.Errorf("select @@version_comment = %q, want obgate's", rows)
			}
		})

		t.Run("root@proxysys interactive", func(t *testing.T) {
			// Interactive, the client asks for @@version_comment at once for
			// its banner; script(1) gives it a terminal.
			if _, err := exec.LookPath("script"); err != nil {
				t.Skip("script(1) from util-linux is not installed")
			}
			host, port, _ := strings.Cut(p.Addr, ":")
			cmd := exec.Command("script", "-q", "-e", "-c",
				"mariadb --no-defaults --protocol=TCP -h "+host+" -P "+port+" -u root@proxysys", "/dev/null")
			cmd.Stdin = strings.NewReader("SELECT PROXY_VERSION();\nquit\n")
			out, err := cmd.CombinedOutput()
			if err != nil {
				t.Fatalf("interactive mariadb: %v\n%s", err, out)
			}
			if !strings.Contains(string(out), "obgate "+testproxy.Version) {
				t.Errorf("banner lacks obgate's version comment:\n%s", out)
			}
			if !strings.Contains(string(out), "| "+testproxy.Version) {
				t.Errorf("SELECT PROXY_VERSION() result missing:\n%s", out)
			}
		})
	})
}
