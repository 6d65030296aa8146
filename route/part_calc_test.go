package route

import (
	"strings"
	"testing"

	"obgate/mysqlproto"
)

// calcCase is one statement on one description. part and sub are the
// indexes Calculate must report (-1: unknown); the tablet is known
// exactly when how is HowKeys, HowPartition or HowOutOfRange.
type calcCase struct {
	sql       string
	part, sub int
	how       string
	lits      []string // LiteralParams for the placeholders, when not nil
	table     string   // the target table; "t" when empty
}

func knownHow(how string) bool {
	return how == HowKeys || how == HowPartition || how == HowOutOfRange
}

func runCalcCases(t *testing.T, d *PartDesc, cases []calcCase) {
	t.Helper()
	for _, tc := range cases {
		var params Params
		if tc.lits != nil {
			lp := &LiteralParams{}
			raw := make([][]byte, len(tc.lits))
			for i, l := range tc.lits {
				raw[i] = []byte(l)
			}
			lp.Reset(raw)
			params = lp
		}
		name := tc.table
		if name == "" {
			name = "t"
		}
		sql := []byte(tc.sql)
		f := Lex(sql)
		var r PartResult
		d.Calculate(sql, &f, TableRef{Name: []byte(name)}, params, &r)
		known := knownHow(tc.how)
		var tablet int64
		if known {
			tablet, _ = d.Tablet(tc.part, tc.sub)
		}
		wantSub := tc.sub
		if d.Level() == 1 {
			wantSub = -1
		}
		if r.Known != known || r.TabletID != tablet || r.Part != tc.part || r.Sub != wantSub || r.How != tc.how {
			t.Errorf("%s\n  got  known=%v tablet=%d part=%d sub=%d how=%q\n  want known=%v tablet=%d part=%d sub=%d how=%q",
				tc.sql, r.Known, r.TabletID, r.Part, r.Sub, r.How, known, tablet, tc.part, wantSub, tc.how)
		}
	}
}

