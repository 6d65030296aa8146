// Package topology is the vocabulary route and health share about the
// members of an OceanBase cluster: the servers and zones its sys tenant
// lists, the states obgate reads them in, and the sys tenant and the
// read-only account obgate reads them with. It holds names and plain
// values only; route reads the cluster's tables into them, health judges
// servers by them, and neither imports the other.
package topology

// The sys tenant, and the account obgate reads cluster metadata with
// (proxyro@sys), as every OceanBase cluster has them.
const (
	TenantSys   = "sys"
	UserProxyRO = "proxyro"
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

// String names the state as SHOW PROXYCONGESTION does.
func (s ServerState) String() string {
	if int(s) < len(serverStateNames) {
		return serverStateNames[s]
	}
	return "UNKNOWN"
}

// ZoneState is a zone's status as ODP sees it.
type ZoneState uint8

const (
	ZoneActive  ZoneState = iota
	ZoneUpgrade           // status INACTIVE: the zone is being upgraded or stopped
)

// String names the state.
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
