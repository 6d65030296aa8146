package obsim

import (
	"context"
	"database/sql"
	"fmt"
	"sort"
	"strconv"
	"strings"
)

// The run-time model of the cluster: tenants, tables and their tablets with
// replica placement. It is guarded by Cluster.mu; the views are regenerated
// from it after every change.

type tenantModel struct {
	name        string
	id          int64
	primaryZone string
	zones       []string // zones with units, topology order
	sysLSLeader string   // node leading the tenant's LS 1
	tables      []*tableModel
}

type tableModel struct {
	tenant        *tenantModel
	db, name      string
	id            int64
	schemaVersion int64
	cols          map[string]*column
	colOrder      []string
	pkIndex       map[string]int // position of a column in the primary key
	part, sub     *partLevel
	tablets       []*tablet
}

// tablet is a leaf partition (the whole table when it is not partitioned).
type tablet struct {
	id, lsID  int64
	part, sub int    // partition indexes (0 when the level does not exist)
	name      string // partition name, "p0sp1" style for two levels
	leader    string // node name
	replicas  []string
}

// fullName is tenant.db.table.
func (t *tableModel) fullName() string { return t.tenant.name + "." + t.db + "." + t.name }

// hasReplica reports whether node holds a replica of tb.
func (tb *tablet) hasReplica(node string) bool {
	for _, r := range tb.replicas {
		if r == node {
			return true
		}
	}
	return false
}

// locality is the tenant's locality string, e.g. "FULL{1}@z1, READONLY{1}@z3".
func (c *Cluster) locality(t *tenantModel) string {
	var parts []string
	for _, z := range t.zones {
		kind := "FULL"
		if c.zone(z).Type == "ReadOnly" {
			kind = "READONLY"
		}
		parts = append(parts, kind+"{1}@"+z)
	}
	return strings.Join(parts, ", ")
}

// leaderZones are the zones leaders are placed in by default: the tenant's
// ReadWrite zones, narrowed to the first group of its primary zone when that
// names zones.
func (c *Cluster) leaderZones(t *tenantModel) []string {
	var rw []string
	for _, z := range t.zones {
		if c.zone(z).Type != "ReadOnly" {
			rw = append(rw, z)
		}
	}
	if pz := strings.TrimSpace(t.primaryZone); pz != "" && !strings.EqualFold(pz, "RANDOM") {
		first := strings.Split(strings.Split(pz, ";")[0], ",")
		var pref []string
		for _, z := range first {
			z = strings.TrimSpace(z)
			for _, w := range rw {
				if w == z {
					pref = append(pref, z)
				}
			}
		}
		if len(pref) > 0 {
			return pref
		}
	}
	return rw
}

// buildTenants creates the tenant models.
func (c *Cluster) buildTenants() error {
	for _, tn := range c.topo.Tenants {
		t := &tenantModel{name: tn.Name, id: tn.ID, primaryZone: tn.PrimaryZone, zones: tn.Zones}
		lz := c.leaderZones(t)
		if len(lz) == 0 {
			return fmt.Errorf("obsim: tenant %s has no ReadWrite zone", tn.Name)
		}
		t.sysLSLeader = c.zoneNodes(lz[0])[0].name
		c.tenants = append(c.tenants, t)
	}
	return nil
}

// loadColumns reads a table's columns and primary key from MariaDB.
func loadColumns(ctx context.Context, db *sql.DB, schema, table string) ([]*column, map[string]int, error) {
	rows, err := db.QueryContext(ctx, `SELECT COLUMN_NAME, ORDINAL_POSITION, DATA_TYPE, COLUMN_TYPE,
		IFNULL(COLLATION_NAME, ''), IFNULL(CHARACTER_MAXIMUM_LENGTH, 0), IFNULL(NUMERIC_PRECISION, 0),
		IFNULL(NUMERIC_SCALE, 0), IFNULL(DATETIME_PRECISION, 0) FROM information_schema.COLUMNS
		WHERE TABLE_SCHEMA = ? AND TABLE_NAME = ? ORDER BY ORDINAL_POSITION`, schema, table)
	if err != nil {
		return nil, nil, err
	}
	defer rows.Close()
	var cols []*column
	for rows.Next() {
		var name, dataType, colType, coll string
		var pos, charLen, prec, scale, fsp int64
		if err := rows.Scan(&name, &pos, &dataType, &colType, &coll, &charLen, &prec, &scale, &fsp); err != nil {
			return nil, nil, err
		}
		c := columnFromInfoSchema(name, int(pos-1), dataType, colType, coll, charLen, prec, scale, fsp)
		cols = append(cols, &c)
	}
	if err := rows.Err(); err != nil {
		return nil, nil, err
	}
	if len(cols) == 0 {
		return nil, nil, fmt.Errorf("obsim: table %s.%s does not exist in MariaDB", schema, table)
	}
	pk := map[string]int{}
	krows, err := db.QueryContext(ctx, `SELECT COLUMN_NAME, SEQ_IN_INDEX FROM information_schema.STATISTICS
		WHERE TABLE_SCHEMA = ? AND TABLE_NAME = ? AND INDEX_NAME = 'PRIMARY'`, schema, table)
	if err != nil {
		return nil, nil, err
	}
	defer krows.Close()
	for krows.Next() {
		var name string
		var seq int
		if err := krows.Scan(&name, &seq); err != nil {
			return nil, nil, err
		}
		pk[strings.ToLower(name)] = seq - 1
	}
	return cols, pk, krows.Err()
}

