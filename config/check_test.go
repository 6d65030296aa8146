package config

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// writeCheckConf writes a config file in a new directory and returns the options naming it.
func writeCheckConf(t *testing.T, text string, ovs ...Override) (*Options, string) {
	t.Helper()
	dir := t.TempDir()
	path := filepath.Join(dir, FileName)
	if err := os.WriteFile(path, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
	return &Options{ConfigDir: dir, Overrides: ovs}, path
}

func problemTexts(errs []error) []string {
	out := make([]string, len(errs))
	for i, e := range errs {
		out[i] = e.Error()
	}
	return out
}

// TestCheckListsEveryProblem checks that Check reports each bad line of the file with its
// path and line, in file order, then each bad command-line value, and goes on past each.
func TestCheckListsEveryProblem(t *testing.T) {
	opts, path := writeCheckConf(t, strings.Join([]string{
		"# a comment",                  // 1
		"client_max_connections = 100", // 2
		"lisen_port = 2883",            // 3: unknown
		"listen_port = 80",             // 4: out of range
		"garbage",                      // 5: malformed
		"enable_reroute = maybe",       // 6: bad value
		"",                             // 7
		"client_max_connections = 200", // 8: given twice
		"bad name = 1",                 // 9: spaces in the name
		"syslog_level = LOUD",          // 10: not a choice
		"proxy_id = 9000",              // 11: out of range
	}, "\n"),
		Override{Name: "client_io_mode", Value: "carrier-pigeon", From: "-o"},
		Override{Name: "listen_port", Value: "99999", From: "-p/--listen_port"},
		Override{Name: "hot_upgrade_exit_timeout", Value: "10s", From: "-o"},
	)
	c, problems := Check(opts)
	got := problemTexts(problems)
	want := []string{
		path + `:3: unknown config item: "lisen_port"`,
		path + `:4: invalid config value: listen_port: "80": out of range (1024,65536)`,
		path + `:5: want name = value`,
		path + `:6: invalid config value: enable_reroute: "maybe"`,
		path + `:8: client_max_connections is given again (first on line 2); the last one counts`,
		path + `:9: item name "bad name" has spaces or control characters`,
		path + `:10: invalid config value: syslog_level: "LOUD": want one of`,
		path + `:11: invalid config value: proxy_id: "9000": out of range [0,8191]`,
		`-o: invalid config value: client_io_mode: "carrier-pigeon"`,
		`-p/--listen_port: invalid config value: listen_port: "99999": out of range`,
	}
	if len(got) != len(want) {
		t.Fatalf("Check found %d problems, want %d:\n%s", len(got), len(want), strings.Join(got, "\n"))
	}
	for i := range want {
		if !strings.HasPrefix(got[i], want[i]) {
			t.Errorf("problem %d = %q, want it to start with %q", i, got[i], want[i])
		}
	}
	// The valid values are kept; the invalid ones leave the default.
	if c.ClientMaxConnections != 200 || c.ListenPort != 2883 || c.HotUpgradeExitTimeout.String() != "10s" {
		t.Errorf("config after Check: client_max_connections %d, listen_port %d, hot_upgrade_exit_timeout %v; want 200, 2883, 10s",
			c.ClientMaxConnections, c.ListenPort, c.HotUpgradeExitTimeout)
	}
}

// TestCheckGoodConfig checks that a valid file and command line give no problem and that
// Check writes nothing, unlike Load.
func TestCheckGoodConfig(t *testing.T) {
	text := "# hand-written\nclient_max_connections = 100\nhot_upgrade_exit_timeout = 45s\n"
	opts, path := writeCheckConf(t, text, Override{Name: "listen_port", Value: "3883", From: "-o"})
	c, problems := Check(opts)
	if len(problems) > 0 {
		t.Fatalf("Check: %q", problemTexts(problems))
	}
	if c.ClientMaxConnections != 100 || c.ListenPort != 3883 {
		t.Errorf("client_max_connections %d, listen_port %d; want 100, 3883", c.ClientMaxConnections, c.ListenPort)
	}
	if b, err := os.ReadFile(path); err != nil || string(b) != text {
		t.Errorf("the config file changed: %q, %v", b, err)
	}
	ents, _ := os.ReadDir(filepath.Dir(path))
	if len(ents) != 1 {
		t.Errorf("the config directory holds %d entries, want only %s", len(ents), FileName)
	}
}

// TestCheckMissingFile checks that no file is no problem, as for Load, and that no file is
// created.
func TestCheckMissingFile(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "etc")
	if _, problems := Check(&Options{ConfigDir: dir}); len(problems) > 0 {
		t.Fatalf("Check: %q", problemTexts(problems))
	}
	if _, err := os.Stat(dir); !os.IsNotExist(err) {
		t.Errorf("Check created %s (stat: %v)", dir, err)
	}
}

