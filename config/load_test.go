package config

import (
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"
)

func TestParseOptStr(t *testing.T) {
	tests := []struct {
		in      string
		want    []Override
		wantErr string
	}{
		{in: "", want: nil},
		{in: "listen_port=2999", want: []Override{{"listen_port", "2999", "-o"}}},
		{
			in:   "enable_reroute=true,short_async_task_timeout=3s",
			want: []Override{{"enable_reroute", "true", "-o"}, {"short_async_task_timeout", "3s", "-o"}},
		},
		{
			in:   "enable_reroute=true\nshort_async_task_timeout=3s\n",
			want: []Override{{"enable_reroute", "true", "-o"}, {"short_async_task_timeout", "3s", "-o"}},
		},
		{
			in: " Enable_Reroute = false ,, rootservice_list=1.1.1.1:2881;2.2.2.2:2881,",
			want: []Override{{"enable_reroute", "false", "-o"},
				{"rootservice_list", "1.1.1.1:2881;2.2.2.2:2881", "-o"}},
		},
		{
			in: "obproxy_sys_password='0123456789abcdef0123456789abcdef01234567',proxy_tenant_name=\"t1\",init_sql=a=b",
			want: []Override{{"obproxy_sys_password", "0123456789abcdef0123456789abcdef01234567", "-o"},
				{"proxy_tenant_name", "t1", "-o"}, {"init_sql", "a=b", "-o"}},
		},
		{in: "proxy_tenant_name=", want: []Override{{"proxy_tenant_name", "", "-o"}}},
		{in: "listen_port", wantErr: "want name=value"},
		{in: "=5", wantErr: "want name=value"},
		{in: "listen_port=1,no_such_item=2", wantErr: "unknown config item"},
	}
	for _, tt := range tests {
		got, err := parseOptStr(tt.in)
		if tt.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Errorf("parseOptStr(%q) = %v, %v; want error %q", tt.in, got, err, tt.wantErr)
			}
			continue
		}
		if err != nil || !reflect.DeepEqual(got, tt.want) {
			t.Errorf("parseOptStr(%q) = %v, %v; want %v", tt.in, got, err, tt.want)
		}
	}
}

func TestParseArgs(t *testing.T) {
	opts, err := ParseArgs([]string{
		"-p", "2999", "-l2995", "--rs_list=10.0.0.1:2881;10.0.0.2:2881", "-c", "c1", "-n", "app1",
		"-o", "listen_port=3000,enable_reroute=true", "-o", "proxy_id=7", "-N", "--config-dir", "/tmp/x",
	})
	if err != nil {
		t.Fatal(err)
	}
	want := []Override{
		{"listen_port", "3000", "-o"},
		{"enable_reroute", "true", "-o"},
		{"proxy_id", "7", "-o"},
		{"listen_port", "2999", "-p/--listen_port"},
		{"prometheus_listen_port", "2995", "-l/--prometheus_listen_port"},
		{"rootservice_list", "10.0.0.1:2881;10.0.0.2:2881", "-r/--rs_list"},
		{"rootservice_cluster_name", "c1", "-c/--cluster_name"},
		{"app_name", "app1", "-n/--appname"},
	}
	if !reflect.DeepEqual(opts.Overrides, want) {
		t.Errorf("Overrides =\n%v\nwant\n%v", opts.Overrides, want)
	}
	if opts.ConfigDir != "/tmp/x" || !opts.NoDaemon || opts.Version || opts.Help {
		t.Errorf("opts = %+v", opts)
	}

	opts, err = ParseArgs(nil)
	if err != nil || opts.ConfigDir != DefaultConfigDir || len(opts.Overrides) != 0 {
		t.Errorf("no args: %+v, %v", opts, err)
	}
	opts, err = ParseArgs([]string{"-V"})
	if err != nil || !opts.Version {
		t.Errorf("-V: %+v, %v", opts, err)
	}
	opts, err = ParseArgs([]string{"--help"})
	if err != nil || !opts.Help {
		t.Errorf("--help: %+v, %v", opts, err)
	}
	for _, bad := range [][]string{{"-x"}, {"--listen-port", "1"}, {"extra"}, {"-o", "nope=1"}, {"-p"}} {
		if _, err := ParseArgs(bad); err == nil {
			t.Errorf("ParseArgs(%q) succeeded", bad)
		}
	}
	u := Usage()
	for _, want := range []string{"-p, --listen_port", "-o, --optstr", "-N, --nodaemon", "--config-dir", "-r, --rs_list"} {
		if !strings.Contains(u, want) {
			t.Errorf("Usage lacks %q:\n%s", want, u)
		}
	}
}

