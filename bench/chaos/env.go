package chaos

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/go-sql-driver/mysql"

	"obgate/bench/suite"
	"obgate/internal/mariadbd"
	"obgate/tools/obsim"
)

// Names of the simulated cluster.
const (
	ClusterName = "chaos"
	Tenant      = "test"
)

// sbtestDDL is sysbench's table, without its secondary index's name
// mattering.
const sbtestDDL = `CREATE TABLE IF NOT EXISTS sbtest1 (
	id INT NOT NULL AUTO_INCREMENT,
	k INT NOT NULL DEFAULT 0,
	c CHAR(120) NOT NULL DEFAULT '',
	pad CHAR(60) NOT NULL DEFAULT '',
	PRIMARY KEY (id),
	KEY k_1 (k))`

// prepareSchema creates sbtest1 with rows rows and an empty ledger on a
// database server (directly, not through a proxy).
func prepareSchema(ctx context.Context, srv *mariadbd.Server, rows int) error {
	return srv.Exec(ctx,
		"CREATE DATABASE IF NOT EXISTS "+schemaName,
		"USE "+schemaName,
		"DROP TABLE IF EXISTS sbtest1, ledger",
		sbtestDDL,
		// c and pad as sysbench fills them: groups of 11 digits joined by '-'.
		fmt.Sprintf(`INSERT INTO sbtest1 (id, k, c, pad)
			SELECT seq, 1 + FLOOR(RAND() * %[1]d),
				LEFT(CONCAT_WS('-', LPAD(FLOOR(RAND()*1e11), 11, '0'), LPAD(FLOOR(RAND()*1e11), 11, '0'),
					LPAD(FLOOR(RAND()*1e11), 11, '0'), LPAD(FLOOR(RAND()*1e11), 11, '0'), LPAD(FLOOR(RAND()*1e11), 11, '0'),
					LPAD(FLOOR(RAND()*1e11), 11, '0'), LPAD(FLOOR(RAND()*1e11), 11, '0'), LPAD(FLOOR(RAND()*1e11), 11, '0'),
					LPAD(FLOOR(RAND()*1e11), 11, '0'), LPAD(FLOOR(RAND()*1e11), 11, '0')), 119),
				LEFT(CONCAT_WS('-', LPAD(FLOOR(RAND()*1e11), 11, '0'), LPAD(FLOOR(RAND()*1e11), 11, '0'),
					LPAD(FLOOR(RAND()*1e11), 11, '0'), LPAD(FLOOR(RAND()*1e11), 11, '0'), LPAD(FLOOR(RAND()*1e11), 11, '0')), 59)
			FROM seq_1_to_%[1]d`, rows),
		ledgerDDL,
	)
}

// directDB opens a pool straight to a MariaDB server as root.
func directDB(addr string) (*sql.DB, error) {
	cfg := mysql.NewConfig()
	cfg.User, cfg.Net, cfg.Addr = "root", "tcp", addr
	cfg.Timeout, cfg.ReadTimeout, cfg.WriteTimeout = 2*time.Second, 30*time.Second, 30*time.Second
	cfg.Logger = &mysql.NopLogger{}
	conn, err := mysql.NewConnector(cfg)
	if err != nil {
		return nil, err
	}
	db := sql.OpenDB(conn)
	db.SetMaxOpenConns(2)
	return db, nil
}

// truncateLedger empties the ledger of a database server.
func truncateLedger(ctx context.Context, srv *mariadbd.Server) error {
	return srv.Exec(ctx, "TRUNCATE TABLE "+schemaName+".ledger")
}

// SimEnv is the simulated cluster the OceanBase-mode scenarios share: a
// MariaDB holding the data and bin/obsim serving three zones of one node
// each, driven through its control endpoint.
type SimEnv struct {
	DB     *mariadbd.Server
	Proc   *suite.Process
	Ctl    *obsim.ControlClient
	RSList string
	Nodes  []obsim.NodeState
}