// HASH(id) PARTITIONS 4: |id| % 4.
func TestCalculateHash(t *testing.T) {
	runCalcCases(t, descHash(t), []calcCase{
		{sql: "SELECT c FROM t WHERE id = 5", part: 1, how: HowKeys},
		{sql: "select * from t where id=-6", part: 2, how: HowKeys},
		{sql: "select * from t where id = '7'", part: 3, how: HowKeys},
		{sql: "select * from t where id = ' 9 '", part: 1, how: HowKeys},
		{sql: "select * from t where id = 'x'", part: -1, how: HowBadValue},
		{sql: "select * from t where id = 9223372036854775807", part: 3, how: HowKeys},
		{sql: "select * from t where id = -9223372036854775808", part: 3, how: HowKeys},
		{sql: "select * from t where id = 9223372036854775808", part: -1, how: HowBadValue},
		{sql: "select * from t where id is null", part: 0, how: HowKeys},
		{sql: "select * from t where id <=> null", part: 0, how: HowKeys},
		{sql: "select * from t where id = null", part: -1, how: HowNoKey},
		{sql: "select * from t where id is not null", part: -1, how: HowNoKey},
		{sql: "select * from t where id in (1, 5, 9)", part: 1, how: HowKeys},
		{sql: "select * from t where id in (1, 2)", part: -1, how: HowSeveral},
		{sql: "select * from t where id in (1, null, 5)", part: 1, how: HowKeys},
		{sql: "select * from t where id in (select id from u)", part: -1, how: HowUnsupported},
		{sql: "select * from t where id in (1, 2+3)", part: -1, how: HowUnsupported},
		{sql: "select * from t where id = 1 or id = 5", part: 1, how: HowKeys},
		{sql: "select * from t where id = 1 or id = 2", part: -1, how: HowSeveral},
		{sql: "select * from t where id = 1 || id = 9", part: 1, how: HowKeys},
		{sql: "select * from t where id = 1 or x = 2", part: -1, how: HowNoKey},
		{sql: "select * from t where id = 1 xor id = 5", part: -1, how: HowUnsupported},
		{sql: "select * from t where (id = 3)", part: 3, how: HowKeys},
		{sql: "select * from t where ((id = 3) and (x = 1))", part: 3, how: HowKeys},
		{sql: "select * from t where (id = 3 or id = 4) and x = 1", part: -1, how: HowNoKey},
		{sql: "select * from t where x = 1 and (id = 3)", part: 3, how: HowKeys},
		{sql: "select * from t where (id) = 3", part: -1, how: HowNoKey},
		{sql: "select * from t where id > 3", part: -1, how: HowNoKey},
		{sql: "select * from t where id between 1 and 3", part: -1, how: HowNoKey},
		{sql: "select * from t where id between 1 and 3 and id = 2", part: 2, how: HowKeys},
		{sql: "select * from t where x between 1 and 3 and id = 2", part: 2, how: HowKeys},
		{sql: "select * from t where x between id and 3 and id = 2", part: 2, how: HowKeys},
		{sql: "select * from t where id between 1+1 and k = 3", part: -1, how: HowUnsupported},
		{sql: "select * from t where id = 5 + 1", part: -1, how: HowUnsupported},
		{sql: "select * from t where id = 5 and id = 5", part: 1, how: HowKeys},
		{sql: "select * from t where id = 5 and id = 6", part: -1, how: HowEmpty},
		{sql: "select * from t where id in (1, 5) and id in (5, 6)", part: 1, how: HowKeys},
		{sql: "select * from t where not id = 5", part: -1, how: HowNoKey},
		{sql: "select * from t where !id = 5", part: -1, how: HowNoKey},
		{sql: "select * from t where id != 5", part: -1, how: HowNoKey},
		{sql: "select * from t where id <> 5", part: -1, how: HowNoKey},
		{sql: "select * from t where id not in (5)", part: -1, how: HowNoKey},
		{sql: "select * from t where id = 5 is true", part: -1, how: HowUnsupported},
		{sql: "select * from t where 5 = id", part: 1, how: HowKeys},
		{sql: "select * from t where 5 = id + 1", part: -1, how: HowUnsupported},
		{sql: "select * from t where t.id = 6", part: 2, how: HowKeys},
		{sql: "select * from t a where a.id = 6", part: 2, how: HowKeys},
		{sql: "select * from t as a where a.id = 6", part: 2, how: HowKeys},
		{sql: "select * from t a where b.id = 6", part: -1, how: HowNoKey},
		{sql: "select * from t a where t.id = 6", part: -1, how: HowNoKey},
		{sql: "select * from db1.t where db1.t.id = 6", part: 2, how: HowKeys},
		{sql: "select * from `t` where `id` = 6", part: 2, how: HowKeys},
		{sql: "SELECT * FROM T WHERE ID = 6", part: 2, how: HowKeys},
		{sql: "select * from t where id = 0x10", part: 0, how: HowKeys},
		{sql: "select * from t where id = -5", part: 1, how: HowKeys},
		{sql: "select * from t where id = - 5", part: 1, how: HowKeys},
		{sql: "select * from t where id = +5", part: 1, how: HowKeys},
		{sql: "select * from t where id = 1.5", part: -1, how: HowBadValue},
		{sql: "select * from t where id = 1e3", part: -1, how: HowUnsupported},
		{sql: "select * from t where id = true", part: 1, how: HowKeys},
		{sql: "select * from t where id = false", part: 0, how: HowKeys},
		{sql: "select * from t where id = 5 order by c limit 10", part: 1, how: HowKeys},
		{sql: "select * from t where id = 5 for update", part: 1, how: HowKeys},
		{sql: "select * from t where id = 5 lock in share mode", part: 1, how: HowKeys},
		{sql: "select * from t where id = 5 group by c having max(id) = 2", part: 1, how: HowKeys},
		{sql: "select * from t where id = 5 union select * from t where id = 5", part: -1, how: HowStatement},
		{sql: "select * from t where id = 5; select 1", part: -1, how: HowMulti},
		{sql: "select * from t where id = 5;", part: 1, how: HowKeys},
		{sql: "select * from t where c = 'x' and id = 5", part: 1, how: HowKeys},
		{sql: "select * from t where c like 'a%' and id = 5", part: 1, how: HowKeys},
		{sql: "select * from t where case when id = 1 and x = 2 then 1 end and id = 6", part: 2, how: HowKeys},
		{sql: "select * from t where case when x = 1 and id = 2 and y = 3 then 1 end", part: -1, how: HowNoKey},
		{sql: "select * from t where 1 = case when x = 1 and id = 2 and y = 3 then 1 end", part: -1, how: HowNoKey},
		{sql: "select * from t where id = case when x = 1 and id = 2 then 1 end and id = 3", part: 3, how: HowKeys},
		{sql: "select * from t where exists (select 1 from u where u.id = 1 and id = 3)", part: -1, how: HowNoKey},
		{sql: "select * from t where (select 1 from u where id = 3 and k = 2)", part: -1, how: HowNoKey},
		{sql: "select * from t where id = (select 5)", part: -1, how: HowUnsupported},
		{sql: "select * from t where id = ?", part: -1, how: HowNoParam},
		{sql: "select * from t where id = ?", part: 3, how: HowKeys, lits: []string{"7"}},
		{sql: "select * from t where id = ?", part: -1, how: HowNoParam, lits: []string{"now()"}},
		{sql: "select * from t where left(c, 1) = 'a' and id = 5", part: 1, how: HowKeys},
		{sql: "select count(*) from t where id = 5", part: 1, how: HowKeys},
		{sql: "select extract(year from d), (select max(x) from u) from t where id = 5", part: 1, how: HowKeys},
		{sql: "select * from t where id = 5 and x = 'it''s'", part: 1, how: HowKeys},
		{sql: "select * from t where id = 5 and x = 'unclosed", part: -1, how: HowIncomplete},
		{sql: "select * from t where id = 5 && x = 1", part: 1, how: HowKeys},
		{sql: "select /*+ read_consistency(weak) */ * from t /* c */ where id = 5 -- x", part: 1, how: HowKeys},
		{sql: "select * from t where /*!id = 5 and */ 1", part: 1, how: HowKeys},
		{sql: "select * from t", part: -1, how: HowNoKey},
		{sql: "select 1", part: -1, how: HowNoTable},
		{sql: "select * from u where id = 5", part: -1, how: HowNoTable},
		{sql: "select * from t, t where id = 5", part: -1, how: HowTwice},
		{sql: "select * from (select * from t where id = 5) x", part: -1, how: HowNoTable},
		{sql: "(select * from t where id = 5)", part: -1, how: HowStatement},
		{sql: "with x as (select 1) select * from t where id = 5", part: -1, how: HowStatement},
		{sql: "show tables", part: -1, how: HowStatement},
		{sql: "", part: -1, how: HowStatement},

		// Joins.
		{sql: "select a.*, b.* from t a join u b on a.id = b.id where a.id = 9", part: 1, how: HowKeys},
		{sql: "select * from u join t on t.id = 5", part: 1, how: HowKeys},
		{sql: "select * from u join t on t.id = 5 where u.x = 1 or u.x = 2", part: 1, how: HowKeys},
		{sql: "select * from u inner join t on u.k = t.k and t.id = 5", part: 1, how: HowKeys},
		{sql: "select * from u cross join t on t.id = 5", part: 1, how: HowKeys},
		{sql: "select * from u join t on t.id = 5 or t.id = 6", part: -1, how: HowNoKey},
		{sql: "select * from u left join t on t.id = 5", part: -1, how: HowNoKey},
		{sql: "select * from u left outer join t on u.k = t.k where t.id = 5", part: 1, how: HowKeys},
		{sql: "select * from u left join t on u.k = t.k where t.id is null", part: -1, how: HowNoKey},
		{sql: "select * from u join t using (id) where id = 6", part: 2, how: HowKeys},
		{sql: "select * from u natural join t where t.id = 6", part: 2, how: HowKeys},
		{sql: "select * from u straight_join t on t.id = 10", part: 2, how: HowKeys},
		{sql: "select * from u, t where t.id = 10 and u.id = 3", part: 2, how: HowKeys},
		{sql: "select * from (u join t on t.id = 10)", part: 2, how: HowKeys},
		{sql: "select * from u join (select 1 a) x on x.a = 1 join t on t.id = 10", part: 2, how: HowKeys},
		{sql: "select * from t force index (primary) where id = 10", part: 2, how: HowKeys},
		{sql: "select * from t use index (i1) ignore key for order by (i2) where id = 10", part: 2, how: HowKeys},
		{sql: "select * from t a join t b on a.id = b.id where a.id = 5", part: -1, how: HowTwice},

		// PARTITION ().
		{sql: "select * from t partition (p2) where id = 1", part: 2, how: HowPartition},
		{sql: "select * from t partition (P2) a", part: 2, how: HowPartition},
		{sql: "select * from t partition (`p2`)", part: 2, how: HowPartition},
		{sql: "select * from t partition (p9)", part: -1, how: HowBadName},
		{sql: "select * from t partition (p1, p2)", part: -1, how: HowSeveral},
		{sql: "select * from u partition (p9) join t on t.id = 5", part: 1, how: HowKeys},

		// UPDATE and DELETE.
		{sql: "update t set c = 1 where id = 7", part: 3, how: HowKeys},
		{sql: "update t set c = ?, d = ? where id = ?", part: 3, how: HowKeys, lits: []string{"'x'", "'y'", "'7'"}},
		{sql: "update low_priority ignore t set c = (select max(id) from u where id = 2) where id = 7", part: 3, how: HowKeys},
		{sql: "update t set c = 1", part: -1, how: HowNoKey},
		{sql: "update t set id = 8 where id = 7 order by c limit 1", part: 3, how: HowKeys},
		{sql: "update t a join u on a.k = u.k set a.c = 1 where a.id = 7", part: 3, how: HowKeys},
		{sql: "update u set c = 1 where id = 7", part: -1, how: HowNoTable},
		{sql: "delete from t where id = 7", part: 3, how: HowKeys},
		{sql: "delete low_priority quick ignore from t where id = 7 limit 1", part: 3, how: HowKeys},
		{sql: "delete from t as a where a.id = 7", part: 3, how: HowKeys},
		{sql: "delete t from t join u on t.k = u.k where t.id = 7", part: 3, how: HowKeys},
		{sql: "delete from t using t join u on t.k = u.k where t.id = 7", part: 3, how: HowKeys},
		{sql: "delete from t partition (p1) where id = 7", part: 1, how: HowPartition},
		{sql: "delete from t", part: -1, how: HowNoKey},

		// INSERT and REPLACE.
		{sql: "insert into t (c, id) values ('a', 5), ('b', 9)", part: 1, how: HowKeys},
		{sql: "insert into t (c, id) values ('a', 5), ('b', 6)", part: -1, how: HowSeveral},
		{sql: "insert into t values (7, 'a')", part: 3, how: HowKeys},
		{sql: "insert into t value (7, 'a')", part: 3, how: HowKeys},
		{sql: "insert into t set c = 'q', id = 7", part: 3, how: HowKeys},
		{sql: "insert into t set c = 'q', t.id := 7 on duplicate key update c = 'r'", part: 3, how: HowKeys},
		{sql: "insert into t set c = 'q'", part: -1, how: HowNoKeyInsert},
		{sql: "insert into t (c) values ('a')", part: -1, how: HowNoKeyInsert},
		{sql: "insert into t (id) values (now())", part: -1, how: HowUnsupported},
		{sql: "insert into t (id, c) values (5, now()), (9, concat('a', 'b'))", part: 1, how: HowKeys},
		{sql: "insert into t (id, c) values (5, 'a'), (abs(9), 'b')", part: -1, how: HowUnsupported},
		{sql: "replace into t (id) values (4)", part: 0, how: HowKeys},
		{sql: "insert low_priority ignore into t (id) values (4) on duplicate key update c = c + 1", part: 0, how: HowKeys},
		{sql: "insert into t (id) values (4) as new on duplicate key update c = new.c", part: 0, how: HowKeys},
		{sql: "insert into t (id) select id from u", part: -1, how: HowStatement},
		{sql: "insert into t select * from u", part: -1, how: HowStatement},
		{sql: "insert into t partition (p3) (id) values (1)", part: 3, how: HowPartition},
		{sql: "insert into db.t (id) values (1)", part: 1, how: HowKeys},
		{sql: "insert into u (id) values (1)", part: -1, how: HowNoTable},
		{sql: "insert into t (id) values (?), (?)", part: 1, how: HowKeys, lits: []string{"1", "5"}},
		{sql: "insert into t (c, id) values (?, ?)", part: 2, how: HowKeys, lits: []string{"'x'", "-6"}},
		{sql: "insert into t (id) values (default)", part: -1, how: HowUnsupported},
		{sql: "insert into t (id) values (null)", part: 0, how: HowKeys},
		{sql: "insert into t (id) values ('12')", part: 0, how: HowKeys},
		{sql: "insert into t (id) values (1", part: -1, how: HowStatement},
	})
}

