package route

import (
	"net"
	"strconv"
	"strings"
	"time"
)

// ServerState is a server's state as read from DBA_OB_SERVERS, mapped as
// ODP maps it (odp-behaviour.md §1.4).
type ServerState uint8

const (
	ServerActive   ServerState = iota // status active, in service
	ServerInactive                    // status inactive, or not in service and not active
	ServerReplay                      // active but not yet in service (start_service_time unset)
	ServerUpgrade                     // stop_time set: being stopped or upgraded
	ServerDeleting                    // status deleting
)

var serverStateNames = [...]string{"ACTIVE", "INACTIVE", "REPLAY", "UPGRADE", "DELETING"}

func (s ServerState) String() string {
	if int(s) < len(serverStateNames) {
		return serverStateNames[s]
	}
	return "UNKNOWN"
}

// serverStateOf maps the raw columns to a state, in ODP's order: stop_time
// first, then not-in-service, then the status word.
func serverStateOf(status string, inService, stopped bool) (ServerState, bool) {
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
		return ServerUpgrade, true
	case !inService && st == "active":
		return ServerReplay, true
	case !inService:
		return ServerInactive, true
	case st == "inactive":
		return ServerInactive, true
	case st == "deleting":
		return ServerDeleting, true
	}
	return ServerActive, true
}

// ZoneState is a zone's status as ODP sees it.
type ZoneState uint8

const (
	ZoneActive  ZoneState = iota
	ZoneUpgrade           // status INACTIVE: the zone is being upgraded or stopped
)

func (z ZoneState) String() string {
	if z == ZoneUpgrade {
		return "UPGRADE"
	}
	return "ACTIVE"
}

// Zone is one zone of a cluster.
type Zone struct {
	Name   string
	State  ZoneState
	Region string
	IDC    string
	Type   string // ReadWrite, ReadOnly or Encryption
}

// Server is one OBServer of a cluster.
type Server struct {
	Addr    string // ip:sql_port, the address obgate connects to
	RPCPort int
	Zone    *Zone
	Status  string // raw status column
	State   ServerState
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
	Servers   []*Server
	Zones     map[string]*Zone
	Tenants   map[string]*Tenant
	// SysVars are the cluster's global system variable values
	// (__all_virtual_proxy_sys_variable), e.g. ob_query_timeout.
	SysVars   map[string]string
	Refreshed time.Time
	// Generation increases with every published snapshot.
	Generation uint64

	byAddr   map[string]*Server
	allAddrs []string // every server's address, in Servers order
	ldcLast  ldcCache // the LDC view of the last IDC name asked for
	// hasReadOnly says that some zone is a ReadOnly zone.
	hasReadOnly bool
}

// Server returns the server with the given SQL address.
func (t *Table) Server(addr string) (*Server, bool) {
	s, ok := t.byAddr[addr]
	return s, ok
}

// Tenant returns the named tenant. The sys tenant is always present.
func (t *Table) Tenant(name string) (*Tenant, bool) {
	if strings.EqualFold(name, TenantSys) {
		if ten, ok := t.Tenants[TenantSys]; ok {
			return ten, true
		}
		return &Tenant{Name: TenantSys, ID: 1}, true
	}
	ten, ok := t.Tenants[name]
	return ten, ok
}

func (t *Table) index() {
	t.byAddr = make(map[string]*Server, len(t.Servers))
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
