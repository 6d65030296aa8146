package config

import (
	"errors"
	"log/slog"
	"slices"
	"strings"
	"testing"
	"time"
)

func TestWithLeavesOriginalAlone(t *testing.T) {
	a := Default()
	b, err := a.With("short_async_task_timeout", "7s")
	if err != nil {
		t.Fatal(err)
	}
	if a.ShortAsyncTaskTimeout != 5*time.Second || b.ShortAsyncTaskTimeout != 7*time.Second {
		t.Errorf("a=%v b=%v; want 5s and 7s", a.ShortAsyncTaskTimeout, b.ShortAsyncTaskTimeout)
	}
	if v, _ := a.Value("short_async_task_timeout"); v != "5s" {
		t.Errorf("a shows %q", v)
	}
	if _, err := a.With("nope", "1"); !errors.Is(err, ErrUnknownItem) {
		t.Errorf("unknown item: %v", err)
	}
	// Default hands out copies: changing one must not change the next.
	a.ListenPort = 1
	if Default().ListenPort != 2883 {
		t.Error("Default() returned a shared snapshot")
	}
}

func TestValueKeepsTheUsersNotation(t *testing.T) {
	tests := []struct{ name, in, shown string }{
		{"default_inactivity_timeout", "180000s", "180000s"},
		{"short_async_task_timeout", "5000ms", "5000ms"},
		{"short_async_task_timeout", " 10S ", "10S"},
		{"request_buffer_length", "8192", "8192"},
		{"request_buffer_length", "8kb", "8kb"},
		{"enable_reroute", "YES", "true"},
		{"client_max_connections", "+12", "12"},
		{"server_routing_mode", "MySQL", "mysql"},
		{"syslog_level", "info", "INFO"},
		{"compression_algorithm", "ZLIB:3", "zlib:3"},
		{"proxy_tenant_name", "  t1 ", "t1"},
	}
	for _, tt := range tests {
		c, err := Default().With(tt.name, tt.in)
		if err != nil {
			t.Errorf("With(%s, %q): %v", tt.name, tt.in, err)
			continue
		}
		if got, _ := c.Value(tt.name); got != tt.shown {
			t.Errorf("With(%s, %q) shows %q; want %q", tt.name, tt.in, got, tt.shown)
		}
	}
	if _, ok := Default().Value("nope"); ok {
		t.Error("Value found an unknown item")
	}
}

// A field changed directly (as a test of another package might) is shown from the field, not
// from stale text; a zero Config is formatted canonically.
func TestValueFollowsField(t *testing.T) {
	c := Default()
	c.ShortAsyncTaskTimeout = 90 * time.Second
	c.TunnelRequestSizeThreshold = 16 << 20
	c.ClientMaxConnections = 7
	for name, want := range map[string]string{
		"short_async_task_timeout":      "90s",
		"tunnel_request_size_threshold": "16MB",
		"client_max_connections":        "7",
	} {
		if got, _ := c.Value(name); got != want {
			t.Errorf("%s shows %q; want %q", name, got, want)
		}
	}
	var zero Config
	for name, want := range map[string]string{"listen_port": "0", "enable_reroute": "false",
		"short_async_task_timeout": "0s", "max_packet_size": "0", "app_name": ""} {
		if got, _ := zero.Value(name); got != want {
			t.Errorf("zero %s shows %q; want %q", name, got, want)
		}
	}
}

// hot_upgrade_exit_timeout is microseconds in ODP; a bare number keeps that meaning.
func TestBareMicroseconds(t *testing.T) {
	tests := []struct {
		in   string
		want time.Duration
		ok   bool
	}{
		{"30000000", 30 * time.Second, true},
		{"0", 0, true},
		{"2m", 2 * time.Minute, true},
		{"86400000000", 24 * time.Hour, true},
		{"86400000001", 0, false},
		{"-1", 0, false},
	}
	for _, tt := range tests {
		c, err := Default().With("hot_upgrade_exit_timeout", tt.in)
		if tt.ok != (err == nil) || err == nil && c.HotUpgradeExitTimeout != tt.want {
			t.Errorf("hot_upgrade_exit_timeout=%q: %v, %v; want %v ok=%v", tt.in, c, err, tt.want, tt.ok)
		}
	}
	if c, _ := Default().With("short_async_task_timeout", "30"); c.ShortAsyncTaskTimeout != 30*time.Second {
		t.Errorf("a bare number in other duration items must be seconds, got %v", c.ShortAsyncTaskTimeout)
	}
}

func TestEqualValuesAreDefault(t *testing.T) {
	c, err := Default().With("short_async_task_timeout", "5000ms")
	if err != nil {
		t.Fatal(err)
	}
	it, _ := Lookup("short_async_task_timeout")
	if !it.IsDefault(c) {
		t.Error("5000ms is not seen as the default 5s")
	}
	c, _ = c.With("short_async_task_timeout", "6s")
	if it.IsDefault(c) || it.Equal(c, Default()) {
		t.Error("6s is seen as the default")
	}
}

