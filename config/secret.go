package config

import "strings"

// Masked is what obgate prints in place of a secret item's value.
const Masked = "******"

// userHashesItem holds users' mysql_native_password hashes (SHA1 of SHA1
// of the password, as mysql.user keeps them): not the password, but with
// one login read off the network it gives the password's SHA1, which logs
// in anywhere (mysql_native_password sends SHA1(pw) XOR
// SHA1(scramble+hash)). Its user names are shown, the hashes not.
const userHashesItem = "mysql_user_hashes"

// Secret reports whether the item's value must not be shown: the password
// items (their values are SHA1 hex of the password, which logs in as well
// as the password does with mysql_native_password) and mysql_user_hashes.
func (it *Item) Secret() bool {
	return it.Kind() == KindPassword || it.name == userHashesItem
}

// Shown returns the item's value in c as views and logs may print it:
// Value, except that a secret that is set shows as Masked (the user names
// of mysql_user_hashes stay, each hash masked). An empty secret stays
// empty, so that "no password" can still be seen. The config file is the
// one place that holds the values themselves.
func (it *Item) Shown(c *Config) string {
	v := it.Value(c)
	if v == "" || !it.Secret() {
		return v
	}
	if it.name != userHashesItem {
		return Masked
	}
	entries := strings.Split(v, ",")
	for i, e := range entries {
		if strings.TrimSpace(e) == "" {
			continue
		}
		if user, _, ok := strings.Cut(strings.TrimSpace(e), ":"); ok {
			entries[i] = user + ":" + Masked
		} else {
			entries[i] = Masked
		}
	}
	return strings.Join(entries, ",")
}

// Shown returns the named item's value in c as Item.Shown prints it;
// false if there is no such item.
func (c *Config) Shown(name string) (string, bool) {
	it, ok := Lookup(name)
	if !ok {
		return "", false
	}
	return it.Shown(c), true
}
