package reactor

import (
	"testing"

	"obgate/config"
	"obgate/route"
)

func TestWeakRead(t *testing.T) {
	s := &Session{identity: route.Identity{User: "app", Tenant: "test"}}
	s.ob = &obSession{s: s}
	cfg := config.Default()
	weak := func(sql string) bool {
		f := route.Lex([]byte(sql))
		return s.ob.weakRead(cfg, &f)
	}
	for sql, want := range map[string]bool{
		"SELECT /*+ READ_CONSISTENCY(WEAK) */ * FROM t":            true,
		"SELECT /*+ READ_CONSISTENCY(WEAK) */ * FROM t FOR UPDATE": false,
		"SELECT * FROM t": false,
		"UPDATE /*+ READ_CONSISTENCY(WEAK) */ t SET a = 1": false,
	} {
		if got := weak(sql); got != want {
			t.Errorf("%s: weak %v, want %v", sql, got, want)
		}
	}
	s.ob.vars.Routing().Weak = true // SET ob_read_consistency = WEAK
	if !weak("SELECT * FROM t") || weak("SELECT /*+ READ_CONSISTENCY(STRONG) */ * FROM t") || weak("SELECT * FROM t LOCK IN SHARE MODE") {
		t.Error("ob_read_consistency=WEAK: plain SELECTs weak, a STRONG hint or a lock strong")
	}
	s.ob.vars.Routing().Weak = false
	cfg.WeakReadUserList = "other, app@test"
	if !weak("SELECT * FROM t") {
		t.Error("weak_read_user_list names app@test")
	}
	cfg.WeakReadUserList = "app@prod"
	if weak("SELECT * FROM t") {
		t.Error("weak_read_user_list names app of another tenant")
	}
}
