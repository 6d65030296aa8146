package obsim

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// mariadbCLI runs the mariadb command-line client against a node.
func mariadbCLI(t *testing.T, n *Node, args ...string) (string, error) {
	t.Helper()
	bin, err := exec.LookPath("mariadb")
	if err != nil {
		t.Fatalf("the mariadb client is needed (apt-get install mariadb-client): %v", err)
	}
	base := []string{"--no-defaults", "-h127.0.0.1", "-P" + strconv.Itoa(n.Port()), "--connect-timeout=5", "-N", "-B"}
	cmd := exec.Command(bin, append(base, args...)...)
	cmd.WaitDelay = 5 * time.Second
	out, err := cmd.CombinedOutput()
	return strings.TrimSpace(string(out)), err
}

func TestMariaDBCLI(t *testing.T) {
	c := testCluster(t)
	n := c.Node("zone2-1")
	out, err := mariadbCLI(t, n, "-uroot@test", "-Dtest", "-e", "SELECT customer FROM orders WHERE id = 3; SELECT @@ob_query_timeout; SELECT ob_version()")
	if err != nil || out != "cid\n10000000\n4.2.1.0" {
		t.Fatalf("mariadb: %v\n%s", err, out)
	}
	out, err = mariadbCLI(t, n, "-uapp@app", "-papp-secret", "--compress", "-e", "SELECT CURRENT_USER(), COUNT(*) FROM appdb.items")
	if err != nil || out != "app@%\t0" {
		t.Fatalf("mariadb --compress: %v\n%s", err, out)
	}
	if e := lastEntry(t, n, "query"); e.Protocol != "compressed" || e.User != "app" || e.Tenant != "app" {
		t.Errorf("entry %+v", e)
	}
	out, err = mariadbCLI(t, n, "-uapp@app", "-pwrong", "-e", "SELECT 1")
	if err == nil || !strings.Contains(out, "ERROR 1045") {
		t.Errorf("wrong password: %v\n%s", err, out)
	}
	out, err = mariadbCLI(t, c.Node("zone3-1"), "-uapp@app", "-papp-secret", "-e", "SELECT 1")
	if err == nil || !strings.Contains(out, "ERROR 5150") {
		t.Errorf("tenant not in server: %v\n%s", err, out)
	}
	// Multi-statements, errors and LOAD DATA LOCAL through the relay.
	file := filepath.Join(t.TempDir(), "rows.txt")
	if err := os.WriteFile(file, []byte("1\n2\n3\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	out, err = mariadbCLI(t, n, "-uroot@test", "-Dtest", "--local-infile=1", "-e",
		"CREATE TEMPORARY TABLE tmp (a INT); LOAD DATA LOCAL INFILE '"+file+"' INTO TABLE tmp; SELECT SUM(a) FROM tmp")
	if err != nil || out != "6" {
		t.Errorf("load data local: %v\n%s", err, out)
	}
	c.Node("zone1-1").Stop()
	out, err = mariadbCLI(t, c.Node("zone1-1"), "-uroot@test", "-e", "SELECT 1")
	if err == nil || !strings.Contains(out, "ERROR 2002") && !strings.Contains(out, "ERROR 2003") {
		t.Errorf("stopped node: %v\n%s", err, out)
	}
}