// KEY(id) PARTITIONS 7; the partitions are those of
// testdata/keyhash_vectors.txt.
func TestCalculateKeyInt(t *testing.T) {
	runCalcCases(t, descKey(t), []calcCase{
		{sql: "select * from t where id = 0", part: 6, how: HowKeys},
		{sql: "select * from t where id = 7", part: 5, how: HowKeys},
		{sql: "select * from t where id = 42", part: 3, how: HowKeys},
		{sql: "SELECT c FROM t WHERE id=4921", part: 4, how: HowKeys},
		{sql: "select * from t where id = -1", part: 3, how: HowKeys},
		{sql: "select * from t where id = -42", part: 0, how: HowKeys},
		{sql: "select * from t where id = '42'", part: 3, how: HowKeys},
		{sql: "select * from t where id is null", part: 5, how: HowKeys}, // the server's NULL hash
		{sql: "select * from t where id in (0, 1)", part: 6, how: HowKeys},
		{sql: "select * from t where id in (7, 42)", part: -1, how: HowSeveral},
		{sql: "select * from t where id = 9223372036854775807", part: 0, how: HowKeys},
		{sql: "select * from t where id = 18446744073709551615", part: -1, how: HowBadValue},
		{sql: "insert into t (id) values (42), ('42'), (-1)", part: 3, how: HowKeys},
	})
}

