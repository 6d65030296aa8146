package obsim

import (
	"fmt"
	"strings"
)

// Demo ports: nodes on DemoBasePort+1…+3, the control endpoint on
// DemoCtlAddr.
const (
	DemoBasePort = 28810
	DemoCtlAddr  = "127.0.0.1:28800"
)

// DemoTopology is the cluster of `make demo`: cluster "demo" with three
// zones in two regions, one node each; tenants sys and test; test.orders
// HASH-partitioned six ways (leaders spread over the zones) with 120 rows,
// and an unpartitioned test.customers. root has no password in every tenant.
func DemoTopology() *Topology {
	var orders []string
	for i := 1; i <= 120; i += 40 {
		var rows []string
		for id := i; id < i+40; id++ {
			rows = append(rows, fmt.Sprintf("(%d, %d, %d.%02d, '%s')", id, 1+id%12, 10+id*7%90, id%100,
				[]string{"new", "paid", "shipped"}[id%3]))
		}
		orders = append(orders, "INSERT INTO orders (id, customer_id, amount, status) VALUES "+strings.Join(rows, ", "))
	}
	var customers []string
	for id := 1; id <= 12; id++ {
		customers = append(customers, fmt.Sprintf("(%d, 'customer %d')", id, id))
	}
	return &Topology{
		Cluster:   "demo",
		ClusterID: 1,
		BasePort:  DemoBasePort,
		Zones: []Zone{
			{Name: "zone1", Region: "hangzhou", IDC: "hz1"},
			{Name: "zone2", Region: "hangzhou", IDC: "hz2"},
			{Name: "zone3", Region: "shanghai", IDC: "sh1"},
		},
		Tenants: []Tenant{
			{Name: "sys", PrimaryZone: "zone1;zone2,zone3"},
			{Name: "test", PrimaryZone: "RANDOM"},
		},
		Tables: []Table{
			{
				Tenant: "test", Database: "test", Name: "orders",
				Create: `CREATE TABLE orders (
					id BIGINT NOT NULL PRIMARY KEY,
					customer_id BIGINT NOT NULL,
					amount DECIMAL(10,2) NOT NULL,
					status VARCHAR(16) NOT NULL,
					created TIMESTAMP NOT NULL DEFAULT CURRENT_TIMESTAMP)`,
				Data: orders,
				Part: &PartSpec{Type: "HASH", Columns: []string{"id"}, Num: 6},
			},
			{
				Tenant: "test", Database: "test", Name: "customers",
				Create: `CREATE TABLE customers (id BIGINT NOT NULL PRIMARY KEY, name VARCHAR(64) NOT NULL)`,
				Data:   []string{"INSERT INTO customers (id, name) VALUES " + strings.Join(customers, ", ")},
			},
		},
	}
}
