package config

import (
	"strings"
	"testing"
)

// TestShownMasksSecrets checks that every password item, and the hashes
// of mysql_user_hashes, show as Masked when set and stay empty when not,
// while other items show their values.
func TestShownMasksSecrets(t *testing.T) {
	passwords := []string{"obproxy_sys_password", "inspector_password", "observer_sys_password",
		"observer_sys_password1", "mysql_hash_reader_password"}
	for _, it := range Items() {
		if it.Kind() == KindPassword && !it.Secret() {
			t.Errorf("%s is a password item but not a secret", it.Name())
		}
	}
	c := Default()
	for _, name := range passwords {
		it, ok := Lookup(name)
		if !ok || !it.Secret() {
			t.Fatalf("%s: not a secret item", name)
		}
		if got := it.Shown(c); got != "" {
			t.Errorf("%s unset shows %q, want empty", name, got)
		}
		var err error
		if c, err = c.With(name, "s3cret"); err != nil {
			t.Fatal(err)
		}
		if got := it.Shown(c); got != Masked {
			t.Errorf("%s set shows %q, want %q", name, got, Masked)
		}
		if v, _ := c.Shown(name); v != Masked {
			t.Errorf("Config.Shown(%s) = %q", name, v)
		}
	}
	c, err := c.With("mysql_user_hashes", "app:*6BB4837EB74329105EE4568DDA7DC67ED2CA2AD9,report:*23AE809DDACAF96AF0FD78ED04B6A265E05AA257")
	if err != nil {
		t.Fatal(err)
	}
	if got, _ := c.Shown("mysql_user_hashes"); got != "app:"+Masked+",report:"+Masked {
		t.Errorf("mysql_user_hashes shows %q, want the users with their hashes masked", got)
	}
	if c, err = c.With("client_max_connections", "77"); err != nil {
		t.Fatal(err)
	}
	if got, _ := c.Shown("client_max_connections"); got != "77" {
		t.Errorf("client_max_connections shows %q, want 77", got)
	}
}

// TestProblemsDoNotShowPasswords checks that --check-config's problems
// name a bad password item without its value.
func TestProblemsDoNotShowPasswords(t *testing.T) {
	opts, _ := writeCheckConf(t, "observer_sys_password = hunter2-not-a-hash\n",
		Override{Name: "obproxy_sys_password", Value: "s3cret,", From: "-o"})
	_, problems := Check(opts)
	if len(problems) == 0 {
		t.Fatal("a password that is not a hash in the file is no problem")
	}
	for _, p := range problems {
		if strings.Contains(p.Error(), "hunter2") || strings.Contains(p.Error(), "s3cret") {
			t.Errorf("problem shows a password: %q", p)
		}
	}
}