// KEY(name) PARTITIONS 5 on a utf8mb4_general_ci VARCHAR.
func TestCalculateKeyString(t *testing.T) {
	runCalcCases(t, descKeyName(t), []calcCase{
		{sql: "select * from t where name = 'abc'", part: 3, how: HowKeys},
		{sql: "select * from t where name = 'ABC  '", part: 3, how: HowKeys},
		{sql: `select * from t where name = "ABC"`, part: 3, how: HowKeys},
		{sql: "select * from t where name = 'hello world'", part: 1, how: HowKeys},
		{sql: "select * from t where name = 'Müller'", part: 0, how: HowKeys},
		{sql: "select * from t where name = 'MULLER'", part: 0, how: HowKeys},
		{sql: "select * from t where name = ''", part: 0, how: HowKeys},
		{sql: "select * from t where name = 'it''s'", part: 0, how: HowKeys},
		{sql: `select * from t where name = 'it\'s'`, part: 0, how: HowKeys},
		{sql: `select * from t where name = "it's"`, part: 0, how: HowKeys},
		{sql: `select * from t where name = 'a\\b'`, part: 4, how: HowKeys},
		{sql: "select * from t where name = 12", part: 4, how: HowKeys},
		{sql: "select * from t where name = -7", part: 4, how: HowKeys},
		{sql: "select * from t where name = _utf8mb4'abc'", part: 3, how: HowKeys},
		{sql: "select * from t where name = _utf8mb4 'abc'", part: 3, how: HowKeys},
		{sql: "select * from t where name = N'abc'", part: 3, how: HowKeys},
		{sql: "select * from t where name = X'616263'", part: 3, how: HowKeys},
		{sql: "select * from t where name = x'61626'", part: -1, how: HowUnsupported},
		{sql: "select * from t where name = 0x616263", part: -1, how: HowBadValue},
		{sql: "select * from t where name = _latin1'abc'", part: -1, how: HowUnsupported},
		{sql: "select * from t where name in ('abc', 'ABC ')", part: 3, how: HowKeys},
		{sql: "select * from t where name in ('abc', 'a')", part: -1, how: HowSeveral},
		{sql: "select * from t where name = 'abc' collate utf8mb4_bin", part: -1, how: HowUnsupported},
		{sql: "select * from t where name = 'ab' 'c'", part: -1, how: HowUnsupported},
		{sql: "select * from t where name = ?", part: 1, how: HowKeys, lits: []string{"'hello world'"}},
		{sql: "select * from t where name = ?", part: 3, how: HowKeys, lits: []string{"X'414243'"}},
		{sql: "select * from t where name = ?", part: 4, how: HowKeys, lits: []string{"12"}},
		{sql: "select * from t where name > 'a'", part: -1, how: HowNoKey},
	})
}