func writeConf(t *testing.T, dir, body string) {
	t.Helper()
	if err := os.WriteFile(filepath.Join(dir, FileName), []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
}

// TestLoadPrecedence: flags override -o, which overrides the file, which overrides defaults.
func TestLoadPrecedence(t *testing.T) {
	dir := t.TempDir()
	writeConf(t, dir, "listen_port = 3001\nprometheus_listen_port = 3101\nproxy_tenant_name = fromfile\n"+
		"client_max_connections = 11\n")
	opts, err := ParseArgs([]string{"--config-dir", dir, "-p", "3003",
		"-o", "listen_port=3002,prometheus_listen_port=3102,client_max_connections=22"})
	if err != nil {
		t.Fatal(err)
	}
	s, err := Load(opts)
	if err != nil {
		t.Fatal(err)
	}
	c := s.Load()
	if c.ListenPort != 3003 || c.PrometheusListenPort != 3102 || c.ProxyTenantName != "fromfile" ||
		c.ClientMaxConnections != 22 || c.ShortAsyncTaskTimeout != 5*time.Second {
		t.Errorf("got port %d, prometheus %d, tenant %q, max conns %d, timeout %v",
			c.ListenPort, c.PrometheusListenPort, c.ProxyTenantName, c.ClientMaxConnections, c.ShortAsyncTaskTimeout)
	}
	if s.Path() != filepath.Join(dir, FileName) {
		t.Errorf("Path = %q", s.Path())
	}
}

// TestLoadWritesFile: Load dumps every non-default value, which a later Load reads back.
func TestLoadWritesFile(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "etc", "nested")
	opts := &Options{ConfigDir: dir, Overrides: []Override{
		{Name: "default_inactivity_timeout", Value: "3600s", From: "-o"},
		{Name: "observer_sys_password", Value: "abc", From: "-o"},
		{Name: "short_async_task_timeout", Value: "5000ms", From: "-o"}, // equal to the default
	}}
	if _, err := Load(opts); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(filepath.Join(dir, FileName))
	if err != nil {
		t.Fatal(err)
	}
	text := string(data)
	if !strings.HasPrefix(text, "# obgate configuration, written by obgate") ||
		!strings.Contains(text, "may edit it while obgate is stopped") {
		t.Errorf("file lacks the header:\n%s", text)
	}
	var body []string
	for _, line := range strings.Split(text, "\n") {
		if line != "" && !strings.HasPrefix(line, "#") {
			body = append(body, line)
		}
	}
	want := []string{
		"default_inactivity_timeout = 3600s",
		"observer_sys_password = a9993e364706816aba3e25717850c26c9cd0d89d",
	}
	if !reflect.DeepEqual(body, want) {
		t.Errorf("file body = %q; want %q", body, want)
	}
	if fi, err := os.Stat(filepath.Join(dir, FileName)); err != nil || fi.Mode().Perm() != 0o600 {
		t.Errorf("file mode %v, %v; want 0600", fi.Mode(), err)
	}

	s, err := Load(&Options{ConfigDir: dir})
	if err != nil {
		t.Fatal(err)
	}
	if c := s.Load(); c.DefaultInactivityTimeout != time.Hour ||
		c.ObserverSysPassword != "a9993e364706816aba3e25717850c26c9cd0d89d" {
		t.Errorf("reloaded %v %q", c.DefaultInactivityTimeout, c.ObserverSysPassword)
	}
}

