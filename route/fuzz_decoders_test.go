package route

import (
	"bytes"
	"net"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"obgate/internal/sqltext"
	"obgate/mysqlproto"
)

// Fuzz targets for the decoders of what servers and configuration send
// obgate: a CALL's routine name, cluster_rootservice_list, and the rows of
// the location, partition and single-leader queries. None may panic on
// any input (a bad row is skipped or makes the lookup fail); each checks
// an invariant of what it returns.

// FuzzCallTarget checks that a CALL's routine name, when found, is not
// empty, and that writing the parts back as backquoted names reads the
// same parts again.
func FuzzCallTarget(f *testing.F) {
	for _, s := range []string{
		"CALL p()", "call p", "/* c */ CALL d.p(1, 'a')", "CALL `my db`.`p``x`(1);", "CALL d.pk.p(?)",
		"CALL p(1) /* marker */", "CALL", "CALL 'p'()", "CALL a.b.c.d()", "CALL `p", "CALL ``()", "CALL `x\\`.`y'`()",
		"CALL d.`` ", "CALL\x00p", "CALL `a\x00b`()", "CALL p -- x\n()", "CALL `\xff`.p",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, sql []byte) {
		db, pkg, name, ok := CallTarget(sql)
		if !ok {
			if db != "" || pkg != "" || name != "" {
				t.Fatalf("CallTarget(%q) not ok but returned %q %q %q", sql, db, pkg, name)
			}
			return
		}
		if name == "" {
			t.Fatalf("CallTarget(%q): empty routine name", sql)
		}
		if pkg != "" && db == "" {
			t.Fatalf("CallTarget(%q): package %q without a database", sql, pkg)
		}
		var parts []string
		for _, p := range []string{db, pkg, name} {
			if p == "" {
				continue
			}
			id, err := sqltext.Ident(p)
			if err != nil {
				return // a NUL: no name to write back
			}
			parts = append(parts, id)
		}
		again := "CALL " + strings.Join(parts, ".") + "()"
		db2, pkg2, name2, ok2 := CallTarget([]byte(again))
		if !ok2 || db2 != db || pkg2 != pkg || name2 != name {
			t.Fatalf("CallTarget(%q) = %q %q %q; written back as %q it reads %q %q %q %v", sql, db, pkg, name, again, db2, pkg2, name2, ok2)
		}
	})
}

// FuzzParseClusterList checks that a list that parses has named clusters
// with addresses, none holding a separator or outer spaces, and that
// writing it back parses to the same clusters.
func FuzzParseClusterList(f *testing.F) {
	for _, s := range []string{
		"", "c=127.0.0.1:2881", "c1=1.1.1.1:1;2.2.2.2:2|c2=[::1]:3", " c = a:1 ; b:2 | ", "=a:1", "c=", "c=;;",
		"c=a:1|c=b:2", "a=b=c", "|||", "c=\x00", "名=主机:1",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		m, err := ParseClusterList(s)
		if err != nil {
			return
		}
		names := make([]string, 0, len(m))
		for name, addrs := range m {
			if name == "" || name != strings.TrimSpace(name) || strings.ContainsAny(name, "|=") {
				t.Fatalf("ParseClusterList(%q): cluster name %q", s, name)
			}
			if len(addrs) == 0 {
				t.Fatalf("ParseClusterList(%q): cluster %q has no address", s, name)
			}
			for _, a := range addrs {
				if a == "" || a != strings.TrimSpace(a) || strings.ContainsAny(a, "|;") {
					t.Fatalf("ParseClusterList(%q): cluster %q address %q", s, name, a)
				}
			}
			names = append(names, name)
		}
		sort.Strings(names)
		var b strings.Builder
		for i, name := range names {
			if i > 0 {
				b.WriteByte('|')
			}
			b.WriteString(name + "=" + strings.Join(m[name], ";"))
		}
		again, err := ParseClusterList(b.String())
		if err != nil || len(again) != len(m) {
			t.Fatalf("ParseClusterList(%q) = %v; written back as %q: %v, %v", s, m, b.String(), again, err)
		}
		for name, addrs := range m {
			if !slices.Equal(again[name], addrs) {
				t.Fatalf("ParseClusterList(%q): %q has %v, written back %v", s, name, addrs, again[name])
			}
		}
	})
}

