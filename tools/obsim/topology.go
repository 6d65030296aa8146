package obsim

import (
	"encoding/json"
	"fmt"
	"os"
	"strconv"
	"strings"
)

// Topology describes a simulated cluster. It is read from a JSON file (see
// testdata/topology.json and README.md) or built in Go. Zero values get the
// defaults documented on each field when the cluster starts.
type Topology struct {
	// Cluster is the cluster name (V$OB_PARAMETERS "cluster"); required.
	Cluster string `json:"cluster"`
	// ClusterID is the cluster id; default 1.
	ClusterID int64 `json:"cluster_id,omitempty"`
	// Version is what ob_version() returns; default "4.2.1.0".
	Version string `json:"version,omitempty"`
	// BasePort, when non-zero, puts the nodes on BasePort+1, BasePort+2, …
	// in zone order; zero picks free ports.
	BasePort int `json:"base_port,omitempty"`
	// ProxyroPassword is the password of proxyro@sys, the account ODP reads
	// the internal tables with; default empty.
	ProxyroPassword string `json:"proxyro_password,omitempty"`
	// RemotePlanCost is what a node adds to a statement it runs as a
	// remote plan (LogEntry.Local false): the internal round trip to the
	// partition's leader, as a duration string; default "1ms", "0" for
	// none.
	RemotePlanCost string   `json:"remote_plan_cost,omitempty"`
	Zones          []Zone   `json:"zones"`
	Tenants        []Tenant `json:"tenants"`
	Users          []User   `json:"users,omitempty"`
	Tables         []Table  `json:"tables,omitempty"`
}

// Zone is a zone with its servers.
type Zone struct {
	Name   string `json:"name"`
	Region string `json:"region,omitempty"` // default "default_region"
	IDC    string `json:"idc,omitempty"`    // default: the zone name
	// Type is ReadWrite (default) or ReadOnly.
	Type string `json:"type,omitempty"`
	// Servers is the number of nodes in the zone; default 1. Nodes are
	// named <zone>-1, <zone>-2, …
	Servers int `json:"servers,omitempty"`
}

// Tenant is a tenant. The sys tenant exists even when not listed.
type Tenant struct {
	Name string `json:"name"`
	// ID defaults to 1 for sys and 1002, 1004, … for the others (their
	// meta tenants take the odd ids below, as in OceanBase 4.x).
	ID int64 `json:"id,omitempty"`
	// PrimaryZone is OceanBase's primary_zone string, e.g. "zone1;zone2,zone3";
	// default "RANDOM".
	PrimaryZone string `json:"primary_zone,omitempty"`
	// Zones the tenant has replicas (units) in; default all zones.
	Zones []string `json:"zones,omitempty"`
}

// User is an account created in MariaDB when the cluster starts. An
// OceanBase login as name@tenant uses the MariaDB account name (tenants
// share MariaDB's users and databases).
type User struct {
	Name     string `json:"name"`
	Password string `json:"password,omitempty"`
	// Grant is the privilege list granted on *.*; default "ALL PRIVILEGES".
	Grant string `json:"grant,omitempty"`
}

// Table is a table of a tenant with its partitioning and replica placement.
type Table struct {
	Tenant   string `json:"tenant"`
	Database string `json:"database"`
	Name     string `json:"name"`
	// Create is the MariaDB CREATE TABLE statement (without partitioning);
	// run in Database when the table does not exist yet. Empty means the
	// table must exist already.
	Create string `json:"create,omitempty"`
	// Data are statements run after Create, for example INSERTs.
	Data []string `json:"data,omitempty"`
	// Part is the first-level partitioning; nil for a non-partitioned table.
	Part *PartSpec `json:"part,omitempty"`
	// Sub is the second-level partitioning, applied to every first-level
	// partition (a template).
	Sub *PartSpec `json:"subpart,omitempty"`
	// Leaders names the leader node of each tablet (leaf partition) in
	// order; the list repeats when shorter than the tablets. Default:
	// round-robin over the tenant's zones.
	Leaders []string `json:"leaders,omitempty"`
}

// PartSpec is one level of partitioning.
type PartSpec struct {
	// Type is HASH, KEY, RANGE, RANGE COLUMNS, LIST or LIST COLUMNS.
	Type string `json:"type"`
	// Columns are the partitioning columns in the order of the
	// partitioning expression (KEY(b, a) is ["b", "a"], whatever the
	// columns' order in the table). HASH and RANGE/LIST without COLUMNS
	// take exactly one column: an integer, or the column of Expr.
	Columns []string `json:"columns"`
	// Expr is the expression HASH, RANGE or LIST partition by, of their
	// one column: YEAR(c) or TO_DAYS(c) of a DATE or DATETIME,
	// UNIX_TIMESTAMP(c) of a TIMESTAMP, c DIV n, c MOD n; empty for the
	// column itself. The views report it in part_expr.
	Expr string `json:"expr,omitempty"`
	// PartIDs are the part_id of each first-level partition, in partition
	// order; default 0, 1, 2, … A partition that a DDL rebuilt keeps its
	// position but gets a new, larger id: [500003, 500001, 500002] shows
	// a client that the partition index is the row's position, not the
	// order of the ids.
	PartIDs []int64 `json:"part_ids,omitempty"`
	// Num is the number of HASH or KEY partitions.
	Num int `json:"num,omitempty"`
	// Names optionally names HASH/KEY partitions; default p0, p1, … (sp0,
	// sp1, … at the second level).
	Names []string `json:"names,omitempty"`
	// Partitions define RANGE and LIST partitions, in order.
	Partitions []PartDef `json:"partitions,omitempty"`
}