func TestLoadFileProblems(t *testing.T) {
	tests := []struct {
		name, body  string
		wantErr     string // "" = loads
		wantWarning string
	}{
		{name: "unknown name warns", body: "# c\nfrequent_accept = true\nlisten_port = 3000\n",
			wantWarning: `obgate.conf:2: unknown config item "frequent_accept" skipped`},
		{name: "empty file", body: ""},
		{name: "comments and blanks", body: "\ufeff# bom\n  # x = y\n\r\n"},
		{name: "crlf", body: "listen_port = 3000\r\nenable_reroute=true\r\n"},
		{name: "invalid value", body: "listen_port = 80\n", wantErr: "obgate.conf:1"},
		{name: "range named", body: "\n\nconnect_observer_max_retries = 9\n", wantErr: "[2,5]"},
		{name: "no equals", body: "listen_port 3000\n", wantErr: "line 1: want name = value"},
		{name: "space in name", body: "listen port = 3000\n", wantErr: "line 1: item name"},
		{name: "plaintext password", body: "obproxy_sys_password = secret\n", wantErr: "obproxy_sys_password"},
		{name: "cross rule", body: "proxy_id = 1000\n", wantErr: "client_session_id_version"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			writeConf(t, dir, tt.body)
			s, err := Load(&Options{ConfigDir: dir})
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Errorf("Load = %v; want error containing %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			w := s.Warnings()
			if tt.wantWarning == "" && len(w) != 0 || tt.wantWarning != "" && (len(w) != 1 || !strings.HasSuffix(w[0], tt.wantWarning)) {
				t.Errorf("warnings %q; want %q", w, tt.wantWarning)
			}
		})
	}
}

func TestLoadOverrideErrors(t *testing.T) {
	tests := []struct {
		ov   Override
		want string
	}{
		{Override{"listen_port", "99999", "-p/--listen_port"}, "-p/--listen_port: invalid config value: listen_port"},
		{Override{"nope", "1", "-o"}, "unknown config item"},
		{Override{"server_routing_mode", "direct", "-o"}, "oceanbase|mysql|random|mock"},
	}
	for _, tt := range tests {
		_, err := Load(&Options{ConfigDir: t.TempDir(), Overrides: []Override{tt.ov}})
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("Load(%v) = %v; want error containing %q", tt.ov, err, tt.want)
		}
	}
	_, err := Load(&Options{ConfigDir: t.TempDir(), Overrides: []Override{{"nope", "1", "-o"}}})
	if !errors.Is(err, ErrUnknownItem) {
		t.Errorf("unknown override error %v does not wrap ErrUnknownItem", err)
	}
}

// ODP start scripts order -o so that proxy_id comes after client_session_id_version; the
// rule between them is checked on the final result, so any order works.
func TestLoadCrossRuleUsesFinalValues(t *testing.T) {
	opts, err := ParseArgs([]string{"--config-dir", t.TempDir(), "-o", "proxy_id=4000,client_session_id_version=2"})
	if err != nil {
		t.Fatal(err)
	}
	s, err := Load(opts)
	if err != nil {
		t.Fatal(err)
	}
	if c := s.Load(); c.ProxyID != 4000 || c.ClientSessionIDVersion != 2 {
		t.Errorf("proxy_id %d version %d", c.ProxyID, c.ClientSessionIDVersion)
	}
}

func TestLoadNilOptions(t *testing.T) {
	t.Chdir(t.TempDir())
	s, err := Load(nil)
	if err != nil {
		t.Fatal(err)
	}
	if s.Path() != filepath.Join(DefaultConfigDir, FileName) {
		t.Errorf("Path = %q", s.Path())
	}
	if _, err := os.Stat(s.Path()); err != nil {
		t.Error(err)
	}
}