// fuzzResult builds a result set with the given columns from fuzz data:
// rows separated by '\n', cells by '|', missing cells empty, a cell
// "NULL" NULL. It has the shape every result mysqlproto.Client returns:
// every row as wide as the columns.
func fuzzResult(cols []string, data []byte) *mysqlproto.Result {
	res := &mysqlproto.Result{}
	for _, c := range cols {
		res.Columns = append(res.Columns, mysqlproto.Column{Name: c})
	}
	if len(data) == 0 {
		return res
	}
	for _, line := range bytes.Split(data, []byte("\n")) {
		row := make([][]byte, len(cols))
		for i, cell := range bytes.SplitN(line, []byte("|"), len(cols)) {
			if string(cell) != "NULL" {
				row[i] = append([]byte{}, cell...)
			}
		}
		res.Rows = append(res.Rows, row)
		if len(res.Rows) == 512 {
			break
		}
	}
	return res
}

// schemaCols are the __all_virtual_proxy_schema columns the decoders read.
var schemaCols = []string{"tablet_id", "svr_ip", "sql_port", "role", "replica_type", "table_id", "part_num",
	"replica_num", "schema_version", "table_type", "dup_replica_type"}

// FuzzLocationRows feeds rows of the table entry, partition entry and
// tenant server list queries (all of __all_virtual_proxy_schema) to their
// decoders: every tablet location found has replicas with usable ip:port
// addresses, leaders before followers; the tenant's servers are usable
// addresses, each once; an entry exists exactly when there are rows, and
// then has a first tablet.
func FuzzLocationRows(f *testing.F) {
	f.Add([]byte("0|10.0.0.1|2881|1|0|500002|1|3|1|3|0\n0|10.0.0.2|2881|2|0|500002|1|3|1|3|0\n0|10.0.0.3|2881|2|16|500002|1|3|1|3|0"))
	f.Add([]byte("200001|::1|2881|1|0\n200001|::1|2882|2|5\n200002|h|0|1|0\n200002|h|x|1|0\n200003|h|99999|1|261"))
	f.Add([]byte("1|a|1|2|0\n1|b|2|1|0\n1|c|3|1|0"))
	f.Add([]byte("NULL|NULL|NULL|NULL|NULL|NULL|NULL|NULL|NULL|NULL|NULL"))
	f.Add([]byte("-1|a|-5|1|0|-9223372036854775808|99999999999999999999"))
	f.Add([]byte(""))
	f.Fuzz(func(t *testing.T, data []byte) {
		res := fuzzResult(schemaCols, data)
		for id, l := range tabletLocations(res) {
			if l.TabletID != id || len(l.Replicas) == 0 {
				t.Fatalf("tablet %d: location %+v", id, l)
			}
			followers := false
			for _, r := range l.Replicas {
				checkAddr(t, r.Addr)
				if r.Leader && followers {
					t.Fatalf("tablet %d: a leader after a follower: %+v", id, l.Replicas)
				}
				followers = followers || !r.Leader
			}
		}
		servers := tenantServersOf(res)
		for i, a := range servers {
			checkAddr(t, a)
			if slices.Contains(servers[:i], a) {
				t.Fatalf("tenant server %s listed twice: %v", a, servers)
			}
		}
		e := tableEntryOf(res, "t", "db", "tbl")
		if e.Exists != (len(res.Rows) > 0) || (e.Exists && e.First == nil) {
			t.Fatalf("%d rows: entry exists %v, first %v", len(res.Rows), e.Exists, e.First)
		}
		if e.Exists {
			for _, a := range holdersOf([]*TabletLocation{e.First}) {
				checkAddr(t, a)
			}
		}
	})
}

// checkAddr fails t unless a is host:port with a port a server can have.
func checkAddr(t *testing.T, a string) {
	t.Helper()
	_, p, err := net.SplitHostPort(a)
	if err != nil {
		t.Fatalf("address %q: %v", a, err)
	}
	if n, err := strconv.Atoi(p); err != nil || n <= 0 || n > 65535 {
		t.Fatalf("address %q: port %q", a, p)
	}
}

// Columns of the partition queries the decoders read.
var (
	partInfoCols = []string{"part_level", "part_type", "part_num", "sub_part_type", "sub_part_num", "part_expr",
		"sub_part_expr", "part_key_name", "part_key_level", "part_key_type", "part_key_collation_type",
		"part_key_precision", "part_key_scale", "part_key_idx"}
	partCols    = []string{"part_id", "tablet_id", "part_name", "high_bound_val_bin", "sub_part_num"}
	subPartCols = []string{"part_id", "sub_part_id", "tablet_id", "part_name", "high_bound_val_bin"}
)

