package suite

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// The simulated OceanBase cluster the OceanBase-mode targets run against:
// one zone with one node, tenant OBTenant, its data in the suite's MariaDB
// (so the sysbench tables loaded there are the tenant's).
const (
	OBCluster = "bench"
	OBTenant  = "test"
)

// OBSim is a running bin/obsim process.
type OBSim struct {
	Proc *Process
	// RSList is the node list obgate's -r takes; with one node, the node's
	// address.
	RSList string
}

// obsimTopology is the cluster's topology file.
func obsimTopology() []byte {
	topo := map[string]any{
		"cluster": OBCluster,
		"zones":   []map[string]any{{"name": "zone1"}},
		"tenants": []map[string]any{{"name": "sys"}, {"name": OBTenant}},
	}
	b, _ := json.MarshalIndent(topo, "", "  ")
	return b
}

// StartOBSim starts bin (tools/obsim/cmd/obsim) serving a one-node cluster
// whose data lives in the MariaDB reachable with mariadbDSN (a
// go-sql-driver DSN), and waits until it prints its node list. Its output
// goes to dir/obsim.log; extra are more serve flags (--ssl-cert ...).
func StartOBSim(ctx context.Context, bin, dir, mariadbDSN string, timeout time.Duration, extra ...string) (*OBSim, error) {
	topoPath := filepath.Join(dir, "obsim-topology.json")
	if err := os.WriteFile(topoPath, obsimTopology(), 0o644); err != nil {
		return nil, err
	}
	logPath := filepath.Join(dir, "obsim.log")
	p, err := StartProcess("obsim", logPath, append([]string{bin, "serve", "--topology", topoPath, "--mariadb", mariadbDSN}, extra...)...)
	if err != nil {
		return nil, err
	}
	const marker = "rslist (ODP -r): "
	deadline := time.NewTimer(timeout)
	defer deadline.Stop()
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	for {
		for _, line := range strings.Split(readFile(logPath), "\n") {
			if rs, ok := strings.CutPrefix(line, marker); ok {
				return &OBSim{Proc: p, RSList: strings.TrimSpace(rs)}, nil
			}
		}
		select {
		case <-p.Exited():
			return nil, fmt.Errorf("obsim exited during start-up: %v\n%s", p.ExitError(), tailString(readFile(logPath), 30))
		case <-ctx.Done():
			_ = p.Stop(10 * time.Second)
			return nil, ctx.Err()
		case <-deadline.C:
			_ = p.Stop(10 * time.Second)
			return nil, fmt.Errorf("obsim did not start within %v\n%s", timeout, tailString(readFile(logPath), 30))
		case <-tick.C:
		}
	}
}

// Addr is the address of the cluster's node.
func (o *OBSim) Addr() string { return strings.Split(o.RSList, ";")[0] }