// PartDef is one RANGE or LIST partition. Values are SQL literals.
type PartDef struct {
	Name string `json:"name"`
	// LessThan is the RANGE bound, one literal per column; "MAXVALUE"
	// allowed.
	LessThan []string `json:"less_than,omitempty"`
	// Values are the LIST values: each element is a literal (one column)
	// or a list of literals (LIST COLUMNS with several columns); a single
	// "DEFAULT" makes the default partition.
	Values []Tuple `json:"values,omitempty"`
}

// Tuple is a list of SQL literals; in JSON either one string or an array of
// strings.
type Tuple []string

// UnmarshalJSON accepts "1" as well as ["1", "'a'"].
func (t *Tuple) UnmarshalJSON(b []byte) error {
	var s string
	if err := json.Unmarshal(b, &s); err == nil {
		*t = Tuple{s}
		return nil
	}
	var list []string
	if err := json.Unmarshal(b, &list); err != nil {
		return fmt.Errorf("obsim: a LIST value is a literal or an array of literals: %s", b)
	}
	*t = list
	return nil
}

// MarshalJSON writes a one-element tuple as a plain string.
func (t Tuple) MarshalJSON() ([]byte, error) {
	if len(t) == 1 {
		return json.Marshal(t[0])
	}
	return json.Marshal([]string(t))
}

// LoadTopology reads a topology from a JSON file.
func LoadTopology(path string) (*Topology, error) {
	raw, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	return ParseTopology(raw)
}

// ParseTopology decodes a JSON topology, rejecting unknown fields.
func ParseTopology(raw []byte) (*Topology, error) {
	dec := json.NewDecoder(strings.NewReader(string(raw)))
	dec.DisallowUnknownFields()
	var t Topology
	if err := dec.Decode(&t); err != nil {
		return nil, fmt.Errorf("obsim: topology: %w", err)
	}
	return &t, nil
}

// ParseZonesFlag builds zones from the compact command-line form
// "name:region:idc:type:servers,…", where everything after the name is
// optional, e.g. "zone1:hz:hz1,zone2:hz:hz2:ReadWrite:2,zone3:sh".
func ParseZonesFlag(s string) ([]Zone, error) {
	var zones []Zone
	for _, item := range strings.Split(s, ",") {
		item = strings.TrimSpace(item)
		if item == "" {
			continue
		}
		f := strings.Split(item, ":")
		z := Zone{Name: f[0]}
		if len(f) > 1 {
			z.Region = f[1]
		}
		if len(f) > 2 {
			z.IDC = f[2]
		}
		if len(f) > 3 {
			z.Type = f[3]
		}
		if len(f) > 4 {
			n, err := strconv.Atoi(f[4])
			if err != nil || n < 1 {
				return nil, fmt.Errorf("obsim: zone %q: bad server count %q", z.Name, f[4])
			}
			z.Servers = n
		}
		if len(f) > 5 {
			return nil, fmt.Errorf("obsim: zone %q: too many fields", item)
		}
		zones = append(zones, z)
	}
	return zones, nil
}

// ParseTenantsFlag builds tenants from "name[:primary_zone],…", e.g.
// "test:zone1;zone2,zone3,app". The primary zone may itself contain ';'
// but not ','.
func ParseTenantsFlag(s string) []Tenant {
	var out []Tenant
	for _, item := range strings.Split(s, ",") {
		item = strings.TrimSpace(item)
		if item == "" {
			continue
		}
		name, pz, _ := strings.Cut(item, ":")
		out = append(out, Tenant{Name: name, PrimaryZone: pz})
	}
	return out
}

// Normalized topology used at run time.

const (
	defaultVersion  = "4.2.1.0"
	sysTenantID     = 1
	firstUserTenant = 1002
	firstTableID    = 500001
	firstTabletID   = 200001
	firstUserLS     = 1001
)