// simTopology is the cluster: three zones in one region (so that no
// locality preference skews routing), tenant test in all of them, and
// sbtest1 HASH-partitioned over three tablets whose leaders rotate over
// the zones, so that point selects spread over every node.
func simTopology() *obsim.Topology {
	return &obsim.Topology{
		Cluster: ClusterName,
		Zones: []obsim.Zone{
			{Name: "zone1", Region: "region1", IDC: "idc1"},
			{Name: "zone2", Region: "region1", IDC: "idc2"},
			{Name: "zone3", Region: "region1", IDC: "idc3"},
		},
		Tenants: []obsim.Tenant{{Name: "sys"}, {Name: Tenant, PrimaryZone: "RANDOM"}},
		Tables: []obsim.Table{{
			Tenant: Tenant, Database: schemaName, Name: "sbtest1", Create: sbtestDDL,
			Part: &obsim.PartSpec{Type: "HASH", Columns: []string{"id"}, Num: 3},
		}},
	}
}

// StartSim starts MariaDB, fills the schema and starts obsim (binary
// obsimBin) with its control endpoint; logs go to dir.
func StartSim(ctx context.Context, obsimBin, dir string, tableSize int) (_ *SimEnv, err error) {
	e := &SimEnv{}
	defer func() {
		if err != nil {
			e.Close()
		}
	}()
	if e.DB, err = mariadbd.Start(ctx, mariadbd.Options{}); err != nil {
		return nil, err
	}
	if err = prepareSchema(ctx, e.DB, tableSize); err != nil {
		return nil, fmt.Errorf("schema: %w", err)
	}
	topo, err := json.MarshalIndent(simTopology(), "", "  ")
	if err != nil {
		return nil, err
	}
	topoPath := filepath.Join(dir, "obsim-topology.json")
	if err = os.WriteFile(topoPath, topo, 0o644); err != nil {
		return nil, err
	}
	ctlPort, err := suite.FreePort()
	if err != nil {
		return nil, err
	}
	ctlAddr := "127.0.0.1:" + strconv.Itoa(ctlPort)
	logPath := filepath.Join(dir, "obsim.log")
	_ = os.Remove(logPath) // the start-up marker must come from this run
	e.Proc, err = suite.StartProcess("obsim", logPath, obsimBin, "serve", "--topology", topoPath,
		"--mariadb", e.DB.DSN("root", "", ""), "--ctl", ctlAddr, "--base-port", "0")
	if err != nil {
		return nil, err
	}
	if e.RSList, err = waitMarker(ctx, e.Proc, logPath, "rslist (ODP -r): ", time.Minute); err != nil {
		return nil, err
	}
	e.Ctl = &obsim.ControlClient{Addr: ctlAddr}
	st, err := e.Ctl.State()
	if err != nil {
		return nil, fmt.Errorf("obsim control endpoint: %w", err)
	}
	e.Nodes = st.Nodes
	return e, nil
}

// Close stops obsim and MariaDB.
func (e *SimEnv) Close() {
	if e.Proc != nil {
		_ = e.Proc.Stop(10 * time.Second)
	}
	if e.DB != nil {
		_ = e.DB.Stop()
	}
}

// Node returns the state of the named node as obsim first reported it.
func (e *SimEnv) Node(name string) obsim.NodeState {
	for _, n := range e.Nodes {
		if n.Name == name {
			return n
		}
	}
	return obsim.NodeState{}
}

// NodeByAddr returns the name of the node listening on addr.
func (e *SimEnv) NodeByAddr(addr string) string {
	for _, n := range e.Nodes {
		if n.Addr == addr {
			return n.Name
		}
	}
	return ""
}

// Prepare undoes every fault, clears the statement logs and empties the
// ledger, before a scenario.
func (e *SimEnv) Prepare(ctx context.Context) error {
	if err := e.Ctl.Reset(); err != nil {
		return err
	}
	if err := e.Ctl.Do("DELETE", "/v1/log", nil, nil); err != nil {
		return err
	}
	return truncateLedger(ctx, e.DB)
}