// TestCheckRuleBetweenItems checks that the rules between items are applied after the file
// and the command line.
func TestCheckRuleBetweenItems(t *testing.T) {
	opts, _ := writeCheckConf(t, "proxy_id = 300\n")
	_, problems := Check(opts)
	if got := problemTexts(problems); len(got) != 1 || !strings.Contains(got[0], "client_session_id_version") {
		t.Fatalf("Check: %q, want one problem naming client_session_id_version", got)
	}
	opts.Overrides = []Override{{Name: "client_session_id_version", Value: "2", From: "-o"}}
	if _, problems := Check(opts); len(problems) > 0 {
		t.Fatalf("with client_session_id_version=2: %q", problemTexts(problems))
	}
}

// TestCheckUnwritableDir checks that a config file Load could not read is a problem, and
// that a directory it could not write is not one but is told by Unwritable.
func TestCheckUnwritableDir(t *testing.T) {
	file := filepath.Join(t.TempDir(), "plain")
	if err := os.WriteFile(file, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	for _, dir := range []string{file, filepath.Join(file, "etc")} {
		_, problems := Check(&Options{ConfigDir: dir})
		if got := problemTexts(problems); len(got) != 1 || !strings.HasPrefix(got[0], filepath.Join(dir, FileName)+": ") {
			t.Errorf("config dir %s: %q, want one problem naming the file", dir, got)
		}
	}
	if os.Geteuid() == 0 {
		t.Log("running as root, who may write a directory whatever its mode: read-only directory not checked")
		return
	}
	dir := t.TempDir()
	if err := os.Chmod(dir, 0o500); err != nil {
		t.Fatal(err)
	}
	defer os.Chmod(dir, 0o700)
	if _, problems := Check(&Options{ConfigDir: dir}); len(problems) > 0 {
		t.Errorf("read-only config dir: %q, want no problem (obgate runs on a read-only file)", problemTexts(problems))
	}
	if err := Unwritable(&Options{ConfigDir: dir}); err == nil || !strings.Contains(err.Error(), "not writable") {
		t.Errorf("Unwritable of a read-only config dir: %v, want it to say not writable", err)
	}
}

// TestParseArgsListsEveryBadOptStr checks that every bad -o pair is reported, not only the
// first, and that --check-config is parsed.
func TestParseArgsListsEveryBadOptStr(t *testing.T) {
	_, err := ParseArgs([]string{"--check-config", "-o", "nope=1,listen_port=3000", "-o", "alsonot=2,novalue"})
	if err == nil {
		t.Fatal("ParseArgs accepted unknown items")
	}
	for _, want := range []string{`"nope"`, `"alsonot"`, `"novalue"`} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("ParseArgs error %q does not name %s", err, want)
		}
	}
	opts, err := ParseArgs([]string{"--check-config", "-o", "listen_port=3000"})
	if err != nil || !opts.CheckConfig {
		t.Fatalf("ParseArgs(--check-config) = %+v, %v", opts, err)
	}
}
