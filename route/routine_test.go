package route

import "testing"

func TestCallTarget(t *testing.T) {
	for _, c := range []struct {
		sql, db, pkg, name string
		ok                 bool
	}{
		{"CALL p()", "", "", "p", true},
		{"call p", "", "", "p", true},
		{"/* c */ CALL d.p(1, 'a')", "d", "", "p", true},
		{"CALL `my db`.`p``x`(1);", "my db", "", "p`x", true},
		{"CALL d.pk.p(?)", "d", "pk", "p", true},
		{"CALL p(1) /* marker */", "", "", "p", true},
		{"SELECT 1", "", "", "", false},
		{"CALL", "", "", "", false},
		{"CALL 'p'()", "", "", "", false},
		{"CALL a.b.c.d()", "", "", "", false},
		{"CALL `p", "", "", "", false},
	} {
		db, pkg, name, ok := CallTarget([]byte(c.sql))
		if db != c.db || pkg != c.pkg || name != c.name || ok != c.ok {
			t.Errorf("CallTarget(%q) = %q, %q, %q, %v; want %q, %q, %q, %v", c.sql, db, pkg, name, ok, c.db, c.pkg, c.name, c.ok)
		}
	}
}

// TestPlanCallByRouteSQL: with PLRoute a CALL goes to the leader of the
// table its procedure's route SQL names (unqualified: the procedure's
// database); without, or with no route SQL, it goes by the tenant list.
func TestPlanCallByRouteSQL(t *testing.T) {
	tc := newTestCluster(t, false)
	tc.putEntry("orders", leaderA2...)
	sql := []byte("UPDATE orders SET v = v WHERE id = 1")
	e := &routineEntry{routeSQL: sql, facts: Lex(sql)}
	e.fetched = e.fetched.AddDate(3000, 0, 0) // never due for a recheck
	tc.routines.m.Store(&map[string]*routineEntry{"t\x00db\x00\x00p_upd": e})
	r := NewRouter(nil)
	firsts := func(call string, pl bool) map[string]int {
		out := map[string]int{}
		for range 40 {
			sr, _ := stmt(call)
			sr.PLRoute = pl
			sr.Database = "other" // the procedure's database counts
			out[plan(t, r, tc, sr).Addrs[0]]++
		}
		return out
	}
	if got := firsts("CALL db.p_upd(1)", true); got["a2:1"] != 40 {
		t.Errorf("CALL with enable_pl_route: first candidates %v, want the route SQL table's leader a2:1", got)
	}
	if got := firsts("CALL db.p_upd(1)", false); got["a2:1"] == 40 {
		t.Errorf("CALL without enable_pl_route: always a2:1 first (%v), want the tenant list", got)
	}
}
