package obsim

import (
	"context"
	"crypto/rand"
	"crypto/tls"
	"database/sql"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/go-sql-driver/mysql"

	"obgate/internal/mariadbd"
)

// nodeIP is the address every node listens on and reports in the views.
const nodeIP = "127.0.0.1"

// Config configures a simulated cluster.
type Config struct {
	// Topology is the cluster to simulate; required.
	Topology *Topology
	// MariaDBDSN names an existing MariaDB server to hold the data, as a
	// go-sql-driver DSN with an account that may create databases and
	// users, e.g. "root:secret@tcp(127.0.0.1:3306)/". Empty starts a
	// private mariadbd in a temporary directory, removed by Close.
	MariaDBDSN string
	// MariaDB configures the private server (ignored with MariaDBDSN).
	MariaDB mariadbd.Options
	// Logger receives obsim's own log lines; nil discards them.
	Logger *slog.Logger
	// LogCapacity is the number of statements each node's log keeps;
	// default 10000.
	LogCapacity int
	// TLS, when set, lets clients upgrade to TLS (tls.go).
	TLS *tls.Config
}

// Cluster is a running simulated OceanBase cluster. Its methods are safe for
// concurrent use.
type Cluster struct {
	cfg       Config
	topo      *Topology
	logger    *slog.Logger
	maria     *mariadbd.Server // nil with an external server
	mariaAddr string
	admin     *sql.DB
	faults    faultSet

	// mu guards the model and the view state of zones and nodes.
	mu            sync.Mutex
	tenants       []*tenantModel
	zoneStatus    map[string]string
	nodes         map[string]*Node
	nodeList      []*Node
	started       time.Time
	schemaVersion int64
	initial       map[*tablet]placement // for Reset

	remoteCost atomic.Int64 // time.Duration; see remoteplan.go
	nextConnID atomic.Uint32
	logSeq     atomic.Uint64 // orders statement log entries across nodes
	closeOnce  sync.Once
	closeErr   error
}

// placement is a tablet's leader and replicas.
type placement struct {
	leader   string
	replicas []string
}

// Start creates the MariaDB side of the cluster (databases, users, view
// tables, topology tables and their data) and starts every node. ctx bounds
// the start-up.
func Start(ctx context.Context, cfg Config) (*Cluster, error) {
	c, err := start(ctx, cfg)
	if err != nil {
		return nil, err
	}
	return c, nil
}

