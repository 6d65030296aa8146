package route

import (
	"testing"

	"obgate/internal/failure"
	"obgate/mysqlproto"
)

func TestResendableAndLoginERR(t *testing.T) {
	for _, c := range []struct {
		code          uint16
		resend, login bool
	}{
		{mysqlproto.OBServerIsInit, true, true},
		{mysqlproto.OBServerIsStopping, true, true},
		{mysqlproto.OBTenantNotInServer, true, true},
		{mysqlproto.OBConnectError, true, true},
		{mysqlproto.OBErrReadOnly, true, false},
		{mysqlproto.OBClusterNoMatch, false, true},
		{mysqlproto.OBSessionEntryExist, false, true},
		{mysqlproto.OBServiceNameNotFound, false, true},
		{mysqlproto.OBNotPrimaryTenant, false, true},
		{mysqlproto.OBNotMaster, false, false},  // feedback only, the client gets it
		{mysqlproto.OBErrReroute, false, false}, // once, apart
		{mysqlproto.OBPacketChecksumError, false, false},
		{1064, false, false},
		{1045, false, false},
		{0, false, false},
	} {
		if got := ResendableERR(c.code); got != c.resend {
			t.Errorf("ResendableERR(%d) = %v, want %v", c.code, got, c.resend)
		}
		if got := RetryableLoginERR(c.code); got != c.login {
			t.Errorf("RetryableLoginERR(%d) = %v, want %v", c.code, got, c.login)
		}
	}
}

func TestLocationFixFor(t *testing.T) {
	for code, want := range map[uint16]LocationFix{
		mysqlproto.OBNotMaster:         FixEntryLater,
		mysqlproto.OBConnectError:      FixEntryNow,
		mysqlproto.OBErrReroute:        FixEntryNow,
		mysqlproto.OBTenantNotInServer: FixTenantNow,
		mysqlproto.OBClusterNoMatch:    FixTenantNow,
		mysqlproto.OBServerIsStopping:  FixNone,
		mysqlproto.OBErrReadOnly:       FixNone,
		1146:                           FixNone,
	} {
		if got := LocationFixFor(code); got != want {
			t.Errorf("LocationFixFor(%d) = %d, want %d", code, got, want)
		}
	}
}

func TestMayResend(t *testing.T) {
	base := Try{Kept: true, Budget: 2}
	with := func(f func(*Try)) Try { t := base; f(&t); return t }
	for _, c := range []struct {
		name string
		try  Try
		want bool
	}{
		{"held ERR of a write", with(func(t *Try) { t.Failure = failure.HeldERR; t.Code = mysqlproto.OBServerIsStopping }), true},
		{"held ERR of a read", with(func(t *Try) { t.Failure = failure.HeldERR; t.ReadOnly = true }), true},
		{"broken connection, read", with(func(t *Try) { t.Failure = failure.Transport; t.ReadOnly = true }), true},
		{"broken connection, write", with(func(t *Try) { t.Failure = failure.Transport }), false},
		{"bad checksum, read", with(func(t *Try) { t.Failure = failure.Protocol; t.ReadOnly = true }), true},
		{"bad checksum, write", with(func(t *Try) { t.Failure = failure.Protocol }), false},
		{"timeout, read", with(func(t *Try) { t.Failure = failure.Timeout; t.ReadOnly = true }), false},
		{"client broke", with(func(t *Try) { t.Failure = failure.Client; t.ReadOnly = true }), false},
		{"answered", with(func(t *Try) { t.ReadOnly = true }), false},
		{"not kept (streamed)", with(func(t *Try) { t.Failure = failure.Transport; t.ReadOnly = true; t.Kept = false }), false},
		{"bound to the server", with(func(t *Try) { t.Failure = failure.HeldERR; t.Bound = true }), false},
		{"stopped by a KILL", with(func(t *Try) { t.Failure = failure.Transport; t.ReadOnly = true; t.Stopped = true }), false},
		{"budget left", with(func(t *Try) { t.Failure = failure.Transport; t.ReadOnly = true; t.Resends = 1 }), true},
		{"budget spent", with(func(t *Try) { t.Failure = failure.Transport; t.ReadOnly = true; t.Resends = 2 }), false},
		{"no budget", with(func(t *Try) { t.Failure = failure.HeldERR; t.Budget = 0 }), false},
	} {
		if got := MayResend(c.try); got != c.want {
			t.Errorf("%s: MayResend(%+v) = %v, want %v", c.name, c.try, got, c.want)
		}
	}
}