// normalize fills defaults and validates t. It returns a copy.
func (t *Topology) normalize() (*Topology, error) {
	n := *t
	n.Zones = append([]Zone(nil), t.Zones...)
	n.Tenants = append([]Tenant(nil), t.Tenants...)
	n.Users = append([]User(nil), t.Users...)
	n.Tables = append([]Table(nil), t.Tables...)
	if n.Cluster == "" {
		return nil, fmt.Errorf("obsim: topology needs a cluster name")
	}
	if n.ClusterID == 0 {
		n.ClusterID = 1
	}
	if n.Version == "" {
		n.Version = defaultVersion
	}
	cost, err := parseRemotePlanCost(n.RemotePlanCost)
	if err != nil {
		return nil, err
	}
	n.RemotePlanCost = cost.String()
	if len(n.Zones) == 0 {
		return nil, fmt.Errorf("obsim: topology needs at least one zone")
	}
	zoneSeen := map[string]bool{}
	for i := range n.Zones {
		z := &n.Zones[i]
		if z.Name == "" || strings.ContainsAny(z.Name, " ,'\"`") {
			return nil, fmt.Errorf("obsim: bad zone name %q", z.Name)
		}
		if zoneSeen[z.Name] {
			return nil, fmt.Errorf("obsim: zone %q listed twice", z.Name)
		}
		zoneSeen[z.Name] = true
		if z.Region == "" {
			z.Region = "default_region"
		}
		if z.IDC == "" {
			z.IDC = z.Name
		}
		switch strings.ToLower(z.Type) {
		case "", "readwrite":
			z.Type = "ReadWrite"
		case "readonly":
			z.Type = "ReadOnly"
		default:
			return nil, fmt.Errorf("obsim: zone %q: type %q is not ReadWrite or ReadOnly", z.Name, z.Type)
		}
		if z.Servers <= 0 {
			z.Servers = 1
		}
	}
	// Tenants: sys first.
	var tenants []Tenant
	hasSys := false
	for _, tn := range n.Tenants {
		if strings.EqualFold(tn.Name, "sys") {
			hasSys = true
			tn.Name = "sys"
			tenants = append([]Tenant{tn}, tenants...)
		} else {
			tenants = append(tenants, tn)
		}
	}
	if !hasSys {
		tenants = append([]Tenant{{Name: "sys"}}, tenants...)
	}
	nextID := int64(firstUserTenant)
	tenantSeen := map[string]bool{}
	idSeen := map[int64]bool{}
	for i := range tenants {
		tn := &tenants[i]
		if tn.Name == "" || strings.ContainsAny(tn.Name, " ,'\"`@#:") {
			return nil, fmt.Errorf("obsim: bad tenant name %q", tn.Name)
		}
		key := strings.ToLower(tn.Name)
		if tenantSeen[key] {
			return nil, fmt.Errorf("obsim: tenant %q listed twice", tn.Name)
		}
		tenantSeen[key] = true
		if tn.Name == "sys" {
			tn.ID = sysTenantID
		} else if tn.ID == 0 {
			for idSeen[nextID] {
				nextID += 2
			}
			tn.ID = nextID
			nextID += 2
		}
		if idSeen[tn.ID] || (tn.Name != "sys" && tn.ID <= sysTenantID) {
			return nil, fmt.Errorf("obsim: tenant %q: bad or duplicate id %d", tn.Name, tn.ID)
		}
		idSeen[tn.ID] = true
		if tn.PrimaryZone == "" {
			tn.PrimaryZone = "RANDOM"
		}
		if len(tn.Zones) == 0 {
			for _, z := range n.Zones {
				tn.Zones = append(tn.Zones, z.Name)
			}
		}
		for _, z := range tn.Zones {
			if !zoneSeen[z] {
				return nil, fmt.Errorf("obsim: tenant %q: unknown zone %q", tn.Name, z)
			}
		}
	}
	n.Tenants = tenants
	for i := range n.Users {
		if n.Users[i].Name == "" || strings.ContainsAny(n.Users[i].Name, "'\"`@#") {
			return nil, fmt.Errorf("obsim: bad user name %q", n.Users[i].Name)
		}
		if n.Users[i].Grant == "" {
			n.Users[i].Grant = "ALL PRIVILEGES"
		}
	}
	tableSeen := map[string]bool{}
	for i := range n.Tables {
		tb := &n.Tables[i]
		if tb.Tenant == "" {
			tb.Tenant = tenants[len(tenants)-1].Name
		}
		if !tenantSeen[strings.ToLower(tb.Tenant)] {
			return nil, fmt.Errorf("obsim: table %s.%s: unknown tenant %q", tb.Database, tb.Name, tb.Tenant)
		}
		if tb.Database == "" || tb.Name == "" {
			return nil, fmt.Errorf("obsim: a table needs a database and a name")
		}
		key := strings.ToLower(tb.Tenant + "." + tb.Database + "." + tb.Name)
		if tableSeen[key] {
			return nil, fmt.Errorf("obsim: table %s listed twice", key)
		}
		tableSeen[key] = true
		if tb.Part == nil && tb.Sub != nil {
			return nil, fmt.Errorf("obsim: table %s: subpart without part", key)
		}
	}
	return &n, nil
}
