package config

import (
	"reflect"
	"strings"
	"testing"
)

// FuzzParseValue feeds arbitrary text to every item's parser. Properties: no panic; an
// accepted value is in range; and the text shown for it parses back to the same value (with
// file semantics, as it is read after being written), so what SHOW PROXYCONFIG prints and the
// config file stores is always loadable.
func FuzzParseValue(f *testing.F) {
	for _, s := range []string{"0", "1", "-1", "20s", "100ms", "1d", "180000", "8KB", "16m", "2G", "1.5s",
		"99999999999999999999d", "9223372036854775807", "true", "OFF", "mysql", "zlib:9", "10.0.0.1:2881;[::1]:1",
		"abc", "a9993e364706816aba3e25717850c26c9cd0d89d", ":;-;.", " x ", "\n", "''", "FOLLOWER_only"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		for _, it := range registry {
			for _, src := range []source{fromFile, fromCommandLine, fromAlter} {
				v, text, err := it.parse(s, src)
				if err != nil {
					continue
				}
				if n, ok := v.(int64); ok && it.inRange(n) != nil {
					t.Fatalf("%s accepted %q out of range", it.name, s)
				}
				v2, text2, err := it.parse(text, fromFile)
				if err != nil || v2 != v || text2 != text {
					t.Fatalf("%s: %q gave %v/%q, which reads back as %v/%q, %v", it.name, s, v, text, v2, text2, err)
				}
			}
		}
		// The exported parsers agree with their own formatting.
		if d, err := ParseDuration(s); err == nil {
			if d2, err := ParseDuration(formatDuration(d)); err != nil || d2 != d {
				t.Fatalf("duration %q: %v, format %q reads %v, %v", s, d, formatDuration(d), d2, err)
			}
		}
		if n, err := ParseCapacity(s); err == nil {
			if n2, err := ParseCapacity(formatCapacity(n)); err != nil || n2 != n {
				t.Fatalf("capacity %q: %v, format %q reads %v, %v", s, n, formatCapacity(n), n2, err)
			}
		}
	})
}

// FuzzParseFile parses arbitrary config files. Properties: no panic; every accepted entry has
// a non-empty name without '=' or line breaks; and applying the entries to a snapshot, then
// writing and re-reading that snapshot, gives the same values.
func FuzzParseFile(f *testing.F) {
	f.Add([]byte(""))
	f.Add([]byte(fileHeader + "listen_port = 3000\nobproxy_sys_password = a9993e364706816aba3e25717850c26c9cd0d89d\n"))
	f.Add([]byte("\ufeff# c\r\nenable_reroute=true\r\n\r\nunknown = 1\n"))
	f.Add([]byte("init_sql = SET a = 1\nusername_separator = :;-\nproxy_route_policy=\n"))
	f.Add([]byte("= x\n"))
	f.Add([]byte("listen_port\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		entries, err := parseFile(data)
		if err != nil {
			return
		}
		c := Default()
		for _, e := range entries {
			if e.name == "" || strings.ContainsAny(e.name, "=\r\n") || e.line < 1 {
				t.Fatalf("bad entry %+v", e)
			}
			if it, ok := Lookup(e.name); ok {
				_ = c.set(it, e.value, fromFile)
			}
		}
		if c.validate() != nil {
			return
		}
		back, err := parseFile(formatFile(c))
		if err != nil {
			t.Fatalf("written file does not parse: %v\n%s", err, formatFile(c))
		}
		c2 := Default()
		for _, e := range back {
			it, ok := Lookup(e.name)
			if !ok {
				t.Fatalf("written file has unknown item %q", e.name)
			}
			if err := c2.set(it, e.value, fromFile); err != nil {
				t.Fatalf("written value %s = %q does not load: %v", e.name, e.value, err)
			}
		}
		for _, it := range registry {
			if !it.Equal(c, c2) || it.Value(c) != it.Value(c2) {
				t.Fatalf("%s: %q before writing, %q after", it.name, it.Value(c), it.Value(c2))
			}
		}
	})
}

// FuzzParseOptStr parses arbitrary -o arguments. Properties: no panic; accepted overrides name
// registry items and carry no separators; re-joining them parses to the same list.
func FuzzParseOptStr(f *testing.F) {
	for _, s := range []string{"", "listen_port=1", "a=b", "enable_reroute=true,proxy_id=3\nlisten_port=4000",
		",,,", "obproxy_sys_password='x'", "init_sql=\"a=b\"", "listen_port"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		ovs, err := parseOptStr(s)
		if err != nil {
			return
		}
		parts := make([]string, len(ovs))
		for i, ov := range ovs {
			if _, ok := Lookup(ov.Name); !ok || strings.ContainsAny(ov.Value, ",\n") {
				t.Fatalf("bad override %+v from %q", ov, s)
			}
			parts[i] = ov.Name + "=" + quoteIfNeeded(ov.Value)
		}
		again, err := parseOptStr(strings.Join(parts, ","))
		if err != nil || !reflect.DeepEqual(again, ovs) {
			t.Fatalf("%q -> %v -> %q -> %v, %v", s, ovs, strings.Join(parts, ","), again, err)
		}
	})
}

// quoteIfNeeded protects a value whose quotes or spaces parseOptStr would otherwise strip.
func quoteIfNeeded(v string) string {
	if v != strings.TrimSpace(v) || v != unquote(v) {
		if !strings.Contains(v, "'") {
			return "'" + v + "'"
		}
		return `"` + v + `"`
	}
	return v
}
