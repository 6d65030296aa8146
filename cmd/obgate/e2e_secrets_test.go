package main_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"obgate/config"
	"obgate/mysqlproto"
)

// TestShowProxyConfigMasksSecrets starts obgate with every password item
// and mysql_user_hashes set in its config file and checks that no variant
// of SHOW PROXYCONFIG shows them (set passwords read ******, mysql_user_hashes
// keeps its user names only), that an unset password stays empty, and
// that neither obgate's log nor --check-config's output holds a hash.
// It also checks, in the same process, that ALTER PROXYCONFIG refuses
// what --check-config would: TLS turned on with certificate files that
// are FIFOs, answered at once and not applied.
func TestShowProxyConfigMasksSecrets(t *testing.T) {
	const adminPassword = "admin-pw"
	secrets := map[string]string{
		"obproxy_sys_password":       config.HashPassword(adminPassword),
		"observer_sys_password":      config.HashPassword("observer-pw"),
		"observer_sys_password1":     config.HashPassword("observer-pw-1"),
		"mysql_hash_reader_password": config.HashPassword("reader-pw"),
	}
	const userHash = "*6BB4837EB74329105EE4568DDA7DC67ED2CA2AD9"
	dir := t.TempDir()
	var conf strings.Builder
	for name, h := range secrets {
		conf.WriteString(name + " = " + h + "\n")
	}
	conf.WriteString("mysql_user_hashes = app:" + userHash + "\n")
	if err := os.WriteFile(filepath.Join(dir, config.FileName), []byte(conf.String()), 0o600); err != nil {
		t.Fatal(err)
	}
	p := startObgate(t, dir)
	hidden := []string{userHash, strings.TrimPrefix(userHash, "*")}
	for _, h := range secrets {
		hidden = append(hidden, h, strings.ToUpper(h))
	}

	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	adm, err := mysqlproto.Dial(ctx, p.addr(), mysqlproto.ClientOptions{User: "root@proxysys", Password: adminPassword})
	if err != nil {
		t.Fatalf("root@proxysys with obproxy_sys_password: %v", err)
	}
	defer adm.Close()
	want := map[string]string{
		"obproxy_sys_password": config.Masked, "observer_sys_password": config.Masked,
		"observer_sys_password1": config.Masked, "mysql_hash_reader_password": config.Masked,
		"inspector_password": "", "mysql_user_hashes": "app:" + config.Masked,
	}
	for _, q := range []string{"SHOW PROXYCONFIG", "SHOW PROXYCONFIG ALL", "SHOW PROXYCONFIG DIFF",
		"SHOW PROXYCONFIG DIFF USER", "SHOW PROXYCONFIG LIKE '%password%'", "SHOW PROXYCONFIG LIKE 'mysql_user_hashes'"} {
		res, err := adm.Query(q)
		if err != nil {
			t.Fatalf("%s: %v", q, err)
		}
		seen := 0
		for i, row := range res.Rows {
			for _, cell := range row {
				for _, h := range hidden {
					if strings.Contains(string(cell), h) {
						t.Errorf("%s: row %s shows a secret", q, res.String(i, "name"))
					}
				}
			}
			name := res.String(i, "name")
			if w, ok := want[name]; ok {
				seen++
				if got := res.String(i, "value"); got != w {
					t.Errorf("%s: %s = %q, want %q", q, name, got, w)
				}
			}
		}
		if seen == 0 && q != "SHOW PROXYCONFIG DIFF USER" {
			t.Errorf("%s: no secret item listed; the check saw nothing", q)
		}
	}

	// ALTER refuses TLS whose files do not load, here FIFOs that would
	// block a reader, and applies nothing.
	fifo := filepath.Join(t.TempDir(), "cert.pem")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	for _, s := range []string{"ALTER PROXYCONFIG SET client_ssl_cert_file = '" + fifo + "'",
		"ALTER PROXYCONFIG SET client_ssl_key_file = '" + fifo + "'"} {
		if _, err := adm.Exec(s); err != nil {
			t.Fatalf("%s (TLS still off): %v", s, err)
		}
	}
	_ = adm.Conn().SetDeadline(time.Now().Add(30 * time.Second))
	if _, err := adm.Exec("ALTER PROXYCONFIG SET enable_client_ssl = true"); err == nil || !strings.Contains(err.Error(), "not a regular file") {
		t.Errorf("ALTER PROXYCONFIG SET enable_client_ssl = true with FIFOs as its files: %v; want it refused as not a regular file", err)
	}
	_ = adm.Conn().SetDeadline(time.Time{})
	res, err := adm.Query("SHOW PROXYCONFIG LIKE 'enable_client_ssl'")
	if err != nil {
		t.Fatal(err)
	}
	if v := res.String(0, "value"); v != "false" {
		t.Errorf("enable_client_ssl = %s after a refused ALTER, want false", v)
	}

	_, checkErr, _ := runObgate(t, "--check-config", "--config-dir", dir, "-o", "server_routing_mode=nonsense")
	if p.stop(30*time.Second) != 0 {
		t.Error("obgate did not stop cleanly")
	}
	for _, h := range hidden {
		if strings.Contains(p.log(), h) {
			t.Errorf("obgate's log shows a secret (%s…)", h[:8])
		}
		if strings.Contains(checkErr, h) {
			t.Errorf("--check-config's output shows a secret (%s…)", h[:8])
		}
	}
}

// TestCheckConfigFIFOCertificate checks that --check-config given a FIFO
// as the client certificate reports it instead of waiting for a writer.
func TestCheckConfigFIFOCertificate(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "cert.pem")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	_, errOut, code := runObgate(t, "--check-config", "--config-dir", dir, "-r", "127.0.0.1:3306",
		"-o", "server_routing_mode=mysql,enable_client_ssl=true,client_ssl_cert_file="+fifo+",client_ssl_key_file="+fifo)
	if code != 1 || !strings.Contains(errOut, "not a regular file") {
		t.Fatalf("--check-config with a FIFO certificate: exit %d, stderr %q; want 1 and not a regular file", code, errOut)
	}
}
