package config

import (
	"errors"
	"reflect"
	"strings"
	"testing"
	"time"
	"unsafe"
)

func TestEveryItemIsComplete(t *testing.T) {
	for _, it := range Items() {
		if it.Doc() == "" || strings.ContainsAny(it.Doc(), "\n\r") {
			t.Errorf("%s: doc must be one non-empty line", it.Name())
		}
		v, text, err := it.parse(it.Default(), fromFile)
		if err != nil {
			t.Errorf("%s: default %q does not parse: %v", it.Name(), it.Default(), err)
			continue
		}
		if it.get(defaultConfig) != v || it.Value(defaultConfig) != text {
			t.Errorf("%s: default config holds %v/%q, want %v/%q", it.Name(), it.get(defaultConfig),
				it.Value(defaultConfig), v, text)
		}
		if !it.IsDefault(Default()) {
			t.Errorf("%s: IsDefault(Default()) is false", it.Name())
		}
		if got, ok := Lookup(strings.ToUpper(it.Name())); !ok || got != it {
			t.Errorf("Lookup(%q) = %v, %v", strings.ToUpper(it.Name()), got, ok)
		}
		if it.rng != "" && (it.Kind() == KindBool || it.Kind() == KindString || it.Kind() == KindPassword) {
			t.Errorf("%s: a %s item cannot have a range", it.Name(), it.Kind())
		}
	}
}

// TestEveryFieldHasOneItem checks that the registry and the Config struct describe the same
// set of values: each item points at a distinct field, and every exported field is used.
func TestEveryFieldHasOneItem(t *testing.T) {
	var c Config
	base := uintptr(unsafe.Pointer(&c))
	owner := map[uintptr]string{}
	for _, it := range Items() {
		off := reflect.ValueOf(it.ref.ptr(&c)).Pointer() - base
		if prev, dup := owner[off]; dup {
			t.Errorf("items %s and %s share a field", prev, it.Name())
		}
		owner[off] = it.Name()
	}
	ct := reflect.TypeFor[Config]()
	for i := 0; i < ct.NumField(); i++ {
		f := ct.Field(i)
		if !f.IsExported() {
			continue
		}
		if _, ok := owner[f.Offset]; !ok {
			t.Errorf("field %s has no item", f.Name)
		}
	}
}

// TestFieldNamesMatchItems checks the naming rule of the doc comment on Config: the field
// name is the item name in camel case (acronyms aside).
func TestFieldNamesMatchItems(t *testing.T) {
	var c Config
	base := uintptr(unsafe.Pointer(&c))
	ct := reflect.TypeFor[Config]()
	byOffset := map[uintptr]string{}
	for i := 0; i < ct.NumField(); i++ {
		byOffset[ct.Field(i).Offset] = ct.Field(i).Name
	}
	for _, it := range Items() {
		field := byOffset[reflect.ValueOf(it.ref.ptr(&c)).Pointer()-base]
		if got := strings.ToLower(field); got != strings.ReplaceAll(it.Name(), "_", "") {
			t.Errorf("item %s is held by field %s", it.Name(), field)
		}
	}
}

func TestKindFollowsFieldType(t *testing.T) {
	var c Config
	for _, it := range Items() {
		var ok bool
		switch it.ref.ptr(&c).(type) {
		case *bool:
			ok = it.Kind() == KindBool
		case *int64:
			ok = it.Kind() == KindInt || it.Kind() == KindCapacity
		case *time.Duration:
			ok = it.Kind() == KindDuration
		case *string:
			ok = it.Kind() == KindString || it.Kind() == KindPassword
		}
		if !ok {
			t.Errorf("%s: kind %s does not fit its field %T", it.Name(), it.Kind(), it.ref.ptr(&c))
		}
	}
}

