package route

import (
	"context"
	"errors"
	"fmt"

	"obgate/mysqlproto"
)

// tabletBatch bounds the tablet ids of one partition-entry query.
const tabletBatch = 200

var errQueueFull = errors.New("location fetch queue is full")

// fetchTable reads one table's location over the cluster's location
// connection: the table entry, and for a partitioned table its partition
// key info, partitions, sub-partitions and the replicas of every tablet
// (ODP's sequence TABLE_ENTRY → PART_INFO → FIRST_PART → SUB_PART, then
// the partition entries in batches). Runs on the location fetcher.
func (c *Cluster) fetchTable(ctx context.Context, tenant, db, table string) (*TableEntry, error) {
	if err := checkNames(tenant, db, table); err != nil {
		// Quoted: the name is a client's, and may hold anything.
		return nil, fmt.Errorf("location of %q.%q.%q: %w", tenant, db, table, err)
	}
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

// readTable runs the location SQL of one table. A name CheckName refuses
// fails it before any SQL is sent.
func readTable(cl *mysqlproto.Client, tenant, db, table string) (*TableEntry, error) {
	q, err := sqlTableEntry(tenant, db, table)
	if err != nil {
		return nil, err
	}
	res, err := cl.Query(q)
	if err != nil {
		return nil, err
	}
	e := tableEntryOf(res, tenant, db, table)
	if !e.Exists {
		return e, nil // the cluster does not know it
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
		q, err := sqlTablets(tenant, db, table, ids[start:min(start+tabletBatch, len(ids))])
		if err != nil {
			return nil, err
		}
		res, err := cl.Query(q)
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
	q, err := sqlPartInfo(tableID, tenant)
	if err != nil {
		return nil, err
	}
	info, err := cl.Query(q)
	if err != nil {
		return nil, err
	}
	if len(info.Rows) == 0 {
		return nil, nil
	}
	spec := partInfoSpecOf(info)
	if q, err = sqlFirstParts(tableID, tenant); err != nil {
		return nil, err
	}
	firsts, err := cl.Query(q)
	if err != nil {
		return nil, err
	}
	var subs []SubPartRow
	if spec.Level >= 2 {
		if q, err = sqlSubParts(tableID, tenant); err != nil {
			return nil, err
		}
		res, err := cl.Query(q)
		if err != nil {
			return nil, err
		}
		subs = subPartRowsOf(res)
	}
	return NewPartDesc(spec, partRowsOf(firsts), subs)
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