// RANGE(id): p0 < 100, p1 < 200, p2 < 300.
func TestCalculateRange(t *testing.T) {
	runCalcCases(t, descRange(t), []calcCase{
		{sql: "select * from t where id = 5", part: 0, how: HowKeys},
		{sql: "select * from t where id = 100", part: 1, how: HowKeys},
		{sql: "select * from t where id = 299", part: 2, how: HowKeys},
		{sql: "select * from t where id = 300", part: 0, how: HowOutOfRange},
		{sql: "select * from t where id = -5", part: 0, how: HowKeys},
		{sql: "select * from t where id is null", part: 0, how: HowKeys},
		{sql: "select * from t where id between 100 and 199", part: 1, how: HowKeys},
		{sql: "select * from t where id between 100 and 200", part: -1, how: HowSeveral},
		{sql: "select * from t where id >= 100 and id < 200", part: 1, how: HowKeys},
		{sql: "select * from t where id > 99 and id <= 199", part: 1, how: HowKeys},
		{sql: "select * from t where id > 100 and id < 150", part: 1, how: HowKeys},
		{sql: "select * from t where id < 100", part: 0, how: HowKeys},
		{sql: "select * from t where id <= 100", part: -1, how: HowSeveral},
		{sql: "select * from t where id >= 250", part: 2, how: HowKeys},
		{sql: "select * from t where id > 300", part: 0, how: HowOutOfRange},
		{sql: "select * from t where id >= 150", part: -1, how: HowSeveral},
		{sql: "select * from t where id >= 150 and id > 210", part: 2, how: HowKeys},
		{sql: "select * from t where id < 250 and id < 90", part: 0, how: HowKeys},
		{sql: "select * from t where id in (1, 50)", part: 0, how: HowKeys},
		{sql: "select * from t where id in (1, 150)", part: -1, how: HowSeveral},
		{sql: "select * from t where id between 150 and 120", part: -1, how: HowEmpty},
		{sql: "select * from t where 150 <= id and 170 > id", part: 1, how: HowKeys},
		{sql: "select * from t where 'abc' < id", part: -1, how: HowBadValue},
		{sql: "select * from t where id > ?", part: -1, how: HowSeveral, lits: []string{"100"}},
		{sql: "select * from t where id > ? and id < ?", part: 1, how: HowKeys, lits: []string{"100", "'120'"}},
		{sql: "select * from t where id = 150 and id between 0 and 999", part: 1, how: HowKeys},
		{sql: "select * from t where id > 100 or id = 150", part: -1, how: HowSeveral},
		{sql: "select * from t where id between 110 and 120 or id = 150", part: 1, how: HowKeys},
		{sql: "insert into t values (150)", part: 1, how: HowKeys},
		{sql: "insert into t values (350)", part: 0, how: HowOutOfRange},
	})
}

