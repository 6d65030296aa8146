package main_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestCheckConfigFlag runs obgate --check-config: "ok" and exit 0 for a
// good configuration, which it leaves as it is; each problem on its own
// line, with the file's path and line or the flag, and a non-zero exit
// otherwise.
func TestCheckConfigFlag(t *testing.T) {
	writeConf := func(t *testing.T, text string) (dir, path string) {
		dir = t.TempDir()
		path = filepath.Join(dir, "obgate.conf")
		if err := os.WriteFile(path, []byte(text), 0o600); err != nil {
			t.Fatal(err)
		}
		return dir, path
	}
	t.Run("good", func(t *testing.T) {
		const text = "client_max_connections = 100\nserver_routing_mode = mysql\n"
		dir, path := writeConf(t, text)
		out, errOut, code := runObgate(t, "--check-config", "--config-dir", dir, "-r", "127.0.0.1:3306", "-p", "3999")
		if code != 0 || out != "ok\n" || errOut != "" {
			t.Fatalf("exit %d, stdout %q, stderr %q; want 0, ok and nothing", code, out, errOut)
		}
		if b, _ := os.ReadFile(path); string(b) != text {
			t.Errorf("--check-config rewrote the config file: %q", b)
		}
	})
	t.Run("file", func(t *testing.T) {
		dir, path := writeConf(t, "# obgate\nlisen_port = 2883\nlisten_port = 80\nclient_io_mode = carrier-pigeon\nnonsense\nrootservice_list = 127.0.0.1:2881\n")
		out, errOut, code := runObgate(t, "--check-config", "--config-dir", dir, "-c", "c1")
		if code == 0 || out != "" {
			t.Fatalf("exit %d, stdout %q; want non-zero and nothing", code, out)
		}
		lines := strings.Split(strings.TrimSpace(errOut), "\n")
		want := []string{
			path + `:2: unknown config item: "lisen_port"`,
			path + `:3: invalid config value: listen_port: "80": out of range (1024,65536)`,
			path + `:4: invalid config value: client_io_mode: "carrier-pigeon"`,
			path + `:5: want name = value`,
			"obgate: 4 problem(s) in the configuration",
		}
		if len(lines) != len(want) {
			t.Fatalf("stderr:\n%s\nwant %d lines", errOut, len(want))
		}
		for i := range want {
			if !strings.HasPrefix(lines[i], want[i]) {
				t.Errorf("line %d = %q, want it to start with %q", i+1, lines[i], want[i])
			}
		}
	})
	t.Run("flags", func(t *testing.T) {
		dir := t.TempDir()
		_, errOut, code := runObgate(t, "--check-config", "--config-dir", dir, "-o", "no_such_item=1,novalue", "-o", "other_item=2")
		if code == 0 {
			t.Fatalf("exit 0 with unknown items; stderr %q", errOut)
		}
		for _, want := range []string{`"no_such_item"`, `"novalue"`, `"other_item"`} {
			if !strings.Contains(errOut, want) {
				t.Errorf("stderr %q does not name %s", errOut, want)
			}
		}
		_, errOut, code = runObgate(t, "--check-config", "--config-dir", dir, "-p", "80", "-r", "127.0.0.1:2881", "-c", "c1",
			"-o", "hot_upgrade_exit_timeout=2d")
		if code == 0 || !strings.Contains(errOut, "-p/--listen_port: invalid config value: listen_port") ||
			!strings.Contains(errOut, "-o: invalid config value: hot_upgrade_exit_timeout") {
			t.Errorf("bad flag values: exit %d, stderr %q", code, errOut)
		}
		if ents, _ := os.ReadDir(dir); len(ents) != 0 {
			t.Errorf("--check-config wrote %d files in the config directory", len(ents))
		}
	})
	t.Run("startup", func(t *testing.T) {
		// Valid values that serve would refuse: no servers to route to.
		dir := t.TempDir()
		_, errOut, code := runObgate(t, "--check-config", "--config-dir", dir)
		if code == 0 || !strings.Contains(errOut, "needs rootservice_list") {
			t.Errorf("no servers: exit %d, stderr %q", code, errOut)
		}
		_, errOut, code = runObgate(t, "--check-config", "--config-dir", dir, "-r", "127.0.0.1:2881", "-c", "c1",
			"-o", "enable_client_ssl=true,client_ssl_cert_file=/nonexistent.pem,client_ssl_key_file=/nonexistent.key")
		if code == 0 || !strings.Contains(errOut, "enable_client_ssl") {
			t.Errorf("missing TLS files: exit %d, stderr %q", code, errOut)
		}
	})
}
