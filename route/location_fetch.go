package route

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"obgate/mysqlproto"
)

// Location SQL of OceanBase 4.x, word for word ODP's (odp-behaviour.md
// §5.2). Tenant, database and table names have ' doubled.
const (
	sqlTableEntryFmt = "SELECT /*+READ_CONSISTENCY(WEAK)*/ A.*, B.svr_port as svr_port FROM oceanbase.__all_virtual_proxy_schema A inner join oceanbase.DBA_OB_SERVERS B ON A.svr_ip = B.svr_ip and A.sql_port = B.sql_port WHERE A.tenant_name = '%s' AND A.database_name = '%s' AND A.table_name = '%s' AND A.tablet_id = 0 ORDER BY A.role ASC LIMIT 9223372036854775807"

	sqlTabletsFmt = "SELECT /*+READ_CONSISTENCY(WEAK)*/ A.*, B.svr_port as svr_port FROM oceanbase.__all_virtual_proxy_schema A inner join oceanbase.DBA_OB_SERVERS B ON A.svr_ip = B.svr_ip and A.sql_port = B.sql_port WHERE A.tenant_name = '%s' AND A.database_name = '%s' AND A.table_name = '%s' AND A.tablet_id IN (%s) ORDER BY A.tablet_id, A.role ASC LIMIT 9223372036854775807"

	sqlPartInfoFmt = "SELECT /*+READ_CONSISTENCY(WEAK)*/ * FROM oceanbase.__all_virtual_proxy_partition_info WHERE table_id = %d and tenant_name = '%s' order by part_key_idx LIMIT 128;"

	sqlFirstPartsFmt = "SELECT /*+READ_CONSISTENCY(WEAK)*/  A.tablet_id as tablet_id, IFNULL((SELECT B.ls_id FROM oceanbase.__all_virtual_tablet_to_ls B WHERE A.tablet_id = B.tablet_id AND B.table_id = %d AND B.tenant_id = (SELECT tenant_id FROM oceanbase.DBA_OB_TENANTS WHERE tenant_name = '%s' LIMIT 1) LIMIT 1), -1) as ls_id, A.part_id as part_id, A.part_name as part_name, A.high_bound_val_bin as high_bound_val_bin, A.sub_part_num AS sub_part_num FROM oceanbase.__all_virtual_proxy_partition A WHERE A.table_id = %d AND A.tenant_name = '%s'LIMIT 9223372036854775807;"

	sqlSubPartsFmt = "SELECT /*+READ_CONSISTENCY(WEAK)*/  A.tablet_id as tablet_id, IFNULL((SELECT B.ls_id FROM oceanbase.__all_virtual_tablet_to_ls B WHERE A.tablet_id = B.tablet_id AND B.table_id = %d AND B.tenant_id = (SELECT tenant_id FROM oceanbase.DBA_OB_TENANTS WHERE tenant_name = '%s' LIMIT 1) LIMIT 1), -1) as ls_id, A.part_id as part_id, A.sub_part_id as sub_part_id, A.part_name as part_name, A.high_bound_val_bin as high_bound_val_bin FROM oceanbase.__all_virtual_proxy_sub_partition A WHERE A.table_id = %d AND A.tenant_name = '%s'LIMIT 9223372036854775807;"
)

// Replica roles and types of __all_virtual_proxy_schema. Replica types are
// ObReplicaType (obproxy src/lib/ob_define.h): FULL 0, LOGONLY 5,
// READONLY 16, MEMONLY 20, ENCRYPTION_LOGONLY 261. A log-only replica
// holds no data and never serves SQL, so it is skipped, as ODP skips it.
const (
	roleLeader                   = 1
	roleFollower                 = 2
	replicaTypeLogOnly           = 5
	replicaTypeReadOnly          = 16
	replicaTypeEncryptionLogOnly = 261
	// tabletBatch bounds the tablet ids of one partition-entry query.
	tabletBatch = 200
)

var errQueueFull = errors.New("location fetch queue is full")