// LIST and LIST COLUMNS.
func TestCalculateList(t *testing.T) {
	runCalcCases(t, descList(t), []calcCase{
		{sql: "select * from t where region_id = 1", part: 0, how: HowKeys},
		{sql: "select * from t where region_id = 2", part: 0, how: HowKeys},
		{sql: "select * from t where region_id = 3", part: 1, how: HowKeys},
		{sql: "select * from t where region_id is null", part: 1, how: HowKeys},
		{sql: "select * from t where region_id = 99", part: 2, how: HowKeys},
		{sql: "select * from t where region_id in (1, 2)", part: 0, how: HowKeys},
		{sql: "select * from t where region_id in (1, 3)", part: -1, how: HowSeveral},
		{sql: "select * from t where region_id > 1", part: -1, how: HowNoKey},
		{sql: "insert into t (a, b, region_id) values (1, 2, 3)", part: 1, how: HowKeys},
		{sql: "insert into t values (1, 2, 3)", part: 1, how: HowKeys},
	})
	runCalcCases(t, descListNoDefault(t), []calcCase{
		{sql: "select * from t where k = 2", part: 1, how: HowKeys},
		{sql: "select * from t where k = 99", part: 0, how: HowOutOfRange},
		{sql: "select * from t where k is null", part: 0, how: HowOutOfRange},
	})
	runCalcCases(t, descListCols(t), []calcCase{
		{sql: "select * from t where region = 'HZ'", part: 0, how: HowKeys},
		{sql: "select * from t where region = 'sh'", part: 0, how: HowKeys},
		{sql: "select * from t where region = 'bj '", part: 1, how: HowKeys},
		{sql: "select * from t where region = 'xx'", part: 2, how: HowKeys},
		{sql: "select * from t where region in ('hz', 'Sh')", part: 0, how: HowKeys},
	})
}

// RANGE COLUMNS(a, b).
func TestCalculateRangeColumns(t *testing.T) {
	runCalcCases(t, descRangeCols(t), []calcCase{
		{sql: "select * from t where a = 5 and b = 'z'", part: 0, how: HowKeys},
		{sql: "select * from t where a = 10 and b = 'a'", part: 0, how: HowKeys},
		{sql: "select * from t where a = 10 and b = 'M'", part: 1, how: HowKeys},
		{sql: "select * from t where a = 10 and b = 'zz'", part: 1, how: HowKeys},
		{sql: "select * from t where a = 10", part: -1, how: HowSeveral},
		{sql: "select * from t where a = 15", part: 2, how: HowKeys},
		{sql: "select * from t where a = 25", part: 3, how: HowKeys},
		{sql: "select * from t where a between 12 and 18", part: 2, how: HowKeys},
		{sql: "select * from t where a = 10 and b < 'c'", part: 0, how: HowKeys},
		{sql: "select * from t where a = 10 and b >= 'n'", part: 1, how: HowKeys},
		{sql: "select * from t where a = 10 and b >= 'c'", part: -1, how: HowSeveral},
		{sql: "select * from t where b = 'x'", part: -1, how: HowNoKey},
		{sql: "select * from t where a = 20 and b = ''", part: 2, how: HowKeys},
		{sql: "select * from t where a = 20 and b = 'a'", part: 3, how: HowKeys},
	})
}

// Two levels: RANGE COLUMNS(day) + KEY(host) (obsim's metrics table),
// HASH + HASH and non-template sub-partitions.
func TestCalculateTwoLevels(t *testing.T) {
	runCalcCases(t, descMetrics(t), []calcCase{
		{table: "metrics", sql: "select * from metrics where day = 20230101 and host = 'abc'", part: 0, sub: 1, how: HowKeys},
		{table: "metrics", sql: "select * from metrics where day = 20250101 and host = 'a'", part: 1, sub: 0, how: HowKeys},
		{table: "metrics", sql: "select * from metrics where day = 20250101", part: 1, sub: -1, how: HowNoKey},
		{table: "metrics", sql: "select * from metrics where host = 'abc'", part: -1, sub: -1, how: HowNoKey},
		{table: "metrics", sql: "select * from metrics where day between 20240101 and 20241231 and host = 'Müller'", part: 1, sub: 0, how: HowKeys},
		{table: "metrics", sql: "select * from metrics where day < 20240101 and host in ('abc', 'hello world')", part: 0, sub: 1, how: HowKeys},
		{table: "metrics", sql: "select * from metrics where day = 20230101 and host in ('a', 'abc')", part: 0, sub: -1, how: HowSeveral},
		{table: "metrics", sql: "select * from metrics where day in (20230101, 20250101) and host = 'a'", part: -1, sub: -1, how: HowSeveral},
		{table: "metrics", sql: "select * from metrics where day = '20230101' and host = 'abc'", part: 0, sub: 1, how: HowKeys},
		{table: "metrics", sql: "select * from metrics where day = 20230101 and host = 12", part: 0, sub: 0, how: HowKeys},
		{table: "metrics", sql: "select * from metrics partition (p0sp1)", part: 0, sub: 1, how: HowPartition},
		{table: "metrics", sql: "select * from metrics partition (p1) where host = 'abc'", part: 1, sub: 1, how: HowPartition},
		{table: "metrics", sql: "select * from metrics partition (p1)", part: 1, sub: -1, how: HowNoKey},
		{table: "metrics", sql: "insert into metrics (day, host, v) values (20230101, 'abc', 1), (20230505, 'ABC', 2)", part: 0, sub: 1, how: HowKeys},
		{table: "metrics", sql: "insert into metrics values (20250101, 'a', 1)", part: 1, sub: 0, how: HowKeys},
		{table: "metrics", sql: "insert into metrics (day, v) values (20250101, 1)", part: 1, sub: -1, how: HowNoKeyInsert},
		{table: "metrics", sql: "select * from metrics where day = ? and host = ?", part: 1, sub: 0, how: HowKeys, lits: []string{"20250101", "'A'"}},
	})
	runCalcCases(t, descHashHash(t), []calcCase{
		{sql: "select * from t where a = 4 and b = 3", part: 1, sub: 1, how: HowKeys},
		{sql: "select * from t where a = 4", part: 1, sub: -1, how: HowNoKey},
		{sql: "select * from t where a = 4 and b in (1, 3)", part: 1, sub: 1, how: HowKeys},
		{sql: "select * from t where a = 4 and b in (1, 2)", part: 1, sub: -1, how: HowSeveral},
		{sql: "select * from t where a = 4 and b = 3 or a = 7 and b = 5", part: 1, sub: 1, how: HowKeys},
		{sql: "select * from t where a = 4 and b = 3 or a = 7 and b = 4", part: 1, sub: -1, how: HowSeveral},
		{sql: "select * from t where a = 4 and b = 3 or a = 5 and b = 3", part: -1, sub: -1, how: HowSeveral},
	})
	runCalcCases(t, descNonTemplate(t), []calcCase{
		{sql: "select * from t where a = 5 and b = 7", part: 0, sub: 1, how: HowKeys},
		{sql: "select * from t where a = 50 and b = 7", part: 1, sub: 1, how: HowKeys},
		{sql: "select * from t where a = 50 and b = 8", part: 1, sub: 2, how: HowKeys},
		{sql: "select * from t partition (p1s2)", part: 1, sub: 2, how: HowPartition},
	})
}