func start(ctx context.Context, cfg Config) (_ *Cluster, err error) {
	if cfg.Topology == nil {
		return nil, errors.New("obsim: Config.Topology is required")
	}
	topo, err := cfg.Topology.normalize()
	if err != nil {
		return nil, err
	}
	if cfg.LogCapacity <= 0 {
		cfg.LogCapacity = 10000
	}
	logger := cfg.Logger
	if logger == nil {
		logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	c := &Cluster{cfg: cfg, topo: topo, logger: logger, zoneStatus: map[string]string{},
		nodes: map[string]*Node{}, started: time.Now(), initial: map[*tablet]placement{}}
	c.schemaVersion = c.started.UnixMicro()
	c.SetRemotePlanCost(c.topoRemotePlanCost())
	c.nextConnID.Store(3221225472) // OceanBase-style session ids
	defer func() {
		if err != nil {
			c.Close()
		}
	}()

	// Nodes first, so their ports are known to the views.
	idx := 0
	for _, z := range topo.Zones {
		c.zoneStatus[z.Name] = "ACTIVE"
		for i := 1; i <= z.Servers; i++ {
			n := newNode(c, fmt.Sprintf("%s-%d", z.Name, i), z.Name, idx)
			port := 0
			if topo.BasePort > 0 {
				port = topo.BasePort + idx + 1
			}
			if err := n.listen(port); err != nil {
				return nil, err
			}
			n.rpcPort = 20000 + idx + 1 // unique; nothing listens there
			c.nodes[n.name] = n
			c.nodeList = append(c.nodeList, n)
			idx++
		}
	}

	if err := c.openMariaDB(ctx); err != nil {
		return nil, err
	}
	if err := c.setupSchema(ctx); err != nil {
		return nil, err
	}
	c.mu.Lock()
	err = c.refreshViews(ctx)
	c.mu.Unlock()
	if err != nil {
		return nil, err
	}
	for _, n := range c.nodeList {
		n.serve()
	}
	logger.Info("obsim cluster started", "cluster", topo.Cluster, "nodes", len(c.nodeList),
		"mariadb", c.mariaAddr, "took", time.Since(c.started).Round(time.Millisecond))
	return c, nil
}

// openMariaDB starts the private server or connects to the given one.
func (c *Cluster) openMariaDB(ctx context.Context) error {
	dsn := c.cfg.MariaDBDSN
	if dsn == "" {
		srv, err := mariadbd.Start(ctx, c.cfg.MariaDB)
		if err != nil {
			return err
		}
		c.maria = srv
		dsn = srv.DSN("root", "", "")
	}
	mc, err := mysql.ParseDSN(dsn)
	if err != nil {
		return fmt.Errorf("obsim: MariaDB DSN: %w", err)
	}
	c.mariaAddr = mc.Addr
	mc.InterpolateParams = true
	mc.MultiStatements = false
	mc.DBName = ""
	admin, err := sql.Open("mysql", mc.FormatDSN())
	if err != nil {
		return err
	}
	admin.SetMaxOpenConns(4)
	admin.SetMaxIdleConns(4)
	if err := admin.PingContext(ctx); err != nil {
		admin.Close()
		return fmt.Errorf("obsim: MariaDB at %s: %w", c.mariaAddr, err)
	}
	c.admin = admin
	if c.maria == nil {
		return nil
	}
	// A private server gets an administrative account of its own, so
	// that topology users (root included) may be given passwords.
	pw := make([]byte, 12)
	_, _ = rand.Read(pw)
	pass := hex.EncodeToString(pw)
	for _, q := range []string{
		"CREATE USER IF NOT EXISTS 'obsim_admin'@'127.0.0.1' IDENTIFIED BY '" + pass + "'",
		"GRANT ALL PRIVILEGES ON *.* TO 'obsim_admin'@'127.0.0.1' WITH GRANT OPTION",
	} {
		if _, err := admin.ExecContext(ctx, q); err != nil {
			return fmt.Errorf("obsim: admin account: %w", err)
		}
	}
	admin.Close()
	mc.User, mc.Passwd = "obsim_admin", pass
	if c.admin, err = sql.Open("mysql", mc.FormatDSN()); err != nil {
		return err
	}
	c.admin.SetMaxOpenConns(4)
	c.admin.SetMaxIdleConns(4)
	return c.admin.PingContext(ctx)
}

// setupSchema creates the view tables, users and topology tables, and
// builds the model.
func (c *Cluster) setupSchema(ctx context.Context) error {
	for _, q := range viewDDL {
		if _, err := c.admin.ExecContext(ctx, q); err != nil {
			return fmt.Errorf("obsim: %s: %w", firstLine(q), err)
		}
	}
	users := append([]User{{Name: "proxyro", Password: c.topo.ProxyroPassword, Grant: "SELECT"}}, c.topo.Users...)
	for _, u := range users {
		if err := c.createUser(ctx, u); err != nil {
			return err
		}
	}
	if _, err := c.admin.ExecContext(ctx, "GRANT SELECT ON oceanbase.* TO 'proxyro'@'%'"); err != nil {
		return err
	}
	conn, err := c.admin.Conn(ctx)
	if err != nil {
		return err
	}
	defer conn.Close()
	for _, t := range c.topo.Tables {
		if _, err := conn.ExecContext(ctx, "CREATE DATABASE IF NOT EXISTS "+quoteIdent(t.Database)); err != nil {
			return fmt.Errorf("obsim: database %s: %w", t.Database, err)
		}
		if t.Create == "" {
			continue
		}
		var n int
		if err := conn.QueryRowContext(ctx, "SELECT COUNT(*) FROM information_schema.TABLES WHERE TABLE_SCHEMA = ? AND TABLE_NAME = ?",
			t.Database, t.Name).Scan(&n); err != nil {
			return err
		}
		if n > 0 {
			continue // keep existing data
		}
		if _, err := conn.ExecContext(ctx, "USE "+quoteIdent(t.Database)); err != nil {
			return err
		}
		for _, q := range append([]string{t.Create}, t.Data...) {
			if _, err := conn.ExecContext(ctx, q); err != nil {
				return fmt.Errorf("obsim: table %s.%s: %s: %w", t.Database, t.Name, firstLine(q), err)
			}
		}
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if err := c.buildTenants(); err != nil {
		return err
	}
	nextTablet, nextLS := int64(firstTabletID), map[string]int64{}
	for i, spec := range c.topo.Tables {
		key := strings.ToLower(spec.Tenant)
		if nextLS[key] == 0 {
			nextLS[key] = firstUserLS
		}
		ls := nextLS[key]
		t, err := c.buildTable(ctx, spec, int64(firstTableID+i), &nextTablet, &ls)
		if err != nil {
			return err
		}
		nextLS[key] = ls
		t.tenant.tables = append(t.tenant.tables, t)
		for _, tb := range t.tablets {
			c.initial[tb] = placement{tb.leader, append([]string(nil), tb.replicas...)}
		}
	}
	return nil
}

// createUser creates or updates a MariaDB account for u.
func (c *Cluster) createUser(ctx context.Context, u User) error {
	hosts := []string{"%"}
	if u.Name == "root" {
		hosts = []string{"127.0.0.1", "::1", "localhost", "%"}
	}
	for _, h := range hosts {
		acct := "'" + u.Name + "'@'" + h + "'"
		pw := strings.ReplaceAll(strings.ReplaceAll(u.Password, `\`, `\\`), "'", "''")
		for _, q := range []string{
			"CREATE USER IF NOT EXISTS " + acct + " IDENTIFIED BY '" + pw + "'",
			"ALTER USER " + acct + " IDENTIFIED BY '" + pw + "'",
			"GRANT " + u.Grant + " ON *.* TO " + acct,
		} {
			if _, err := c.admin.ExecContext(ctx, q); err != nil {
				return fmt.Errorf("obsim: user %s: %w", u.Name, err)
			}
		}
	}
	return nil
}

func firstLine(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		s = s[:i] + " …"
	}
	if len(s) > 100 {
		s = s[:100] + " …"
	}
	return s
}

// Close stops every node and, for a private server, MariaDB.
func (c *Cluster) Close() error {
	c.closeOnce.Do(func() {
		for _, n := range c.nodeList {
			n.shutdown()
		}
		if c.admin != nil {
			c.admin.Close()
		}
		if c.maria != nil {
			c.closeErr = c.maria.Stop()
		}
	})
	return c.closeErr
}

// Name is the cluster name.
func (c *Cluster) Name() string { return c.topo.Cluster }

// ID is the cluster id.
func (c *Cluster) ID() int64 { return c.topo.ClusterID }

// Version is the version ob_version() reports.
func (c *Cluster) Version() string { return c.topo.Version }

// Topology returns the normalized topology (defaults filled in). The caller
// must not modify it.
func (c *Cluster) Topology() *Topology { return c.topo }

// MariaDBAddr is the address of the MariaDB server holding the data.
func (c *Cluster) MariaDBAddr() string { return c.mariaAddr }

// MariaDB returns the private server, or nil when an external one is used.
func (c *Cluster) MariaDB() *mariadbd.Server { return c.maria }

// Admin returns the administrative database handle obsim uses (for tests
// that want to look into MariaDB directly).
func (c *Cluster) Admin() *sql.DB { return c.admin }

// Nodes returns the nodes in zone order.
func (c *Cluster) Nodes() []*Node { return append([]*Node(nil), c.nodeList...) }

// Node returns the node with the given name (e.g. "zone1-1"), or nil.
func (c *Cluster) Node(name string) *Node { return c.nodes[name] }

// RSList is the "-r" argument ODP takes: ip:port of every node, ';'-separated.
func (c *Cluster) RSList() string {
	var parts []string
	for _, n := range c.nodeList {
		parts = append(parts, n.Addr())
	}
	return strings.Join(parts, ";")
}

// zone returns a topology zone by name.
func (c *Cluster) zone(name string) *Zone {
	for i := range c.topo.Zones {
		if c.topo.Zones[i].Name == name {
			return &c.topo.Zones[i]
		}
	}
	return &Zone{Name: name, Type: "ReadWrite"}
}

// zoneNodes lists the nodes of a zone.
func (c *Cluster) zoneNodes(zone string) []*Node {
	var out []*Node
	for _, n := range c.nodeList {
		if n.zone == zone {
			out = append(out, n)
		}
	}
	return out
}

// change applies fn to the model under the lock and refreshes the views.
func (c *Cluster) change(fn func() error) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if err := fn(); err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	return c.refreshViews(ctx)
}

// SetZoneStatus sets a zone's status in DBA_OB_ZONES: "ACTIVE" or
// "INACTIVE" (other values are written as given, which ODP treats as an
// invalid zone list).
func (c *Cluster) SetZoneStatus(zone, status string) error {
	if len(c.zoneNodes(zone)) == 0 {
		return fmt.Errorf("obsim: unknown zone %q", zone)
	}
	return c.change(func() error {
		c.zoneStatus[zone] = strings.ToUpper(status)
		return nil
	})
}

// MoveLeader makes node the leader of a partition. table is
// "[tenant.]db.table"; partition is a partition name ("p1", "p0sp2" or
// "p0.sp2"), an index or a tablet id, and may be empty for a
// non-partitioned table. The tablet's replica in node's zone moves onto
// node if needed.
func (c *Cluster) MoveLeader(table, partition, node string) error {
	return c.change(func() error {
		t, err := c.findTable(table)
		if err != nil {
			return err
		}
		tb, err := t.findTablet(partition)
		if err != nil {
			return err
		}
		return c.placeLeader(t, tb, node)
	})
}

// Leader returns the leader node of a partition (arguments as MoveLeader).
func (c *Cluster) Leader(table, partition string) (string, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	t, err := c.findTable(table)
	if err != nil {
		return "", err
	}
	tb, err := t.findTablet(partition)
	if err != nil {
		return "", err
	}
	return tb.leader, nil
}

// Reset undoes every fault: stopped nodes start, hung and slow nodes
// recover, injected errors are removed, statuses, leaders and the
// remote-plan cost go back to the topology's. Statement logs and counters
// are kept (see ClearLogs and ResetStats).
func (c *Cluster) Reset() error {
	c.faults.clear()
	c.SetRemotePlanCost(c.topoRemotePlanCost())
	var errs []error
	for _, n := range c.nodeList {
		n.Unhang()
		n.UnhangSQL()
		n.Slow(0)
		n.CorruptFrames(0)
		if !n.Running() {
			if err := n.Start(); err != nil {
				errs = append(errs, err)
			}
		}
	}
	errs = append(errs, c.change(func() error {
		for z := range c.zoneStatus {
			c.zoneStatus[z] = "ACTIVE"
		}
		for _, n := range c.nodeList {
			n.view = nodeView{status: "ACTIVE", startService: c.started}
		}
		for tb, p := range c.initial {
			tb.leader = p.leader
			tb.replicas = append([]string(nil), p.replicas...)
		}
		return nil
	}))
	return errors.Join(errs...)
}

// Log returns every node's statement log merged in time order.
func (c *Cluster) Log() []LogEntry {
	var all []LogEntry
	for _, n := range c.nodeList {
		all = append(all, n.Log()...)
	}
	sortLog(all)
	return all
}

// ClearLogs empties every node's statement log.
func (c *Cluster) ClearLogs() {
	for _, n := range c.nodeList {
		n.ClearLog()
	}
}

// nextSessionID allocates a connection id (the handshake thread id).
func (c *Cluster) nextSessionID() uint32 { return c.nextConnID.Add(1) }

// listenAddr returns "127.0.0.1:port".
func listenAddr(port int) string { return net.JoinHostPort(nodeIP, strconv.Itoa(port)) }