func TestRequiredItems(t *testing.T) {
	want := map[string]struct {
		def    string
		reboot bool
	}{
		"listen_port":                         {"2883", true},
		"local_bound_ip":                      {"0.0.0.0", true},
		"prometheus_listen_port":              {"2884", true},
		"enable_prometheus":                   {"true", true},
		"rootservice_list":                    {"", true},
		"rootservice_cluster_name":            {"undefined", true},
		"server_routing_mode":                 {"oceanbase", true}, // ODP: dynamic; obgate builds its server side at start
		"client_max_connections":              {"8192", false},
		"obproxy_sys_password":                {"", false},
		"mysql_version":                       {"", false},
		"username_separator":                  {":;-;.", false},
		"short_async_task_timeout":            {"5s", false},
		"long_async_task_timeout":             {"60s", false},
		"observer_query_timeout_delta":        {"20s", false},
		"default_inactivity_timeout":          {"180000s", false},
		"connect_observer_max_retries":        {"3", false},
		"server_state_refresh_interval":       {"20s", false},
		"congestion_failure_threshold":        {"5", false},
		"congestion_fail_window":              {"120s", false},
		"congestion_retry_interval":           {"20s", false},
		"min_keep_congestion_interval":        {"20s", false},
		"min_congested_connect_timeout":       {"100ms", false},
		"server_detect_mode":                  {"1", false},
		"server_detect_fail_threshold":        {"3", false},
		"server_detect_refresh_interval":      {"1s", false},
		"detect_server_timeout":               {"1s", false}, // ODP: 5s
		"tunnel_request_size_threshold":       {"8KB", false},
		"request_buffer_length":               {"4KB", false},
		"hot_upgrade_exit_timeout":            {"30s", false},
		"enable_compression_protocol":         {"false", false},
		"enable_ob_protocol_v2":               {"true", false},
		"syslog_level":                        {"WDIAG", false},
		"server_tcp_keepcnt":                  {"5", false},
		"client_io_mode":                      {"netpoll", true},
		"client_handshake_timeout":            {"10s", false},
		"enable_client_ssl":                   {"false", false}, // ODP: CFG_NO_NEED_REBOOT
		"enable_server_ssl":                   {"false", false},
		"max_packet_size":                     {"64MB", false},
		"server_idle_timeout":                 {"1m", false},
		"enable_transaction_internal_routing": {"true", false},
	}
	for name, w := range want {
		it, ok := Lookup(name)
		if !ok {
			t.Errorf("missing item %s", name)
			continue
		}
		if it.Default() != w.def || it.NeedReboot() != w.reboot {
			t.Errorf("%s: default %q reboot %v; want %q %v", name, it.Default(), it.NeedReboot(), w.def, w.reboot)
		}
	}
	c := Default()
	if c.ListenPort != 2883 || c.ShortAsyncTaskTimeout != 5*time.Second || c.DefaultInactivityTimeout != 50*time.Hour ||
		c.TunnelRequestSizeThreshold != 8<<10 || c.MaxPacketSize != 64<<20 || c.ObproxySysPassword != "" {
		t.Errorf("Default() fields do not match the table: %+v", c)
	}
}

func TestRanges(t *testing.T) {
	tests := []struct {
		name, value string
		ok          bool
	}{
		{"listen_port", "1025", true},
		{"listen_port", "65535", true},
		{"listen_port", "1024", false},  // open lower end
		{"listen_port", "65536", false}, // open upper end
		{"listen_port", "0", false},
		{"proxy_id", "0", true},
		{"proxy_id", "8191", true},
		{"proxy_id", "8192", false},
		{"proxy_id", "-1", false},
		{"client_max_connections", "0", true},
		{"client_max_connections", "9223372036854775807", true}, // "[0,]" has no upper end
		{"client_max_connections", "-1", false},
		{"connect_observer_max_retries", "1", false},
		{"connect_observer_max_retries", "2", true},
		{"connect_observer_max_retries", "5", true},
		{"connect_observer_max_retries", "6", false},
		{"short_async_task_timeout", "1s", true},
		{"short_async_task_timeout", "999ms", false},
		{"short_async_task_timeout", "3600", true},
		{"short_async_task_timeout", "3601s", false},
		{"short_async_task_timeout", "1h", true},
		{"observer_query_timeout_delta", "31s", false},
		{"server_state_refresh_interval", "10ms", true},
		{"server_state_refresh_interval", "9ms", false},
		{"min_keep_congestion_interval", "1d", true},
		{"min_keep_congestion_interval", "86401s", false},
		{"default_inactivity_timeout", "30d", true},
		{"default_inactivity_timeout", "31d", false},
		{"delay_update_entry_interval", "0", true},
		{"tunnel_request_size_threshold", "0", false}, // "(0,16MB]"
		{"tunnel_request_size_threshold", "1", true},
		{"tunnel_request_size_threshold", "16MB", true},
		{"tunnel_request_size_threshold", "16777217", false},
		{"request_buffer_length", "1023", false},
		{"request_buffer_length", "1KB", true},
		{"max_packet_size", "1GB", true},
		{"max_packet_size", "2GB", false},
		{"proxy_mem_limited", "100G", true}, // "[16MB,]" (ODP: 100MB)
		{"proxy_mem_limited", "15MB", false},
		{"server_detect_mode", "4", false}, {"server_detect_mode", "3", true},
		{"enable_congestion", "maybe", false},
		{"server_routing_mode", "MySQL", true},
		{"server_routing_mode", "direct", false},
		{"client_io_mode", "net", true},
		{"client_io_mode", "epoll", false},
		{"syslog_level", "edIag", true},
		{"syslog_level", "VERBOSE", false},
		{"proxy_route_policy", "", true},
		{"proxy_route_policy", "follower_first", true},
		{"proxy_route_policy", "LEADER_ONLY", false},
		{"compression_algorithm", "zlib:6", true},
		{"compression_algorithm", "lz4:1", false},
		{"compression_algorithm", "zlib:10", false},
		{"local_bound_ip", "::", true},
		{"local_bound_ip", "localhost", false},
		{"rootservice_list", "10.0.0.1:2881;10.0.0.2:2881", true},
		{"rootservice_list", "[::1]:2881;", true},
		{"rootservice_list", "10.0.0.1", false},
		{"rootservice_list", "10.0.0.1:0", false},
		{"test_server_addr", "127.0.0.1:3306", true},
		{"username_separator", ":;-;.", true},
		{"username_separator", "", true},
		{"username_separator", "::", false},
		{"username_separator", "@", false},
		{"mysql_version", "", true}, {"mysql_version", "5.7.25-OceanBase_CE-v4.2.1.0", true},
		{"init_sql", "SET a=1\nSET b=2", false},
		{"init_sql", strings.Repeat("x", 4097), false},
	}
	// Version 2 session ids, so that proxy_id is limited by its own range only.
	base, err := Default().With("client_session_id_version", "2")
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range tests {
		_, err := base.With(tt.name, tt.value)
		if tt.ok != (err == nil) {
			t.Errorf("With(%s, %q) error = %v; want ok=%v", tt.name, tt.value, err, tt.ok)
			continue
		}
		if err == nil {
			continue
		}
		if !errors.Is(err, ErrInvalidValue) || !strings.Contains(err.Error(), tt.name) {
			t.Errorf("With(%s, %q) error %q does not wrap ErrInvalidValue and name the item", tt.name, tt.value, err)
		}
		if it, _ := Lookup(tt.name); it.rng != "" && strings.Contains(err.Error(), "out of range") &&
			!strings.Contains(err.Error(), it.rng) {
			t.Errorf("With(%s, %q) error %q does not show the range %s", tt.name, tt.value, err, it.rng)
		}
	}
}

