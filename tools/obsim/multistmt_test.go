package obsim

import "testing"

func TestLaterStatements(t *testing.T) {
	for _, sql := range []string{"SELECT 1", "SELECT 1;", "SELECT ';' FROM t WHERE id = 1 ; ", "SELECT 1 -- ; SELECT 2"} {
		if got := laterStatements(sql, lex(sql).toks); got != nil {
			t.Errorf("%q: %d later statements", sql, len(got))
		}
	}
	sql := "SELECT 1; SELECT /*+ READ_CONSISTENCY(WEAK) */ * FROM t WHERE id = 2;; INSERT INTO u VALUES (3, ';'); "
	got := laterStatements(sql, lex(sql).toks)
	if len(got) != 2 {
		t.Fatalf("%d later statements", len(got))
	}
	if st := got[0]; st.kind != stmtSelect || st.table != "t" || !st.weak || len(st.where["id"]) != 1 || st.where["id"][0].i != 2 {
		t.Errorf("second statement %+v", st)
	}
	if st := got[1]; st.kind != stmtInsert || st.table != "u" || st.weak || len(st.insertRows) != 1 || st.insertRows[0][0].i != 3 {
		t.Errorf("third statement %+v", st)
	}
}