// waitMarker waits until a line of the log at path starts with marker and
// returns the rest of that line.
func waitMarker(ctx context.Context, p *suite.Process, path, marker string, timeout time.Duration) (string, error) {
	deadline := time.NewTimer(timeout)
	defer deadline.Stop()
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	for {
		b, _ := os.ReadFile(path)
		for _, line := range strings.Split(string(b), "\n") {
			if rest, ok := strings.CutPrefix(line, marker); ok {
				return strings.TrimSpace(rest), nil
			}
		}
		select {
		case <-p.Exited():
			return "", fmt.Errorf("%s exited during start-up: %v\n%s", p.Name, p.ExitError(), tail(string(b), 20))
		case <-ctx.Done():
			return "", ctx.Err()
		case <-deadline.C:
			return "", fmt.Errorf("%s did not start within %v\n%s", p.Name, timeout, tail(string(b), 20))
		case <-tick.C:
		}
	}
}

// tail returns the last n lines of s.
func tail(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

// MariaPair is two independent MariaDB servers with the same schema, for
// the mysql-mode scenario.
type MariaPair struct {
	Servers [2]*mariadbd.Server
	// restarted holds a server started again on a killed one's datadir to
	// read its ledger.
	restarted [2]*suite.Process
}

// StartMariaPair starts both servers and fills their schema.
func StartMariaPair(ctx context.Context, tableSize int) (_ *MariaPair, err error) {
	m := &MariaPair{}
	defer func() {
		if err != nil {
			m.Close()
		}
	}()
	for i := range m.Servers {
		if m.Servers[i], err = mariadbd.Start(ctx, mariadbd.Options{}); err != nil {
			return nil, err
		}
		if err = prepareSchema(ctx, m.Servers[i], tableSize); err != nil {
			return nil, fmt.Errorf("schema: %w", err)
		}
	}
	return m, nil
}

// Addrs lists the servers' addresses.
func (m *MariaPair) Addrs() []string {
	return []string{m.Servers[0].Addr(), m.Servers[1].Addr()}
}

// Signal sends sig to server i.
func (m *MariaPair) Signal(i int, sig syscall.Signal) error {
	return syscall.Kill(m.Servers[i].PID(), sig)
}

// Revive starts mariadbd again on the datadir of server i after it was
// killed, so that its ledger can be read, and waits until it answers.
func (m *MariaPair) Revive(ctx context.Context, i int) error {
	srv := m.Servers[i]
	bin, err := suite.LookPath("mariadbd", "/usr/sbin", "/usr/local/sbin")
	if err != nil {
		return err
	}
	p, err := suite.StartProcess("mariadbd", srv.ErrorLog(), append([]string{bin}, srv.Args()...)...)
	if err != nil {
		return err
	}
	m.restarted[i] = p
	db, err := directDB(srv.Addr())
	if err != nil {
		return err
	}
	defer db.Close()
	ctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	for {
		pctx, pcancel := context.WithTimeout(ctx, 2*time.Second)
		err := db.PingContext(pctx)
		pcancel()
		if err == nil {
			return nil
		}
		select {
		case <-ctx.Done():
			b, _ := os.ReadFile(srv.ErrorLog())
			return fmt.Errorf("mariadbd did not come back on %s: %v\n%s", srv.Dir(), err, tail(string(b), 20))
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// Close stops both servers (and any revived one) and removes their data.
func (m *MariaPair) Close() {
	for i, srv := range m.Servers {
		if srv == nil {
			continue
		}
		// A stopped (SIGSTOP) server would never see SIGTERM.
		_ = syscall.Kill(srv.PID(), syscall.SIGCONT)
		if p := m.restarted[i]; p != nil {
			_ = p.Stop(10 * time.Second)
		}
		_ = srv.Stop() // reports that a killed server had died: expected here
	}
}