func TestRetryBudget(t *testing.T) {
	for _, c := range []struct {
		max      int64
		replicas int
		want     int
	}{
		{3, 0, 2},  // default connect_observer_max_retries, no route
		{3, 1, 2},  // 2×1+1 = 3
		{3, 3, 6},  // 2×3+1 = 7
		{10, 3, 9}, // the parameter wins
		{0, 0, 0},  // one try only
	} {
		if got := RetryBudget(c.max, c.replicas); got != c.want {
			t.Errorf("RetryBudget(%d, %d) = %d, want %d", c.max, c.replicas, got, c.want)
		}
	}
}

func TestHoldERR(t *testing.T) {
	stopping := mysqlproto.OBServerIsStopping
	for _, c := range []struct {
		code                       uint16
		mayRetry, commits, rollsBk bool
		want                       bool
	}{
		{stopping, true, false, false, true},
		{stopping, false, false, false, false},
		{stopping, false, true, false, true}, // a refused COMMIT ends the transaction
		{1146, true, true, false, false},     // not a "nothing ran" code
		{1146, false, false, true, true},     // a ROLLBACK is done by closing, whatever the error
		{mysqlproto.OBNotMaster, true, false, false, false},
	} {
		if got := HoldERR(c.code, c.mayRetry, c.commits, c.rollsBk); got != c.want {
			t.Errorf("HoldERR(%d, %v, %v, %v) = %v, want %v", c.code, c.mayRetry, c.commits, c.rollsBk, got, c.want)
		}
	}
}

func TestWeakRead(t *testing.T) {
	lex := func(sql string) *Facts { f := Lex([]byte(sql)); return &f }
	for _, c := range []struct {
		sql                     string
		sessionWeak, userListed bool
		want                    bool
	}{
		{"SELECT * FROM t WHERE id = 1", false, false, false},
		{"SELECT * FROM t WHERE id = 1", true, false, true},
		{"SELECT * FROM t WHERE id = 1", false, true, true},
		{"SELECT /*+ READ_CONSISTENCY(WEAK) */ * FROM t", false, false, true},
		{"SELECT /*+ READ_CONSISTENCY(STRONG) */ * FROM t", true, true, false},
		{"SELECT * FROM t FOR UPDATE", true, true, false},
		{"SELECT /*+ READ_CONSISTENCY(WEAK) */ * FROM t FOR UPDATE", false, false, false},
		{"UPDATE t SET c = 1", true, true, false},
		{"INSERT INTO t VALUES (1)", true, false, false},
		{"SELECT GET_LOCK('a', 1)", true, true, false},
	} {
		if got := WeakRead(lex(c.sql), c.sessionWeak, c.userListed); got != c.want {
			t.Errorf("WeakRead(%q, session %v, user %v) = %v, want %v", c.sql, c.sessionWeak, c.userListed, got, c.want)
		}
	}
	if WeakRead(nil, true, true) {
		t.Error("WeakRead(nil) = true")
	}
}

func TestUserListed(t *testing.T) {
	id := Identity{User: "app", Tenant: "t1"}
	for list, want := range map[string]bool{
		"":                  false,
		"app":               true,
		"other, app":        true,
		"app@t1":            true,
		"app@T1":            true,
		"app@t2":            false,
		"ap,application":    false,
		" other , app@t1 ,": true,
	} {
		if got := UserListed(list, id); got != want {
			t.Errorf("UserListed(%q) = %v, want %v", list, got, want)
		}
	}
}
