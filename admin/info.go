package admin

import (
	"crypto/md5"
	"encoding/hex"
	"io"
	"os"
	"runtime"
	"runtime/debug"
	"strings"
	"sync"

	"obgate/mysqlproto"
)

// selfMD5 is the MD5 of obgate's own executable, as ODP's SHOW PROXYINFO
// BINARY shows its binary's; computed once, on first use.
var selfMD5 = sync.OnceValue(func() string {
	path, err := os.Executable()
	if err != nil {
		return ""
	}
	f, err := os.Open(path)
	if err != nil {
		return ""
	}
	defer f.Close()
	h := md5.New()
	if _, err := io.Copy(h, f); err != nil {
		return ""
	}
	return hex.EncodeToString(h.Sum(nil))
})

// binaryInfo is SHOW PROXYINFO BINARY's info text, in ODP's layout
// (name-version line, then version, MD5, REVISION, BUILD_TIME and
// BUILD_FLAGS lines). It comes from the Go runtime's build information:
// version is the Go toolchain and platform, REVISION and BUILD_TIME the
// VCS revision and commit time the binary was built from (empty when it
// was built outside a checkout, "-dirty" marks uncommitted changes), and
// BUILD_FLAGS the build settings (tags, ldflags, CGO_ENABLED, GOARCH ...).
func (a *Admin) binaryInfo() string {
	var rev, when, dirty string
	var flags []string
	if bi, ok := debug.ReadBuildInfo(); ok {
		for _, s := range bi.Settings {
			switch s.Key {
			case "vcs.revision":
				rev = s.Value
			case "vcs.time":
				when = s.Value
			case "vcs.modified":
				if s.Value == "true" {
					dirty = "-dirty"
				}
			case "vcs":
			default:
				flags = append(flags, s.Key+"="+s.Value)
			}
		}
	}
	if rev != "" {
		rev += dirty
	}
	var sb strings.Builder
	sb.WriteString("obgate-" + a.srv.Version() + "\n")
	sb.WriteString("version:" + runtime.Version() + " " + runtime.GOOS + "/" + runtime.GOARCH + "\n")
	sb.WriteString("MD5:" + selfMD5() + "\n")
	sb.WriteString("REVISION:" + rev + "\n")
	sb.WriteString("BUILD_TIME:" + when + "\n")
	sb.WriteString("BUILD_FLAGS:" + strings.Join(flags, " "))
	return sb.String()
}

// showInfo answers SHOW PROXYINFO BINARY and UPGRADE: one row with ODP's
// columns name and info.
func (a *Admin) showInfo(c command) *mysqlproto.ResultSet {
	rs := newResultSet([]string{"name", "info"})
	if c.kind == cmdShowInfoBinary {
		rs.Rows = append(rs.Rows, []any{"binary info", a.binaryInfo()})
	} else {
		rs.Rows = append(rs.Rows, []any{"hot upgrade info", a.upgradeInfoText()})
	}
	return rs
}

// showInfoIDC answers SHOW PROXYINFO IDC with ODP's columns: per cluster,
// how proxy_idc_name matched its zones (by a zone's IDC, else by zone-name
// prefix, as LDC routing does) and the zones of each LDC class. Before a
// cluster's first metadata load its lists are empty.
func (a *Admin) showInfoIDC(c command) *mysqlproto.ResultSet {
	rs := newResultSet([]string{"global_idc_name", "cluster_name", "match_type", "regions_name",
		"same_idc", "same_region", "other_region"})
	idc := a.srv.Config().Load().ProxyIDCName
	for _, cl := range a.clusters(c) {
		match, regions, same, region, other := "MATCHED_BY_NONE", "[]", "[]", "[]", "[]"
		if t := cl.Table(); t != nil {
			r := t.LDCReport(idc)
			match, regions, same, region, other = r.MatchType, nameList(r.Regions), nameList(r.SameIDC),
				nameList(r.SameRegion), nameList(r.OtherRegion)
		}
		rs.Rows = append(rs.Rows, []any{idc, cl.Name(), match, regions, same, region, other})
	}
	return rs
}

// nameList prints names as ODP prints an array of strings: ["a", "b"].
func nameList(names []string) string {
	var sb strings.Builder
	sb.WriteByte('[')
	for i, n := range names {
		if i > 0 {
			sb.WriteString(", ")
		}
		sb.WriteByte('"')
		sb.WriteString(n)
		sb.WriteByte('"')
	}
	sb.WriteByte(']')
	return sb.String()
}