// FuzzPartitionRows feeds rows of the partition info, partition and
// sub-partition queries to their decoders and NewPartDesc, then
// calculates statements on a description that builds: nothing panics,
// and a description's tablets are the ones its partitions lead to.
func FuzzPartitionRows(f *testing.F) {
	f.Add([]byte("1|0|4|0|0|id||id|1|5|63|0|0|0"), []byte("0|200001|p0||0\n1|200002|p1||0\n2|200003|p2||0\n3|200004|p3||0"), []byte(""))
	f.Add([]byte("1|1|3|0|0|name||name|1|22|45|0|0|0"), []byte("0|1|p0||0\n1|2|p1||0\n2|3|p2||0"), []byte(""))
	f.Add([]byte("2|0|2|1|2|id|k|id|1|5|63|0|0|0\nNULL|NULL|NULL|NULL|NULL|NULL|NULL|k|2|22|45|0|0|1"),
		[]byte("0|0|p0||2\n1|0|p1||2"), []byte("0|0|11|p0s0|\n0|1|12|p0s1|\n1|0|13|p1s0|\n1|1|14|p1s1|"))
	f.Add([]byte("1|3|2|0|0|id||id|1|5|63|0|0|0"), []byte("0|1|p0|\x01\x02\x03|0\n1|2|p1|\xff|0"), []byte(""))
	f.Add([]byte("9|99|-1|-1|-1|||||||||"), []byte("x|y|z|w|v"), []byte("\n\n\n"))
	f.Fuzz(func(t *testing.T, info, parts, subs []byte) {
		infoRes := fuzzResult(partInfoCols, info)
		if len(infoRes.Rows) == 0 {
			return // readPartitions stops at no partition info
		}
		spec := partInfoSpecOf(infoRes)
		d, err := NewPartDesc(spec, partRowsOf(fuzzResult(partCols, parts)), subPartRowsOf(fuzzResult(subPartCols, subs)))
		if err != nil {
			return
		}
		ids := d.Tablets()
		if len(ids) != d.NumTablets() {
			t.Fatalf("%d tablets, NumTablets %d", len(ids), d.NumTablets())
		}
		for p := range d.NumParts() {
			for s := range max(1, d.NumSubParts(p)) {
				if id, ok := d.Tablet(p, s); ok && !slices.Contains(ids, id) {
					t.Fatalf("partition %d/%d leads to tablet %d, not one of %v", p, s, id, ids)
				}
			}
		}
		for _, q := range []string{"select * from t where id = 5", "select * from t where name = 'n1' and k = 3",
			"insert into t values (1, 'a')", "select * from t where id in (1, 2, 3)"} {
			var r PartResult
			r.TZ = time.UTC
			d.Calculate([]byte(q), nil, TableRef{Name: []byte("t")}, nil, &r)
			if r.Known {
				if id, ok := d.Tablet(r.Part, r.Sub); !ok || id != r.TabletID {
					t.Fatalf("%q: tablet %d at %d/%d, the description says %d %v", q, r.TabletID, r.Part, r.Sub, id, ok)
				}
			}
		}
	})
}

// FuzzSingleLeaderRows feeds rows of the single-leader query to its
// decoder: only single leaders are kept, each at a usable ip:port.
func FuzzSingleLeaderRows(f *testing.F) {
	f.Add([]byte("test|10.0.0.1:2881|1\nt2|10.0.0.2:2881|0\nt3|::1:2881|1"))
	f.Add([]byte("t|:1|1\nt|h:|1\nt|h:-1|1\nt|h:99999|1\nt|h:x|1\nNULL|NULL|NULL"))
	f.Fuzz(func(t *testing.T, data []byte) {
		res := fuzzResult([]string{"tenant_name", "leader_addr", "is_single_leader"}, data)
		for tenant, a := range singleLeadersOf(res) {
			checkAddr(t, a)
			found := false
			for i := range res.Rows {
				found = found || res.String(i, "tenant_name") == tenant && res.String(i, "is_single_leader") == "1"
			}
			if !found {
				t.Fatalf("tenant %q has a single leader %s no row says it has", tenant, a)
			}
		}
	})
}
