package route

import (
	"net"
	"strconv"

	"obgate/mysqlproto"
)

// This file decodes the rows of the location queries (metasql.go) into
// entries, locations and partition rows. The rows come from a server, and
// a decoder takes what it can: a value that does not parse reads as 0, and
// a row that names no reachable replica is skipped, never a panic
// (fuzz_decoders_test.go).

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
)

// tableEntryOf decodes the table entry query's rows: a table the cluster
// does not list (no rows) is an entry that does not exist. The entry's
// First is never nil for a table that exists.
func tableEntryOf(res *mysqlproto.Result, tenant, db, table string) *TableEntry {
	e := &TableEntry{Tenant: tenant, Database: db, Table: table}
	if len(res.Rows) == 0 {
		return e
	}
	e.Exists = true
	e.TableID = atoi64(res.String(0, "table_id"))
	e.PartNum = int(atoi64(res.String(0, "part_num")))
	e.ReplicaNum = int(atoi64(res.String(0, "replica_num")))
	e.SchemaVersion = atoi64(res.String(0, "schema_version"))
	e.TableType = int(atoi64(res.String(0, "table_type")))
	e.First = tabletLocations(res)[0]
	if e.First == nil {
		e.First = &TabletLocation{}
	}
	for i := range res.Rows {
		if atoi64(res.String(i, "dup_replica_type")) != 0 {
			e.DupReplica = true
		}
	}
	return e
}

// partInfoSpecOf decodes the partition info query's rows (at least one):
// the partitioning of the first row and one key per row.
func partInfoSpecOf(info *mysqlproto.Result) PartInfoSpec {
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
	return spec
}

// partRowsOf decodes the first-level partition query's rows.
func partRowsOf(res *mysqlproto.Result) []PartRow {
	parts := make([]PartRow, 0, len(res.Rows))
	for i := range res.Rows {
		parts = append(parts, PartRow{
			PartID:     atoi64(res.String(i, "part_id")),
			TabletID:   atoi64(res.String(i, "tablet_id")),
			Name:       res.String(i, "part_name"),
			HighBound:  column(res, i, "high_bound_val_bin"),
			SubPartNum: atoi64(res.String(i, "sub_part_num")),
		})
	}
	return parts
}

// subPartRowsOf decodes the sub-partition query's rows.
func subPartRowsOf(res *mysqlproto.Result) []SubPartRow {
	subs := make([]SubPartRow, 0, len(res.Rows))
	for i := range res.Rows {
		subs = append(subs, SubPartRow{
			PartID:    atoi64(res.String(i, "part_id")),
			SubPartID: atoi64(res.String(i, "sub_part_id")),
			TabletID:  atoi64(res.String(i, "tablet_id")),
			Name:      res.String(i, "part_name"),
			HighBound: column(res, i, "high_bound_val_bin"),
		})
	}
	return subs
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
		if err != nil {
			continue
		}
		addr, ok := serverAddr(res.String(i, "svr_ip"), port)
		if !ok {
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
			Addr:     addr,
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

// column returns a copy of a raw column value (nil when NULL or missing).
func column(res *mysqlproto.Result, row int, name string) []byte {
	for i, c := range res.Columns {
		if c.Name == name && row < len(res.Rows) && res.Rows[row][i] != nil {
			return append([]byte{}, res.Rows[row][i]...)
		}
	}
	return nil
}

// serverAddr joins a row's svr_ip and sql_port into the address obgate
// dials. ok is false when they make no such address: a port no server
// can listen on, or an ip that does not read back out of ip:port (empty,
// or holding brackets); such a row names no server obgate could reach,
// and is skipped.
func serverAddr(ip string, port int) (addr string, ok bool) {
	if ip == "" || port <= 0 || port > 65535 {
		return "", false
	}
	addr = joinHostPort(ip, port)
	if host, _, err := net.SplitHostPort(addr); err != nil || host != ip {
		return "", false
	}
	return addr, true
}

func atoi64(s string) int64 {
	v, _ := strconv.ParseInt(s, 10, 64)
	return v
}