func TestCrossItemRules(t *testing.T) {
	c := Default()
	if _, err := c.With("proxy_id", "256"); !errors.Is(err, ErrInvalidValue) {
		t.Errorf("proxy_id 256 with session id version 1: %v", err)
	}
	c, err := c.With("client_session_id_version", "2")
	if err != nil {
		t.Fatal(err)
	}
	c, err = c.With("proxy_id", "8000")
	if err != nil {
		t.Fatalf("proxy_id 8000 with version 2: %v", err)
	}
	if _, err := c.With("client_session_id_version", "1"); err == nil {
		t.Error("going back to version 1 with proxy_id 8000 was accepted")
	}
	if _, err := Default().With("enable_client_ssl", "true"); err == nil {
		t.Error("enable_client_ssl without cert and key was accepted")
	}
	c, _ = Default().With("client_ssl_cert_file", "/etc/obgate/cert.pem")
	c, _ = c.With("client_ssl_key_file", "/etc/obgate/key.pem")
	if _, err := c.With("enable_client_ssl", "true"); err != nil {
		t.Errorf("enable_client_ssl with cert and key: %v", err)
	}
}

// validate's rules must only tie items of the same need_reboot class, or a running snapshot
// (which lacks pending reboot values) and its saved successor could disagree.
func TestCrossRulesStayWithinOneRebootClass(t *testing.T) {
	for _, group := range [][]string{
		{"proxy_id", "client_session_id_version"},
		{"enable_client_ssl", "client_ssl_cert_file", "client_ssl_key_file"},
	} {
		first, _ := Lookup(group[0])
		for _, name := range group[1:] {
			if it, _ := Lookup(name); it.NeedReboot() != first.NeedReboot() {
				t.Errorf("%s and %s differ in need_reboot", group[0], name)
			}
		}
	}
}

func TestPasswordFromCommandLine(t *testing.T) {
	const abc = "a9993e364706816aba3e25717850c26c9cd0d89d"
	tests := []struct{ in, want string }{
		{"abc", abc}, // plaintext is hashed
		{abc, abc},   // a hash is kept
		{"A9993E364706816ABA3E25717850C26C9CD0D89D", abc}, // in any case
		{"", ""},                       // no password
		{" abc", HashPassword(" abc")}, // spaces belong to the password
	}
	for _, tt := range tests {
		c, err := Default().With("obproxy_sys_password", tt.in)
		if err != nil {
			t.Fatal(err)
		}
		if c.ObproxySysPassword != tt.want {
			t.Errorf("-o obproxy_sys_password=%q stored %q; want %q", tt.in, c.ObproxySysPassword, tt.want)
		}
	}
}

func TestPasswordFromFile(t *testing.T) {
	it, _ := Lookup("observer_sys_password")
	const abc = "a9993e364706816aba3e25717850c26c9cd0d89d"
	if v, _, err := it.parse(abc, fromFile); err != nil || v != abc {
		t.Errorf("file hash: %v %v", v, err)
	}
	if v, _, err := it.parse(" "+abc+" ", fromFile); err != nil || v != abc {
		t.Errorf("file hash with spaces: %v %v", v, err)
	}
	_, _, err := it.parse("secret", fromFile)
	if err == nil {
		t.Fatal("a plaintext password in the file was accepted")
	}
	if got := err.Error(); strings.Contains(got, "secret") {
		t.Errorf("error %q echoes the password", got)
	}
}

func TestHelpers(t *testing.T) {
	c, err := Default().With("rootservice_list", " 10.0.0.1:2881 ; 10.0.0.2:2881;")
	if err != nil {
		t.Fatal(err)
	}
	if got := c.RootserviceAddrs(); !slices.Equal(got, []string{"10.0.0.1:2881", "10.0.0.2:2881"}) {
		t.Errorf("RootserviceAddrs = %q", got)
	}
	if got := Default().UsernameSeparators(); !slices.Equal(got, []string{":", "-", "."}) {
		t.Errorf("UsernameSeparators = %q", got)
	}
	if got := Default().TestServerAddrs(); got != nil {
		t.Errorf("TestServerAddrs = %q", got)
	}
	if got := Default().ListenAddr(); got != "0.0.0.0:2883" {
		t.Errorf("ListenAddr = %q", got)
	}
	c, _ = Default().With("local_bound_ip", "::1")
	if got := c.ListenAddr(); got != "[::1]:2883" {
		t.Errorf("ListenAddr = %q", got)
	}
	if got := Default().PrometheusAddr(); got != ":2884" {
		t.Errorf("PrometheusAddr = %q", got)
	}
	levels := map[string]slog.Level{"DEBUG": slog.LevelDebug - 4, "WDIAG": slog.LevelInfo - 2,
		"INFO": slog.LevelInfo, "WARN": slog.LevelWarn, "ERROR": slog.LevelError}
	for name, want := range levels {
		c, _ := Default().With("syslog_level", name)
		if got := c.LogLevel(); got != want {
			t.Errorf("LogLevel(%s) = %v; want %v", name, got, want)
		}
	}
	if Default().LogLevel() >= slog.LevelInfo {
		t.Error("default WDIAG must let INFO through")
	}
}
