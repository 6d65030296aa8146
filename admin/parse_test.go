package admin

import "testing"

func TestParseCommand(t *testing.T) {
	cases := []struct {
		sql  string
		want command
	}{
		{"show proxyconfig", command{kind: cmdShowConfig}},
		{"SHOW PROXYCONFIG LIKE 'client%';", command{kind: cmdShowConfig, like: "client%", hasLike: true}},
		{"show proxyconfig diff user like 'x'", command{kind: cmdShowConfig, diff: true, user: true, like: "x", hasLike: true}},
		{"alter proxyconfig set client_max_connections = 10", command{kind: cmdAlterConfig, name: "client_max_connections", value: "10"}},
		{"ALTER PROXYCONFIG SET obproxy_sys_password = 'se cret'", command{kind: cmdAlterConfig, name: "obproxy_sys_password", value: "se cret"}},
		{"alter proxyconfig set short_async_task_timeout=10s", command{kind: cmdAlterConfig, name: "short_async_task_timeout", value: "10s"}},
		{"show proxysession", command{kind: cmdShowSession}},
		{"show proxysession attribute 12", command{kind: cmdShowSessionAttribute, id: 12, hasID: true}},
		{"show proxysession variables all 3 like 'auto%'", command{kind: cmdShowSessionVariables, all: true, id: 3, hasID: true, like: "auto%", hasLike: true}},
		{"kill proxysession 7", command{kind: cmdKillSession, id: 7, hasID: true}},
		{"kill proxysession 7 9", command{kind: cmdKillSession, id: 7, hasID: true, ssid: 9, hasSSID: true}},
		{"ping proxy", command{kind: cmdPing}},
		{"select proxy_version()", command{kind: cmdProxyVersion}},
		{"SELECT PROXY_VERSION() AS v", command{kind: cmdProxyVersion}},
		{"select proxy_status()", command{kind: cmdProxyStatus}},
		{"select @@version_comment limit 1", command{kind: cmdSelectVars, vars: []string{"@@version_comment"}}},
		{"show proxycongestion all demo", command{kind: cmdShowCongestion, all: true, cluster: "demo"}},
		{"SHOW PROXYCONGESTION 'demo'", command{kind: cmdShowCongestion, cluster: "demo"}},
		{"set autocommit=0", command{kind: cmdNeedOK}},
		{"kill proxysession", command{}},
		{"show proxyconfig like", command{}},
		{"alter proxyconfig set x", command{}},
		{"select proxy_version( ", command{}},
		{"select 1", command{}},
		{"show proxyconfig trailing junk", command{}},
	}
	for _, c := range cases {
		got := parseCommand(c.sql)
		if got.kind != c.want.kind || got.like != c.want.like || got.hasLike != c.want.hasLike ||
			got.diff != c.want.diff || got.user != c.want.user || got.all != c.want.all ||
			got.name != c.want.name || got.value != c.want.value || got.id != c.want.id ||
			got.hasID != c.want.hasID || got.ssid != c.want.ssid || got.cluster != c.want.cluster ||
			len(got.vars) != len(c.want.vars) {
			t.Errorf("parseCommand(%q) = %+v, want %+v", c.sql, got, c.want)
		}
	}
}

func TestMatchLike(t *testing.T) {
	cases := []struct {
		p, s string
		want bool
	}{
		{"client%", "client_max_connections", true},
		{"CLIENT%", "client_max_connections", true},
		{"%connections", "client_max_connections", true},
		{"%max%", "client_max_connections", true},
		{"client_max_connection_", "client_max_connections", true},
		{"client", "client_max_connections", false},
		{"a\\_b", "a_b", true},
		{"a\\_b", "axb", false},
		{"%", "", true},
		{"_", "", false},
		{"%a%a%a%a%a%b", "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa", false},
	}
	for _, c := range cases {
		if got := matchLike(c.p, c.s); got != c.want {
			t.Errorf("matchLike(%q, %q) = %v", c.p, c.s, got)
		}
	}
}

func FuzzParseCommand(f *testing.F) {
	for _, s := range []string{"show proxyconfig like 'a%'", "alter proxyconfig set a = 'b'", "kill proxysession 1 2",
		"select @@a, @@b limit 1", "'unterminated", "/* x", "select proxy_version() as v", "show proxycongestion all c",
		"show proxystat refresh like 'cur%'", "show proxyinfo binary", "show proxyinfo idc", "show proxymemory objpool 2",
		"show proxynet connection 0 limit 2,3", "show proxynet connection 1 limit 2 offset 1", "show proxynet thread",
		"show proxycluster idc like 'c'", "show proxyresource", "show warnlog 1, 0, '2026-01-01 00:00:00'"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		_ = parseCommand(s)
		_ = matchLike(s, s)
	})
}
