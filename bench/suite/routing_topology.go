package suite

import (
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"time"
)

// The routing suite's cluster: three zones of one node each in two regions,
// tenant RoutingTenant in every zone, and sysbench's tables HASH(id)
// partitioned with their leaders spread over the nodes, as
// tools/obsim/testdata/sbtest-topology.json.
const (
	RoutingCluster    = "bench3"
	RoutingTenant     = "test"
	RoutingPartitions = 6
	// RoutingProxyUser is how sysbench logs in through obgate,
	// RoutingDirectUser straight to a node (also through HAProxy, which
	// only relays bytes).
	RoutingProxyUser  = "root@" + RoutingTenant + "#" + RoutingCluster
	RoutingDirectUser = "root@" + RoutingTenant
)

// routingZones are the zones in node order: obsim names each zone's node
// <zone>-1 and lists them in this order in its rslist.
var routingZones = []topoZone{
	{Name: "zone1", Region: "hangzhou", IDC: "hz1"},
	{Name: "zone2", Region: "hangzhou", IDC: "hz2"},
	{Name: "zone3", Region: "shanghai", IDC: "sh1"},
}

// sbtestCreate is the DDL obsim runs for a table that is missing. The
// suite loads the tables with sysbench before obsim starts, so it only
// matters when something went wrong; the columns are sysbench's.
const sbtestCreate = "CREATE TABLE %s (id INT NOT NULL AUTO_INCREMENT, k INT NOT NULL DEFAULT 0, c CHAR(120) NOT NULL DEFAULT '', pad CHAR(60) NOT NULL DEFAULT '', PRIMARY KEY (id), KEY k_1 (k))"

// The topology file's fields that the suite uses, in obsim's format
// (tools/obsim/README.md, "Topology file").
type topoFile struct {
	Cluster        string       `json:"cluster"`
	ClusterID      int          `json:"cluster_id"`
	RemotePlanCost string       `json:"remote_plan_cost"`
	Zones          []topoZone   `json:"zones"`
	Tenants        []topoTenant `json:"tenants"`
	Tables         []topoTable  `json:"tables"`
}

type topoZone struct {
	Name   string `json:"name"`
	Region string `json:"region"`
	IDC    string `json:"idc"`
}

type topoTenant struct {
	Name        string `json:"name"`
	PrimaryZone string `json:"primary_zone"`
}

type topoTable struct {
	Tenant   string   `json:"tenant"`
	Database string   `json:"database"`
	Name     string   `json:"name"`
	Create   string   `json:"create"`
	Part     topoPart `json:"part"`
	Leaders  []string `json:"leaders"`
}

type topoPart struct {
	Type    string   `json:"type"`
	Columns []string `json:"columns"`
	Num     int      `json:"num"`
}

// RoutingNodeNames are the node names of the routing cluster, in rslist
// order.
func RoutingNodeNames() []string {
	names := make([]string, len(routingZones))
	for i, z := range routingZones {
		names[i] = z.Name + "-1"
	}
	return names
}

// RoutingTopology returns the obsim topology for tables sysbench tables
// (sbtest.sbtest1 … sbtestN) in cluster, with the given remote-plan cost (a
// Go duration). Table i's partition leaders rotate over the nodes starting
// one node further than table i-1's (sbtest1: p0 zone1-1, p1 zone2-1, p2
// zone3-1, p3 zone1-1, …; sbtest2 starts at zone2-1), so that a key's
// leader is any node with the same chance.
func RoutingTopology(cluster string, tables int, remotePlanCost time.Duration) ([]byte, error) {
	if cluster == "" {
		return nil, errors.New("routing topology: empty cluster name")
	}
	if tables < 1 {
		return nil, fmt.Errorf("routing topology: %d tables", tables)
	}
	if remotePlanCost < 0 {
		return nil, fmt.Errorf("routing topology: negative remote-plan cost %v", remotePlanCost)
	}
	t := topoFile{
		Cluster:        cluster,
		ClusterID:      1,
		RemotePlanCost: remotePlanCost.String(),
		Zones:          routingZones,
		Tenants: []topoTenant{
			{Name: "sys", PrimaryZone: "zone1;zone2,zone3"},
			{Name: RoutingTenant, PrimaryZone: "RANDOM"},
		},
	}
	nodes := RoutingNodeNames()
	for i := 1; i <= tables; i++ {
		name := "sbtest" + strconv.Itoa(i)
		leaders := make([]string, len(nodes))
		for j := range nodes {
			leaders[j] = nodes[(i-1+j)%len(nodes)]
		}
		t.Tables = append(t.Tables, topoTable{
			Tenant:   RoutingTenant,
			Database: "sbtest",
			Name:     name,
			Create:   fmt.Sprintf(sbtestCreate, name),
			Part:     topoPart{Type: "HASH", Columns: []string{"id"}, Num: RoutingPartitions},
			Leaders:  leaders,
		})
	}
	b, err := json.MarshalIndent(t, "", "  ")
	if err != nil {
		return nil, err
	}
	return append(b, '\n'), nil
}