// fetchTable reads one table's location over the cluster's location
// connection: the table entry, and for a partitioned table its partition
// key info, partitions, sub-partitions and the replicas of every tablet
// (ODP's sequence TABLE_ENTRY → PART_INFO → FIRST_PART → SUB_PART, then
// the partition entries in batches). Runs on the location fetcher.
func (c *Cluster) fetchTable(ctx context.Context, tenant, db, table string) (*TableEntry, error) {
	var e *TableEntry
	err := c.onLocationConn(ctx, func(cl *mysqlproto.Client) (err error) {
		e, err = readTable(cl, tenant, db, table)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("location of %s.%s.%s: %w", tenant, db, table, err)
	}
	return e, nil
}

// onLocationConn runs fn over the cluster's location connection, once the
// cluster is ready, holding locMu. A failure of fn other than a server's
// SQL error drops the connection, so the next use opens a new one.
func (c *Cluster) onLocationConn(ctx context.Context, fn func(*mysqlproto.Client) error) error {
	if _, err := c.Ready(ctx); err != nil {
		return err
	}
	c.locMu.Lock()
	defer c.locMu.Unlock()
	cl, err := c.locationConn(ctx)
	if err != nil {
		return err
	}
	c.bound(cl)
	if err := fn(cl); err != nil {
		if _, isSQL := mysqlproto.AsSQLError(err); !isSQL {
			_ = cl.Close()
			c.loc = nil
		}
		return err
	}
	return nil
}

// locationConn returns the location connection, opening one when needed.
// Called with locMu held.
func (c *Cluster) locationConn(ctx context.Context) (*mysqlproto.Client, error) {
	if c.loc != nil {
		return c.loc, nil
	}
	cl, _, err := c.dialMeta(ctx)
	if err != nil {
		return nil, err
	}
	c.loc = cl
	return cl, nil
}

// closeLocation closes the location connection.
func (c *Cluster) closeLocation() {
	c.locMu.Lock()
	if c.loc != nil {
		_ = c.loc.Close()
		c.loc = nil
	}
	c.locMu.Unlock()
}

// readTable runs the location SQL of one table.
func readTable(cl *mysqlproto.Client, tenant, db, table string) (*TableEntry, error) {
	qt, qd, qn := quoteSQL(tenant), quoteSQL(db), quoteSQL(table)
	res, err := cl.Query(fmt.Sprintf(sqlTableEntryFmt, qt, qd, qn))
	if err != nil {
		return nil, err
	}
	e := &TableEntry{Tenant: tenant, Database: db, Table: table}
	if len(res.Rows) == 0 {
		return e, nil // the cluster does not know it
	}
	e.Exists = true
	e.TableID = atoi64(res.String(0, "table_id"))
	e.PartNum = int(atoi64(res.String(0, "part_num")))
	e.ReplicaNum = int(atoi64(res.String(0, "replica_num")))
	e.SchemaVersion = atoi64(res.String(0, "schema_version"))
	e.TableType = int(atoi64(res.String(0, "table_type")))
	locs := tabletLocations(res)
	e.First = locs[0]
	if e.First == nil {
		e.First = &TabletLocation{}
	}
	for i := range res.Rows {
		if atoi64(res.String(i, "dup_replica_type")) != 0 {
			e.DupReplica = true
		}
	}
	if e.PartNum <= 1 {
		e.holders = holdersOf([]*TabletLocation{e.First})
		return e, nil
	}
	desc, err := readPartitions(cl, tenant, e.TableID)
	if err != nil {
		return nil, err
	}
	if desc == nil {
		// Listed with several partitions but without partition info: route
		// by the first tablet, as for a table that is not partitioned.
		e.holders = holdersOf([]*TabletLocation{e.First})
		return e, nil
	}
	e.Part = desc
	e.tablets = make(map[int64]*TabletLocation, desc.NumTablets())
	ids := desc.Tablets()
	for start := 0; start < len(ids); start += tabletBatch {
		batch := ids[start:min(start+tabletBatch, len(ids))]
		list := make([]string, len(batch))
		for i, id := range batch {
			list[i] = strconv.FormatInt(id, 10)
		}
		res, err := cl.Query(fmt.Sprintf(sqlTabletsFmt, qt, qd, qn, strings.Join(list, ", ")))
		if err != nil {
			return nil, err
		}
		for id, l := range tabletLocations(res) {
			e.tablets[id] = l
		}
	}
	all := make([]*TabletLocation, 0, len(e.tablets))
	for _, l := range e.tablets {
		all = append(all, l)
	}
	e.holders = holdersOf(all)
	return e, nil
}

// readPartitions reads a table's partitioning: key info, partitions and
// sub-partitions. It returns nil without an error for a table the cluster
// lists no partition info for.
func readPartitions(cl *mysqlproto.Client, tenant string, tableID int64) (*PartDesc, error) {
	qt := quoteSQL(tenant)
	info, err := cl.Query(fmt.Sprintf(sqlPartInfoFmt, tableID, qt))
	if err != nil {
		return nil, err
	}
	if len(info.Rows) == 0 {
		return nil, nil
	}
	spec := PartInfoSpec{
		Level:       int(atoi64(info.String(0, "part_level"))),
		PartType:    PartFunc(atoi64(info.String(0, "part_type"))),
		PartNum:     atoi64(info.String(0, "part_num")),
		SubPartType: PartFunc(atoi64(info.String(0, "sub_part_type"))),
		SubPartNum:  atoi64(info.String(0, "sub_part_num")),
		PartExpr:    info.String(0, "part_expr"),
		SubPartExpr: info.String(0, "sub_part_expr"),
	}
	for i := range info.Rows {
		spec.Keys = append(spec.Keys, PartKey{
			Name:      info.String(i, "part_key_name"),
			Level:     int(atoi64(info.String(i, "part_key_level"))),
			Type:      mysqlproto.OBObjType(atoi64(info.String(i, "part_key_type"))),
			Collation: atoi64(info.String(i, "part_key_collation_type")),
			Precision: int(atoi64(info.String(i, "part_key_precision"))),
			Scale:     int(atoi64(info.String(i, "part_key_scale"))),
			Idx:       int(atoi64(info.String(i, "part_key_idx"))),
		})
	}
	firsts, err := cl.Query(fmt.Sprintf(sqlFirstPartsFmt, tableID, qt, tableID, qt))
	if err != nil {
		return nil, err
	}
	parts := make([]PartRow, 0, len(firsts.Rows))
	for i := range firsts.Rows {
		parts = append(parts, PartRow{
			PartID:     atoi64(firsts.String(i, "part_id")),
			TabletID:   atoi64(firsts.String(i, "tablet_id")),
			Name:       firsts.String(i, "part_name"),
			HighBound:  column(firsts, i, "high_bound_val_bin"),
			SubPartNum: atoi64(firsts.String(i, "sub_part_num")),
		})
	}
	var subs []SubPartRow
	if spec.Level >= 2 {
		res, err := cl.Query(fmt.Sprintf(sqlSubPartsFmt, tableID, qt, tableID, qt))
		if err != nil {
			return nil, err
		}
		subs = make([]SubPartRow, 0, len(res.Rows))
		for i := range res.Rows {
			subs = append(subs, SubPartRow{
				PartID:    atoi64(res.String(i, "part_id")),
				SubPartID: atoi64(res.String(i, "sub_part_id")),
				TabletID:  atoi64(res.String(i, "tablet_id")),
				Name:      res.String(i, "part_name"),
				HighBound: column(res, i, "high_bound_val_bin"),
			})
		}
	}
	return NewPartDesc(spec, parts, subs)
}

// tabletLocations groups __all_virtual_proxy_schema rows by tablet: the
// leader first, then followers; other roles and unusable rows are skipped.
func tabletLocations(res *mysqlproto.Result) map[int64]*TabletLocation {
	out := map[int64]*TabletLocation{}
	for i := range res.Rows {
		role := atoi64(res.String(i, "role"))
		if role != roleLeader && role != roleFollower {
			continue
		}
		port, err := strconv.Atoi(res.String(i, "sql_port"))
		if err != nil || port <= 0 {
			continue
		}
		rtype := atoi64(res.String(i, "replica_type"))
		if rtype == replicaTypeLogOnly || rtype == replicaTypeEncryptionLogOnly {
			continue
		}
		id := atoi64(res.String(i, "tablet_id"))
		l := out[id]
		if l == nil {
			l = &TabletLocation{TabletID: id}
			out[id] = l
		}
		r := Replica{
			Addr:     joinHostPort(res.String(i, "svr_ip"), port),
			Leader:   role == roleLeader,
			ReadOnly: rtype == replicaTypeReadOnly,
		}
		if r.Leader {
			l.Replicas = append([]Replica{r}, l.Replicas...)
		} else {
			l.Replicas = append(l.Replicas, r)
		}
	}
	return out
}

// holdersOf lists each server of the locations once.
func holdersOf(locs []*TabletLocation) []string {
	var out []string
	seen := map[string]bool{}
	for _, l := range locs {
		for _, r := range l.Replicas {
			if !seen[r.Addr] {
				seen[r.Addr] = true
				out = append(out, r.Addr)
			}
		}
	}
	return out
}

// column returns a copy of a raw column value (nil when NULL or missing).
func column(res *mysqlproto.Result, row int, name string) []byte {
	for i, c := range res.Columns {
		if c.Name == name && row < len(res.Rows) && res.Rows[row][i] != nil {
			return append([]byte{}, res.Rows[row][i]...)
		}
	}
	return nil
}

func atoi64(s string) int64 {
	v, _ := strconv.ParseInt(s, 10, 64)
	return v
}
