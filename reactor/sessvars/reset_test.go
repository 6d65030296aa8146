package sessvars

import (
	"testing"

	"obgate/mysqlproto"
)

// TestSessionVarsMultiStatements checks that the multi-statement option is
// state like the others: a server session that did not see the change
// lacks it, one that did does not, and setting the same value again
// changes nothing.
func TestSessionVarsMultiStatements(t *testing.T) {
	var v Vars
	var a, b Synced
	if lacking, _ := v.MultiStatementsLacking(&a); lacking {
		t.Fatal("an option never set is lacking nowhere")
	}
	v.SetMultiStatements(false)
	v.MarkSynced(&a)
	if lacking, on := v.MultiStatementsLacking(&b); !lacking || on || v.InSync(&b) {
		t.Fatalf("b lacks MULTI_STATEMENTS_OFF: lacking=%v on=%v inSync=%v", lacking, on, v.InSync(&b))
	}
	if lacking, _ := v.MultiStatementsLacking(&a); lacking || !v.InSync(&a) {
		t.Fatal("a ran COM_SET_OPTION")
	}
	ver := v.ver
	v.SetMultiStatements(false)
	if v.ver != ver || !v.InSync(&a) {
		t.Fatal("setting the same option again changed the state")
	}
	v.SetMultiStatements(true)
	if lacking, on := v.MultiStatementsLacking(&a); !lacking || !on {
		t.Fatal("a lacks MULTI_STATEMENTS_ON")
	}
}

// TestSessionVarsAfterReset checks what a reset keeps: the database and
// the multi-statement option, with versions that go on counting up.
func TestSessionVarsAfterReset(t *testing.T) {
	var v Vars
	v.Learn(append(stateOf("time_zone", "+08:00", "autocommit", "OFF", "__NULL", "__NULL", "u", "'abc'"),
		mysqlproto.AppendSchemaState(nil, "db1")...), 0, nil)
	v.SetMultiStatements(true)
	var old Synced
	v.MarkSynced(&old)
	r := v.AfterReset()
	if r.db != "db1" || len(r.sys) != 0 || len(r.user) != 0 || r.hotSet[HotAutocommit] || !r.multiStmt || r.ver <= v.ver {
		t.Fatalf("after reset %+v", r)
	}
	var fresh Synced
	if r.InSync(&fresh) {
		t.Fatal("a new server session lacks the database and the option")
	}
	if sql := r.ResetSQL(&fresh); sql != nil {
		t.Fatalf("after a reset nothing is left to SET, got %s", sql)
	}
	r.SetDB("db2")
	if r.dbVer <= v.ver {
		t.Fatalf("the version went back: %d after %d", r.dbVer, v.ver)
	}
}