// buildTable creates the model of one topology table and places its tablets.
func (c *Cluster) buildTable(ctx context.Context, spec Table, tableID int64, nextTablet, nextLS *int64) (*tableModel, error) {
	var tenant *tenantModel
	for _, t := range c.tenants {
		if strings.EqualFold(t.name, spec.Tenant) {
			tenant = t
		}
	}
	cols, pk, err := loadColumns(ctx, c.admin, spec.Database, spec.Name)
	if err != nil {
		return nil, err
	}
	t := &tableModel{tenant: tenant, db: spec.Database, name: spec.Name, id: tableID,
		schemaVersion: c.schemaVersion, cols: map[string]*column{}, pkIndex: pk}
	for _, col := range cols {
		t.cols[col.name] = col
		t.colOrder = append(t.colOrder, col.name)
	}
	if spec.Part != nil {
		if t.part, err = buildLevel(spec.Part, t.cols, false, c.defaultTimeZone()); err != nil {
			return nil, fmt.Errorf("obsim: table %s: %w", t.fullName(), err)
		}
	}
	if spec.Sub != nil {
		if t.sub, err = buildLevel(spec.Sub, t.cols, true, c.defaultTimeZone()); err != nil {
			return nil, fmt.Errorf("obsim: table %s subpartitions: %w", t.fullName(), err)
		}
	}
	// Leaf partitions in order.
	switch {
	case t.part == nil:
		t.tablets = []*tablet{{name: spec.Name}}
	case t.sub == nil:
		for i := range t.part.num {
			t.tablets = append(t.tablets, &tablet{part: i, name: t.part.names[i]})
		}
	default:
		for i := range t.part.num {
			for j := range t.sub.num {
				t.tablets = append(t.tablets, &tablet{part: i, sub: j, name: t.part.names[i] + t.sub.names[j]})
			}
		}
	}
	lz := c.leaderZones(tenant)
	for k, tb := range t.tablets {
		tb.id = *nextTablet
		*nextTablet++
		tb.lsID = *nextLS
		*nextLS++
		// One replica per tenant zone; the leader zone rotates over the
		// leader zones and the server within a zone over its servers.
		leaderZone := lz[k%len(lz)]
		for _, z := range tenant.zones {
			nodes := c.zoneNodes(z)
			idx := k % len(nodes)
			if z == leaderZone {
				idx = (k / len(lz)) % len(nodes)
			}
			tb.replicas = append(tb.replicas, nodes[idx].name)
			if z == leaderZone {
				tb.leader = nodes[idx].name
			}
		}
		if len(spec.Leaders) > 0 {
			if err := c.placeLeader(t, tb, spec.Leaders[k%len(spec.Leaders)]); err != nil {
				return nil, err
			}
		}
	}
	return t, nil
}

// placeLeader makes node the leader of tb, moving tb's replica in node's
// zone onto node.
func (c *Cluster) placeLeader(t *tableModel, tb *tablet, node string) error {
	n := c.nodes[node]
	if n == nil {
		return fmt.Errorf("obsim: unknown node %q", node)
	}
	if c.zone(n.zone).Type == "ReadOnly" {
		return fmt.Errorf("obsim: node %s is in ReadOnly zone %s and cannot lead", node, n.zone)
	}
	for i, z := range t.tenant.zones {
		if z == n.zone {
			tb.replicas[i] = node
			tb.leader = node
			return nil
		}
	}
	return fmt.Errorf("obsim: tenant %s has no replica in zone %s (node %s)", t.tenant.name, n.zone, node)
}

