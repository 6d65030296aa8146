package admin

import "testing"

func TestParseViews(t *testing.T) {
	none := func(c command) command {
		if c.limit == 0 {
			c.limit = -1
		}
		if c.logID == 0 {
			c.logID = -1
		}
		if c.threadID == 0 {
			c.threadID = -1
		}
		return c
	}
	cases := []struct {
		sql  string
		want command
	}{
		{"show proxystat", command{kind: cmdShowStat}},
		{"SHOW PROXYSTAT REFRESH", command{kind: cmdShowStat, refresh: true}},
		{"show proxystat refresh like 'current%'", command{kind: cmdShowStat, refresh: true, like: "current%", hasLike: true}},
		{"show proxystat like 'total_query_count';", command{kind: cmdShowStat, like: "total_query_count", hasLike: true}},
		{"show proxyinfo binary", none(command{kind: cmdShowInfoBinary})},
		{"SHOW PROXYINFO UPGRADE", none(command{kind: cmdShowInfoUpgrade})},
		{"show proxyinfo idc", none(command{kind: cmdShowInfoIDC})},
		{"show proxymemory", none(command{kind: cmdShowMemory})},
		{"show proxymemory 10", none(command{kind: cmdShowMemory, id: 10, hasID: true})},
		{"show proxymemory objpool", none(command{kind: cmdShowMemoryObjpool})},
		{"show proxymemory objpool 3", none(command{kind: cmdShowMemoryObjpool, id: 3, hasID: true})},
		{"show proxymemory objpool like 'size%'", none(command{kind: cmdShowMemoryObjpool, like: "size%", hasLike: true})},
		{"show proxynet thread", none(command{kind: cmdShowNetThread})},
		{"show proxynet connection", none(command{kind: cmdShowNetConnection})},
		{"show proxynet connection 0", none(command{kind: cmdShowNetConnection, hasID: true})},
		{"show proxynet connection 2 limit 5", none(command{kind: cmdShowNetConnection, id: 2, hasID: true, limit: 5})},
		{"show proxynet connection 0 limit 3,4", none(command{kind: cmdShowNetConnection, hasID: true, offset: 3, limit: 4})},
		{"show proxynet connection 0 LIMIT 4 OFFSET 3", none(command{kind: cmdShowNetConnection, hasID: true, offset: 3, limit: 4})},
		{"show proxycluster", none(command{kind: cmdShowCluster})},
		{"show proxycluster like 'ob%'", none(command{kind: cmdShowCluster, like: "ob%", hasLike: true})},
		{"show proxycluster idc", none(command{kind: cmdShowClusterIDC})},
		{"show proxycluster idc like 'c1'", none(command{kind: cmdShowClusterIDC, like: "c1", hasLike: true})},
		{"show proxyresource", none(command{kind: cmdShowResource})},
		{"show proxyresource like 'c%'", none(command{kind: cmdShowResource, like: "c%", hasLike: true})},
		{"show warnlog", none(command{kind: cmdShowWarnlog})},
		{"show warnlog 5", command{kind: cmdShowWarnlog, limit: -1, logID: 5, threadID: -1}},
		{"show warnlog 5, 0", command{kind: cmdShowWarnlog, limit: -1, logID: 5, threadID: 0}},
		{"show warnlog 5,1,'2026-12-02 07:00:00'", command{kind: cmdShowWarnlog, limit: -1, logID: 5, threadID: 1, since: "2026-12-02 07:00:00"}},
		{"show warnlog 0, 0, 1700000000000000", command{kind: cmdShowWarnlog, limit: -1, logID: 0, threadID: 0, since: "1700000000000000"}},
		{"kill proxysession 7 9", command{kind: cmdKillSession, id: 7, hasID: true, ssid: 9, hasSSID: true}},
		{"show proxysession variables all", command{kind: cmdShowSessionVariables, all: true}},

		{"show proxyinfo", command{}},
		{"show proxyinfo binaryx", command{}},
		{"show proxymemory objpool x", command{}},
		{"show proxynet", command{}},
		{"show proxynet threads", command{}},
		{"show proxynet connection 0 limit", command{}},
		{"show proxynet connection 0 limit 1,", command{}},
		{"show proxynet connection 0 limit 1 offset", command{}},
		{"show proxynet connection limit 1", command{}},
		{"show proxycluster idc idc", command{}},
		{"show proxyresource x", command{}},
		{"show warnlog 5,", command{}},
		{"show warnlog 5, 1,", command{}},
		{"show warnlog 5 1", command{}},
		{"show warnlog 'x'", command{}},
		{"show proxystat refresh refresh", command{}},
		{"kill proxysession 1 2 3", command{}},
	}
	for _, c := range cases {
		got := parseCommand(c.sql)
		if c.want.kind == cmdUnknown {
			if got.kind != cmdUnknown {
				t.Errorf("parseCommand(%q) = %+v, want unknown", c.sql, got)
			}
			continue
		}
		if got.kind != c.want.kind || got.like != c.want.like || got.hasLike != c.want.hasLike ||
			got.refresh != c.want.refresh || got.all != c.want.all || got.id != c.want.id || got.hasID != c.want.hasID ||
			got.ssid != c.want.ssid || got.hasSSID != c.want.hasSSID ||
			(c.want.limit != 0 && (got.limit != c.want.limit || got.offset != c.want.offset)) ||
			(c.want.kind == cmdShowWarnlog && (got.logID != c.want.logID || got.threadID != c.want.threadID || got.since != c.want.since)) {
			t.Errorf("parseCommand(%q) = %+v, want %+v", c.sql, got, c.want)
		}
	}
}

func TestParseWarnlogTime(t *testing.T) {
	for _, s := range []string{"2026-12-02 07:00:00", "2026-12-02 07:00:00.123456", "2026-12-02 07:00", "1700000000000000"} {
		if _, ok := parseWarnlogTime(s); !ok {
			t.Errorf("parseWarnlogTime(%q) failed", s)
		}
	}
	for _, s := range []string{"yesterday", "12:00", "2026-13-02 07:00:00", "1.5"} {
		if _, ok := parseWarnlogTime(s); ok {
			t.Errorf("parseWarnlogTime(%q) succeeded", s)
		}
	}
}
