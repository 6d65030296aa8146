package route

import "testing"

// The statements of the benchmarks: sysbench's point select and an
// update of about 300 bytes shaped like sysbench's.
const (
	benchPointSelect = "SELECT c FROM sbtest1 WHERE id=4921"
	benchUpdate      = "UPDATE /*+ query_timeout(2000000) */ sbtest1 SET " +
		"c='83868641912-28773972837-60736120486-75162659906-27563526494-20381887404-41576422241-93426793964-56405065102-33518432330', " +
		"pad='67847967377-48000963322-62604785301-91415491898-96926520291' " +
		"WHERE id=4921 AND k BETWEEN 10 AND 100000 -- sysbench\n"
)

func BenchmarkLex(b *testing.B) {
	for _, bc := range []struct{ name, sql string }{
		{"point_select", benchPointSelect},
		{"update_300B", benchUpdate},
	} {
		sql := []byte(bc.sql)
		b.Run(bc.name, func(b *testing.B) {
			b.ReportAllocs()
			b.SetBytes(int64(len(sql)))
			for b.Loop() {
				_ = Lex(sql)
			}
		})
	}
}
