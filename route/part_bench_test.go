package route

import "testing"

func BenchmarkCalculate(b *testing.B) {
	key, metrics := descKey(b), descMetrics(b)
	var ep ExecParams
	prepared := execPayload([]execParam{{typ: myLongLong, value: leInt(4921, 8)}}, true)
	for _, bc := range []struct {
		name   string
		d      *PartDesc
		table  string
		sql    string
		lex    bool
		params Params
	}{
		{"point_select", key, "sbtest1", benchPointSelect, false, nil},
		{"point_select_lex", key, "sbtest1", benchPointSelect, true, nil},
		{"prepared_point_select", key, "sbtest1", "SELECT c FROM sbtest1 WHERE id=?", false, &ep},
		{"update_300B_lex", key, "sbtest1", benchUpdate, true, nil},
		{"insert_lex", key, "sbtest1", "INSERT INTO sbtest1 (id, k, c, pad) VALUES (4921, 5012, 'c-value', 'pad-value')", true, nil},
		{"two_level_lex", metrics, "metrics", "SELECT v FROM metrics WHERE day = 20250101 AND host = 'web-01'", true, nil},
	} {
		sql := []byte(bc.sql)
		ref := TableRef{Name: []byte(bc.table)}
		b.Run(bc.name, func(b *testing.B) {
			var r PartResult
			b.ReportAllocs()
			for b.Loop() {
				if bc.params != nil {
					ep.Reset(prepared, 1, nil)
				}
				if bc.lex {
					f := Lex(sql)
					bc.d.Calculate(sql, &f, ref, bc.params, &r)
				} else {
					bc.d.Calculate(sql, nil, ref, bc.params, &r)
				}
			}
			if !r.Known {
				b.Fatalf("not known: %s", r.How)
			}
		})
	}
}