// findTable looks a table up by "[tenant.]db.table".
func (c *Cluster) findTable(name string) (*tableModel, error) {
	parts := strings.Split(name, ".")
	var matches []*tableModel
	for _, t := range c.tenants {
		for _, tb := range t.tables {
			switch {
			case len(parts) == 3 && strings.EqualFold(parts[0], t.name) && strings.EqualFold(parts[1], tb.db) && strings.EqualFold(parts[2], tb.name),
				len(parts) == 2 && strings.EqualFold(parts[0], tb.db) && strings.EqualFold(parts[1], tb.name),
				len(parts) == 1 && strings.EqualFold(parts[0], tb.name):
				matches = append(matches, tb)
			}
		}
	}
	switch len(matches) {
	case 0:
		return nil, fmt.Errorf("obsim: unknown table %q", name)
	case 1:
		return matches[0], nil
	}
	return nil, fmt.Errorf("obsim: table %q is ambiguous; use tenant.db.table", name)
}

// findTablet finds a tablet by partition name ("p1", "p0sp1", "p0.sp1"),
// index or tablet id.
func (t *tableModel) findTablet(part string) (*tablet, error) {
	want := strings.ReplaceAll(part, ".", "")
	for _, tb := range t.tablets {
		if strings.EqualFold(tb.name, want) || strconv.FormatInt(tb.id, 10) == part {
			return tb, nil
		}
	}
	if i, err := strconv.Atoi(part); err == nil && i >= 0 && i < len(t.tablets) {
		return t.tablets[i], nil
	}
	if part == "" && len(t.tablets) == 1 {
		return t.tablets[0], nil
	}
	return nil, fmt.Errorf("obsim: table %s has no partition %q", t.fullName(), part)
}

// tableFor finds the model of a table a session statement names.
func (c *Cluster) tableFor(tenant, db, table string) *tableModel {
	for _, t := range c.tenants {
		if !strings.EqualFold(t.name, tenant) {
			continue
		}
		for _, tb := range t.tables {
			if strings.EqualFold(tb.db, db) && strings.EqualFold(tb.name, table) {
				return tb
			}
		}
	}
	return nil
}

// tenantByName finds a tenant (case-insensitively).
func (c *Cluster) tenantByName(name string) *tenantModel {
	for _, t := range c.tenants {
		if strings.EqualFold(t.name, name) {
			return t
		}
	}
	return nil
}

// onZone reports whether the tenant has units in zone.
func (t *tenantModel) onZone(zone string) bool {
	for _, z := range t.zones {
		if z == zone {
			return true
		}
	}
	return false
}

// TableInfo describes a table and the placement of its partitions, for the
// Go API and the control endpoint.
type TableInfo struct {
	Tenant     string          `json:"tenant"`
	Database   string          `json:"database"`
	Name       string          `json:"name"`
	TableID    int64           `json:"table_id"`
	Partitions []PartitionInfo `json:"partitions"`
}

// PartitionInfo is one tablet of a table.
type PartitionInfo struct {
	Name     string   `json:"name"`
	TabletID int64    `json:"tablet_id"`
	LSID     int64    `json:"ls_id"`
	Leader   string   `json:"leader"`
	Replicas []string `json:"replicas"`
}

// Tables lists the topology's tables with their current placement.
func (c *Cluster) Tables() []TableInfo {
	c.mu.Lock()
	defer c.mu.Unlock()
	var out []TableInfo
	for _, t := range c.tenants {
		for _, tb := range t.tables {
			ti := TableInfo{Tenant: t.name, Database: tb.db, Name: tb.name, TableID: tb.id}
			for _, p := range tb.tablets {
				ti.Partitions = append(ti.Partitions, PartitionInfo{Name: p.name, TabletID: p.id, LSID: p.lsID,
					Leader: p.leader, Replicas: append([]string(nil), p.replicas...)})
			}
			out = append(out, ti)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].TableID < out[j].TableID })
	return out
}

// PartitionOf computes the partition a row key falls in, the way obsim
// decides partition hits: key maps column names to SQL literals. It
// returns the partition name, or an error when the key does not determine
// one partition.
func (c *Cluster) PartitionOf(table string, key map[string]string) (string, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	t, err := c.findTable(table)
	if err != nil {
		return "", err
	}
	row := map[string]value{}
	for k, lit := range key {
		v, ok := parseLiteral(lit)
		if !ok {
			return "", fmt.Errorf("obsim: bad literal %q", lit)
		}
		row[strings.ToLower(k)] = v
	}
	st := &stmtInfo{kind: stmtSelect, where: map[string][]value{}}
	for k, v := range row {
		st.where[k] = []value{v}
	}
	tablets, all := t.tabletsFor(st)
	if all || len(tablets) != 1 {
		return "", fmt.Errorf("obsim: key does not determine one partition of %s", t.fullName())
	}
	return tablets[0].name, nil
}