func TestCalculateExplain(t *testing.T) {
	d := descMetrics(t)
	sql := []byte("select * from metrics where day >= 20240101 and host in ('a', 'b''c') or day = 5 and host = 7")
	r := PartResult{Explain: true, Keys: []string{"stale"}}
	d.Calculate(sql, nil, TableRef{Name: []byte("metrics")}, nil, &r)
	got := strings.Join(r.Keys, " | ")
	want := "day IN [20240101,+inf) | host IN ('a','b''c') | day=5 | host='7'"
	if got != want {
		t.Errorf("explain keys %q, want %q", got, want)
	}
	r.Explain = false
	d.Calculate(sql, nil, TableRef{Name: []byte("metrics")}, nil, &r)
	if len(r.Keys) != 0 {
		t.Errorf("keys %q without Explain", r.Keys)
	}
}

func TestCalculateFacts(t *testing.T) {
	d := descHash(t)
	for _, tc := range []struct {
		f   Facts
		how string
	}{
		{Facts{MultiStatement: true}, HowMulti},
		{Facts{Incomplete: true}, HowIncomplete},
		{Facts{}, HowKeys},
	} {
		var r PartResult
		d.Calculate([]byte("select * from t where id = 1"), &tc.f, TableRef{Name: []byte("t")}, nil, &r)
		if r.How != tc.how {
			t.Errorf("facts %+v: how %q, want %q", tc.f, r.How, tc.how)
		}
	}
	// The table's database must agree when both sides name one.
	var r PartResult
	d.Calculate([]byte("select * from d2.t where id = 1"), nil, TableRef{DB: []byte("d1"), Name: []byte("t")}, nil, &r)
	if r.How != HowNoTable {
		t.Errorf("other database: %q", r.How)
	}
	d.Calculate([]byte("select * from D1.t where id = 1"), nil, TableRef{DB: []byte("d1"), Name: []byte("t")}, nil, &r)
	if !r.Known {
		t.Errorf("same database: %q", r.How)
	}
}

// KEY on a binary-collated string: bytes, trailing spaces included
// (ob_hash_sort_bin does not trim), case kept; on utf8mb4_bin trailing
// spaces do not count.
func TestCalculateKeyBinary(t *testing.T) {
	d := mustDesc(t, PartInfoSpec{Level: 1, PartType: PartFuncKey, PartNum: 4,
		Keys: []PartKey{varcharKey("b", 1, 0, 63)}}, hashParts(4, 0), nil)
	runCalcCases(t, d, []calcCase{
		{sql: "select * from t where b = 'abc'", part: 1, how: HowKeys},
		{sql: "select * from t where b = 'abc  '", part: 3, how: HowKeys},
		{sql: "select * from t where b in ('abc', 'abc ')", part: -1, how: HowSeveral},
		{sql: "select * from t where b = 'ABC'", part: 0, how: HowKeys},
		{sql: "select * from t where b in ('abc', 'ABC')", part: -1, how: HowSeveral},
	})
}

