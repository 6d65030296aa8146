// Package handovertest holds what tests of session hand-over share: a
// state that sets every field, and the paths of the fields a state
// carries.
package handovertest

import (
	"reflect"

	"obgate/reactor/handover"
)

// Sample returns a state that sets every field of every record (at least
// one element of each list sets each field), so that a round trip of it
// covers the whole encoding; TestSampleSetsEveryField holds it to that.
func Sample() *handover.State {
	return &handover.State{
		Mode: handover.ModeMySQL, SessionID: 0x80a00003, Caps: 0x1_0000_a685, Status: 0x0002,
		User: "app@t1#c1", DB: "shop", ConnectedAt: 1764700000000000000, LastActive: 1764700001000000000,
		TransCount: 7, StmtCount: 99, BytesIn: 1234, BytesOut: 56789, StmtLast: 12,
		Stmts: []handover.Stmt{
			{ID: 11, SQL: []byte("SELECT c FROM t WHERE id = ?"), Params: 1, Columns: 1, Types: []byte{8, 0}},
			{ID: 12, SQL: []byte("INSERT INTO t VALUES (?, ?)"), Params: 2, Home: true},
		},
		Servers: []handover.Server{{Addr: "127.0.0.1:3306", ThreadID: 42, Status: 0x0002, LastUsed: 5,
			Stmts: []handover.ServerStmt{{Client: 11, Server: 3, Bound: true}, {Client: 12, Server: 4}}}},
		Move: &handover.Move{Scramble: []byte("01234567890123456789"), Login: []byte{1, 2, 3}, Stage1: []byte{},
			Caps: 0xa685, Stateful: true},
		OB: &handover.OB{Cluster: "c1", Tenant: "t1", IdentityUser: "app", ClusterID: -1, Login: []byte{4, 5},
			Scramble: []byte("aaaaaaaabbbbbbbbbbbb"), DB: "shop",
			Sys:  []handover.Var{{Name: "sql_mode", Value: "STRICT_TRANS_TABLES"}, {Name: "time_zone", Value: "+08:00"}},
			User: []handover.Var{{Name: "proxy_route_policy", Value: "'follower_first'"}},
			Hot:  []handover.Hot{{Index: 0, Value: "1"}, {Index: 1, Value: "10000000"}}, MultiStmtSet: true, MultiStmt: true},
	}
}

// Leaves returns the paths of the fields of a State that hold values
// rather than records: "Servers[].Stmts[].Client" for a field of a
// list's elements, "OB.Sys[].Name" through a pointer.
func Leaves() map[string]bool {
	out := map[string]bool{}
	collectLeaves(reflect.TypeFor[handover.State](), "", out)
	return out
}

// Set returns the leaf paths that s sets, in at least one element of a
// list.
func Set(s *handover.State) map[string]bool {
	out := map[string]bool{}
	collectSet(reflect.ValueOf(s).Elem(), "", out)
	return out
}

func collectLeaves(ty reflect.Type, prefix string, out map[string]bool) {
	for i := range ty.NumField() {
		f := ty.Field(i)
		p := prefix + f.Name
		ft := f.Type
		if ft.Kind() == reflect.Pointer {
			ft = ft.Elem()
		}
		switch {
		case ft.Kind() == reflect.Struct:
			collectLeaves(ft, p+".", out)
		case ft.Kind() == reflect.Slice && ft.Elem().Kind() == reflect.Struct:
			collectLeaves(ft.Elem(), p+"[].", out)
		default:
			out[p] = true
		}
	}
}

func collectSet(v reflect.Value, prefix string, out map[string]bool) {
	for i := range v.NumField() {
		f := v.Type().Field(i)
		p := prefix + f.Name
		fv := v.Field(i)
		if fv.Kind() == reflect.Pointer {
			if fv.IsNil() {
				continue
			}
			fv = fv.Elem()
		}
		switch {
		case fv.Kind() == reflect.Struct:
			collectSet(fv, p+".", out)
		case fv.Kind() == reflect.Slice && fv.Type().Elem().Kind() == reflect.Struct:
			for j := range fv.Len() {
				collectSet(fv.Index(j), p+"[].", out)
			}
		case !fv.IsZero():
			out[p] = true
		}
	}
}