func TestRangeNotation(t *testing.T) {
	it := &Item{name: "x", ref: intRef(func(c *Config) *int64 { return &c.ProxyID })}
	for _, bad := range []string{"1,2", "[1,2", "[1;2]", "[a,2]", "[1,2s]"} {
		it.rng = bad
		if err := it.parseRange(); err == nil {
			t.Errorf("parseRange(%q) succeeded", bad)
		}
	}
	it.rng = "[1,)"
	if err := it.parseRange(); err != nil || it.inRange(0) == nil || it.inRange(1<<62) != nil {
		t.Errorf("[1,) parsed wrong: %v %+v %+v", err, it.lo, it.hi)
	}
	s := &Item{name: "s", ref: strRef(func(c *Config) *string { return &c.AppName }), rng: "[1,2]"}
	if err := s.parseRange(); err == nil {
		t.Error("a string item accepted a range")
	}
}

func TestItemStrings(t *testing.T) {
	if KindCapacity.String() != "capacity" || Kind(99).String() != "Kind(99)" {
		t.Error("Kind.String")
	}
	if LevelSys.String() != "SYS" || LevelUser.String() != "USER" || LevelDBA.String() != "DBA" {
		t.Error("Level.String")
	}
	it, _ := Lookup("proxy_route_policy")
	if got := it.Range(); got != "''|FOLLOWER_FIRST|UNMERGE_FOLLOWER_FIRST|FOLLOWER_ONLY|FORCE_READONLY_ZONE" {
		t.Errorf("Range() = %q", got)
	}
	it, _ = Lookup("listen_port")
	if it.Range() != "(1024,65536)" || it.Level() != LevelSys || it.Kind() != KindInt {
		t.Errorf("listen_port: %q %v %v", it.Range(), it.Level(), it.Kind())
	}
	if _, ok := Lookup("no_such_item"); ok {
		t.Error("Lookup found an unknown item")
	}
}

func TestMarkdownTable(t *testing.T) {
	md := MarkdownTable()
	lines := strings.Split(strings.TrimSuffix(md, "\n"), "\n")
	if len(lines) != len(Items())+2 {
		t.Fatalf("got %d lines, want %d", len(lines), len(Items())+2)
	}
	for i, line := range lines {
		// Every row has the same number of unescaped cell separators.
		if n := strings.Count(line, "|") - strings.Count(line, `\|`); n != 7 {
			t.Errorf("line %d has %d separators: %s", i+1, n, line)
		}
	}
	for _, want := range []string{
		"| `listen_port` | int | `2883` | `(1024,65536)` | yes |",
		"| `obproxy_sys_password` | password | \"\" |  |  |",
		"`''\\|FOLLOWER_FIRST\\|UNMERGE_FOLLOWER_FIRST\\|FOLLOWER_ONLY\\|FORCE_READONLY_ZONE`",
	} {
		if !strings.Contains(md, want) {
			t.Errorf("table lacks %q", want)
		}
	}
}