// TestCalculateManyKeys checks a table with more key columns than
// Calculate reads: the levels using them are not computed, and nothing
// breaks.
func TestCalculateManyKeys(t *testing.T) {
	var keys []PartKey
	var conj []string
	for i := range maxKeyCols + 2 {
		name := string(rune('a' + i))
		keys = append(keys, intKey(name, 1, i))
		conj = append(conj, name+" = 1")
	}
	d := mustDesc(t, PartInfoSpec{Level: 1, PartType: PartFuncKey, PartNum: 3, Keys: keys}, hashParts(3, 0), nil)
	where := strings.Join(conj, " and ")
	runCalcCases(t, d, []calcCase{
		{sql: "select * from t where " + where, part: -1, how: HowKeyType},
		{sql: "insert into t values (1, 2, 3, 4, 5, 6, 7, 8, 9, 10)", part: -1, how: HowKeyType},
		{sql: "select * from t partition (p2) where " + where, part: 2, how: HowPartition},
	})
	var r PartResult
	r.Explain = true
	d.Calculate([]byte("select * from t where "+where), nil, TableRef{Name: []byte("t")}, nil, &r)
	if len(r.Keys) != maxKeyCols {
		t.Errorf("explain keys %q", r.Keys)
	}
}

// TestCalculateClauseWords checks words that end a condition only where
// they are not a column.
func TestCalculateClauseWords(t *testing.T) {
	runCalcCases(t, descHash(t), []calcCase{
		{sql: "select * from t where id = 5 and returning = 1 or id = 6", part: -1, how: HowSeveral},
		{sql: "select * from t where id = 5 and window.x = 1 or id = 6", part: -1, how: HowSeveral},
		{sql: "select * from t where id = 5 window w as (order by id)", part: 1, how: HowKeys},
		{sql: "delete from t where id = 5 returning *", part: 1, how: HowKeys},
		{sql: "select * from t where id = 5 except select * from t where id = 6", part: -1, how: HowStatement},
	})
}

// TestPartDescOwnsInput checks that a description keeps no slice of its
// input: changing the rows afterwards changes nothing.
func TestPartDescOwnsInput(t *testing.T) {
	bound := rangeBin(obStr("m"))
	parts := []PartRow{
		{PartID: 0, TabletID: 1, Name: "p0", HighBound: bound},
		{PartID: 1, TabletID: 2, Name: "p1", HighBound: rangeBin(obMax)},
	}
	d := mustDesc(t, PartInfoSpec{Level: 1, PartType: PartFuncRangeColumns,
		Keys: []PartKey{varcharKey("s", 1, 0, mysqlproto.OBCollationUTF8MB4)}}, parts, nil)
	for i := range bound {
		bound[i] = 0
	}
	parts[0].TabletID = 99
	var r PartResult
	d.Calculate([]byte("select * from t where s = 'a'"), nil, TableRef{Name: []byte("t")}, nil, &r)
	if !r.Known || r.TabletID != 1 {
		t.Fatalf("%+v", r)
	}
}

// TestPartDescUnsupportedKey checks that a key column of a type obgate
// does not compute (a DECIMAL held as ObNumberType, as before OceanBase
// 4.2) leaves the table's descriptions usable for names and tablets but
// computes nothing.
func TestPartDescUnsupportedKey(t *testing.T) {
	d := mustDesc(t, PartInfoSpec{Level: 1, PartType: PartFuncKey, PartNum: 2,
		Keys: []PartKey{{Name: "n", Level: 1, Type: 15, Collation: 63}}}, hashParts(2, 10), nil)
	var r PartResult
	d.Calculate([]byte("select * from t where n = 12.5"), nil, TableRef{Name: []byte("t")}, nil, &r)
	if r.Known || r.How != HowKeyType {
		t.Fatalf("%+v", r)
	}
	d.Calculate([]byte("select * from t partition (p1)"), nil, TableRef{Name: []byte("t")}, nil, &r)
	if !r.Known || r.TabletID != 11 {
		t.Fatalf("%+v", r)
	}
	// A string key in an unknown collation is not computed either.
	d = mustDesc(t, PartInfoSpec{Level: 1, PartType: PartFuncKey, PartNum: 2,
		Keys: []PartKey{varcharKey("s", 1, 0, 224)}}, hashParts(2, 10), nil)
	d.Calculate([]byte("select * from t where s = 'x'"), nil, TableRef{Name: []byte("t")}, nil, &r)
	if r.Known || r.How != HowKeyType {
		t.Fatalf("%+v", r)
	}
}

// TestCalculateConcurrent runs calculations on shared descriptions from
// several goroutines (go test -race checks that nothing writes to them).
func TestCalculateConcurrent(t *testing.T) {
	descs := fuzzDescs(t)
	done := make(chan bool)
	for g := range 4 {
		go func() {
			defer func() { done <- true }()
			var r PartResult
			r.Explain = g%2 == 0
			for i := range 200 {
				fd := descs[(g+i)%len(descs)]
				sql := []byte(calcSeeds[i%len(calcSeeds)])
				fd.d.Calculate(sql, nil, TableRef{Name: []byte(fd.table)}, nil, &r)
				_, _ = fd.d.TabletByName([]byte("p1"))
			}
		}()
	}
	for range 4 {
		<-done
	}
}
