package route

import (
	"context"
	"testing"
	"time"
)

// putPartEntry publishes a partitioned AVAIL entry t.db.tbl with desc d,
// every tablet led by a different server.
func (tc *testCluster) putPartEntry(tbl string, d *PartDesc) *TableEntry {
	key := locationKey(nil, "t", "db", []byte(tbl))
	s := tc.locations.add(string(key), "t", "db", tbl)
	<-waitQueued(tc.locations)
	e := &TableEntry{Tenant: "t", Database: "db", Table: tbl, Exists: true, TableID: 500002, PartNum: d.NumTablets(),
		Part: d, tablets: map[int64]*TabletLocation{}}
	addrs := []string{"a1:1", "a2:1", "a3:1"}
	for i, id := range d.Tablets() {
		l := &TabletLocation{TabletID: id}
		for j := range addrs {
			l.Replicas = append(l.Replicas, Replica{Addr: addrs[(i+j)%3], Leader: j == 0})
		}
		e.tablets[id] = l
	}
	all := make([]*TabletLocation, 0, len(e.tablets))
	for _, l := range e.tablets {
		all = append(all, l)
	}
	e.First = all[0]
	e.holders = holdersOf(all)
	tc.locations.finish(s, s.cur.Load(), e, nil)
	return s.cur.Load()
}

// BenchmarkRouteDecision is the whole routing decision of a point
// statement on a cached KEY-partitioned table: the lexer, the cache
// lookup, the partition calculation and the replica order, as a session
// makes it before every statement.
func BenchmarkRouteDecision(b *testing.B) {
	t := &testing.T{}
	tc := newTestCluster(t, false)
	tc.putPartEntry("sbtest1", descKey(b))
	tc.locations.clock.Store(time.Now().UnixNano()) // as the running fetcher keeps it
	r := NewRouter(nil)
	var ep ExecParams
	prepared := execPayload([]execParam{{typ: myLongLong, value: leInt(4921, 8)}}, true)
	for _, bc := range []struct {
		name   string
		sql    string
		params bool
	}{
		{"text", "SELECT c FROM sbtest1 WHERE id=4921", false},
		{"execute", "SELECT c FROM sbtest1 WHERE id=?", true},
	} {
		sql := []byte(bc.sql)
		b.Run(bc.name, func(b *testing.B) {
			keyBuf := make([]byte, 0, 64)
			dst := make([]string, 0, 8)
			var f Facts
			if bc.params {
				f = Lex(sql) // an execute's facts are lexed once, at prepare
			}
			req := &Request{Cluster: tc.Cluster, Tenant: "t"}
			b.ReportAllocs()
			for b.Loop() {
				var params Params
				if bc.params {
					ep.Reset(prepared, 1, nil)
					params = &ep
				} else {
					f = Lex(sql)
				}
				req.StmtRoute = StmtRoute{Stmt: sql, Facts: &f, Params: params, Database: "db", KeyBuf: &keyBuf, PartitionRoute: true}
				rt, err := r.Plan(context.Background(), req, dst)
				if err != nil || !rt.FirstIsLeader() {
					b.Fatalf("%+v %v", rt, err)
				}
				dst = rt.Addrs
			}
		})
	}
}
