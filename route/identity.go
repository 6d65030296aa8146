package route

import (
	"strconv"
	"strings"
)

// Identity is what a login username says: ODP's `user@tenant#cluster:id`
// or its separator form `cluster:tenant:user`.
type Identity struct {
	User      string
	Tenant    string // "" when the name gives none
	Cluster   string // "" when the name gives none
	ClusterID int64  // -1 when the name gives none
}

// Special tenants and users.
const (
	TenantProxySys = "proxysys"
	UserRoot       = "root"
	UserInspector  = "inspector"
)

// IsProxySys reports whether the identity is an obgate administrator
// (root@proxysys) or the read-only inspector (inspector@proxysys).
func (id Identity) IsProxySys() bool { return id.Tenant == TenantProxySys }

// FullUser is the name sent to an OBServer: user@tenant.
func (id Identity) FullUser() string {
	if id.Tenant == "" {
		return id.User
	}
	return id.User + "@" + id.Tenant
}

// DefaultSeparators are ODP's default username separators (`:;-;.`).
var DefaultSeparators = []string{":", "-", "."}

// ParseUsername reads an identity from a login name. A name with '@' or
// '#' uses the standard form user@tenant#cluster:cluster_id, any part of
// which may be missing. Otherwise, when one of seps occurs at least twice,
// the name is cluster<sep>tenant<sep>user, optionally followed by
// <sep>cluster_id or :cluster_id. Anything else is a plain user name.
func ParseUsername(name string, seps []string) Identity {
	id := Identity{ClusterID: -1}
	if strings.ContainsAny(name, "@#") {
		rest := name
		i := strings.IndexAny(rest, "@#")
		id.User, rest = rest[:i], rest[i:]
		if strings.HasPrefix(rest, "@") {
			rest = rest[1:]
			j := strings.IndexByte(rest, '#')
			if j < 0 {
				id.Tenant, rest = rest, ""
			} else {
				id.Tenant, rest = rest[:j], rest[j:]
			}
		}
		if strings.HasPrefix(rest, "#") {
			rest = rest[1:]
			id.Cluster, id.ClusterID = splitClusterID(rest, ":")
		}
		return id
	}
	for _, sep := range seps {
		if sep == "" || strings.Count(name, sep) < 2 {
			continue
		}
		parts := strings.SplitN(name, sep, 4)
		id.Cluster, id.Tenant = parts[0], parts[1]
		if len(parts) == 4 {
			id.User = parts[2]
			if n, err := strconv.ParseInt(parts[3], 10, 64); err == nil {
				id.ClusterID = n
			} else {
				id.User = parts[2] + sep + parts[3]
			}
			return id
		}
		id.User, id.ClusterID = splitClusterID(parts[2], ":")
		if id.ClusterID < 0 {
			id.User = parts[2]
		}
		return id
	}
	id.User = name
	return id
}

// splitClusterID splits "name<sep>123" into name and id; id is -1 when
// absent or not a number (then the whole string is the name).
func splitClusterID(s, sep string) (string, int64) {
	i := strings.LastIndex(s, sep)
	if i < 0 {
		return s, -1
	}
	n, err := strconv.ParseInt(s[i+len(sep):], 10, 64)
	if err != nil {
		return s, -1
	}
	return s[:i], n
}
