package route

import (
	"net"
	"strconv"
	"strings"
	"time"

	"obgate/internal/topology"
)

// serverStateOf maps the raw columns to a state, in ODP's order: stop_time
// first, then not-in-service, then the status word.
func serverStateOf(status string, inService, stopped bool) (topology.ServerState, bool) {
	st := strings.ToLower(status)
	switch st {
	case "active", "inactive", "deleting":
	case "takeover_by_rs":
		st = "inactive"
	default:
		return 0, false
	}
	switch {
	case stopped:
		return topology.ServerUpgrade, true
	case !inService && st == "active":
		return topology.ServerReplay, true
	case !inService:
		return topology.ServerInactive, true
	case st == "inactive":
		return topology.ServerInactive, true
	case st == "deleting":
		return topology.ServerDeleting, true
	}
	return topology.ServerActive, true
}

// Tenant is one tenant of a cluster.
type Tenant struct {
	Name        string
	ID          int64
	Locality    string
	PrimaryZone string
	Status      string
}

// Table is an immutable snapshot of what obgate knows about one cluster.
// A new Table replaces the old one atomically; readers never see a
// partial update and never wait for a refresh.
type Table struct {
	Cluster   string
	ClusterID int64
	Version   string // ob_version()
	Servers   []*topology.Server
	Zones     map[string]*topology.Zone
	Tenants   map[string]*Tenant
	// SysVars are the cluster's global system variable values
	// (__all_virtual_proxy_sys_variable), e.g. ob_query_timeout.
	SysVars   map[string]string
	Refreshed time.Time
	// Generation increases with every published snapshot.
	Generation uint64

	byAddr   map[string]*topology.Server
	allAddrs []string // every server's address, in Servers order
	ldcLast  ldcCache // the LDC view of the last IDC name asked for
	// hasReadOnly says that some zone is a ReadOnly zone.
	hasReadOnly bool
}

// Server returns the server with the given SQL address.
func (t *Table) Server(addr string) (*topology.Server, bool) {
	s, ok := t.byAddr[addr]
	return s, ok
}

// Tenant returns the named tenant. The sys tenant is always present.
func (t *Table) Tenant(name string) (*Tenant, bool) {
	if strings.EqualFold(name, topology.TenantSys) {
		if ten, ok := t.Tenants[topology.TenantSys]; ok {
			return ten, true
		}
		return &Tenant{Name: topology.TenantSys, ID: 1}, true
	}
	ten, ok := t.Tenants[name]
	return ten, ok
}

func (t *Table) index() {
	t.byAddr = make(map[string]*topology.Server, len(t.Servers))
	t.allAddrs = make([]string, 0, len(t.Servers))
	for _, s := range t.Servers {
		t.byAddr[s.Addr] = s
		t.allAddrs = append(t.allAddrs, s.Addr)
	}
	for _, z := range t.Zones {
		if z.Type == "ReadOnly" {
			t.hasReadOnly = true
		}
	}
}

// joinHostPort formats ip and port as an address.
func joinHostPort(ip string, port int) string { return net.JoinHostPort(ip, strconv.Itoa(port)) }
