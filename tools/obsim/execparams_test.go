package obsim

import (
	"encoding/binary"
	"reflect"
	"testing"

	"obgate/mysqlproto"
)

// execPacket builds a COM_STMT_EXECUTE; types nil sends the
// new-params-bound flag 0.
func execPacket(id uint32, nulls, types, values []byte) []byte {
	p := []byte{byte(mysqlproto.ComStmtExecute)}
	p = binary.LittleEndian.AppendUint32(p, id)
	p = append(p, 0, 1, 0, 0, 0)
	p = append(p, nulls...)
	if types != nil {
		p = append(p, 1)
		p = append(p, types...)
	} else {
		p = append(p, 0)
	}
	return append(p, values...)
}

func lenEnc(s string) []byte { return append([]byte{byte(len(s))}, s...) }

func TestDecodeExecParams(t *testing.T) {
	u := byte(0x80)
	types := []byte{
		mysqlproto.TypeTiny, 0, // 0: -5
		mysqlproto.TypeTiny, u, // 1: 250
		mysqlproto.TypeShort, 0, // 2: -300
		mysqlproto.TypeLong, u, // 3: 4000000000
		mysqlproto.TypeLongLong, u, // 4: 2^64-1
		mysqlproto.TypeLongLong, 0, // 5: -2^63
		mysqlproto.TypeVarString, 0, // 6: 'abc'
		mysqlproto.TypeNewDecimal, 0, // 7: '12.50'
		mysqlproto.TypeDouble, 0, // 8: unknown
		mysqlproto.TypeDatetime, 0, // 9: unknown
		mysqlproto.TypeLong, 0, // 10: NULL
		mysqlproto.TypeBlob, 0, // 11: 'b'
		mysqlproto.TypeJSON, 0, // 12: unknown
		mysqlproto.TypeInt24, 0, // 13: -1
	}
	var vals []byte
	vals = append(vals, 0xfb)
	vals = append(vals, 250)
	vals = binary.LittleEndian.AppendUint16(vals, uint16(0xffff-299))
	vals = binary.LittleEndian.AppendUint32(vals, 4000000000)
	vals = binary.LittleEndian.AppendUint64(vals, 1<<64-1)
	vals = binary.LittleEndian.AppendUint64(vals, 1<<63)
	vals = append(vals, lenEnc("abc")...)
	vals = append(vals, lenEnc("12.50")...)
	vals = binary.LittleEndian.AppendUint64(vals, 0x400921fb54442d18)
	vals = append(vals, 4, 0xe8, 0x07, 1, 2)
	vals = append(vals, lenEnc("b")...)
	vals = append(vals, lenEnc(`{"a":1}`)...)
	vals = binary.LittleEndian.AppendUint32(vals, 0xffffffff)
	ps := &prepared{nparams: 14, longData: make([]bool, 14)}
	got := decodeExecParams(execPacket(1, []byte{0, 1 << 2}, types, vals), ps)
	want := []param{
		{value{kind: valInt, i: -5}, true},
		{value{kind: valInt, i: 250}, true},
		{value{kind: valInt, i: -300}, true},
		{value{kind: valInt, i: 4000000000}, true},
		{value{kind: valUint, u: 1<<64 - 1}, true},
		{value{kind: valInt, i: -1 << 63}, true},
		{value{kind: valString, s: "abc"}, true},
		{value{kind: valString, s: "12.50"}, true},
		{},
		{},
		{value{kind: valNull}, true},
		{value{kind: valString, s: "b"}, true},
		{},
		{value{kind: valInt, i: -1}, true},
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("decoded\n%+v\nwant\n%+v", got, want)
	}

	// Without new types the previous execute's apply.
	vals2 := append([]byte{7, 7}, vals[2:]...)
	if got := decodeExecParams(execPacket(1, []byte{0, 1 << 2}, nil, vals2), ps); got[0].v.i != 7 || got[1].v.i != 7 || !reflect.DeepEqual(got[2:], want[2:]) {
		t.Errorf("kept types: %+v", got)
	}

	// A long-data parameter has no value in the packet.
	two := &prepared{nparams: 2, longData: []bool{true, false}}
	got = decodeExecParams(execPacket(1, []byte{0}, []byte{mysqlproto.TypeBlob, 0, mysqlproto.TypeLong, 0}, binary.LittleEndian.AppendUint32(nil, 9)), two)
	if got[0].known || !got[1].known || got[1].v.i != 9 {
		t.Errorf("long data: %+v", got)
	}

	// Truncated values, unknown types, no types at all: the rest is unknown.
	two = &prepared{nparams: 2, longData: make([]bool, 2)}
	for name, pkt := range map[string][]byte{
		"truncated":    execPacket(1, []byte{0}, []byte{mysqlproto.TypeLong, 0, mysqlproto.TypeLong, 0}, []byte{5, 0, 0, 0, 6}),
		"unknown type": execPacket(1, []byte{0}, []byte{mysqlproto.TypeLong, 0, 0x20, 0}, []byte{5, 0, 0, 0, 6}),
	} {
		if got := decodeExecParams(pkt, two); !got[0].known || got[0].v.i != 5 || got[1].known {
			t.Errorf("%s: %+v", name, got)
		}
	}
	fresh := &prepared{nparams: 1, longData: make([]bool, 1)}
	if got := decodeExecParams(execPacket(1, []byte{0}, nil, []byte{1}), fresh); got[0].known {
		t.Errorf("no types: %+v", got)
	}
	if got := decodeExecParams([]byte{byte(mysqlproto.ComStmtExecute), 1, 0}, fresh); len(got) != 1 || got[0].known {
		t.Errorf("short packet: %+v", got)
	}
	if got := decodeExecParams(execPacket(1, nil, nil, nil), &prepared{}); got != nil {
		t.Errorf("no parameters: %+v", got)
	}
}

func TestAnalyzeBound(t *testing.T) {
	i := func(n int64) value { return value{kind: valInt, i: n} }
	bind := func(v value) param { return param{v, true} }
	var unknown param

	sql := "SELECT '?', c /* ? */ FROM t WHERE id = ?"
	st := analyzeBound(lex(sql), []param{bind(i(7))})
	if !reflect.DeepEqual(st.where["id"], []value{i(7)}) {
		t.Errorf("%s: %+v", sql, st.where)
	}
	sql = "SELECT c FROM t WHERE ? = id AND k IN (?, ?)"
	st = analyzeBound(lex(sql), []param{bind(i(1)), bind(i(2)), bind(i(3))})
	if !reflect.DeepEqual(st.where["id"], []value{i(1)}) || !reflect.DeepEqual(st.where["k"], []value{i(2), i(3)}) {
		t.Errorf("%s: %+v", sql, st.where)
	}
	sql = "SELECT c FROM t WHERE id = ? AND k IN (?, ?)"
	st = analyzeBound(lex(sql), []param{unknown, bind(i(2)), unknown})
	if _, ok := st.where["id"]; ok || st.where["k"] != nil {
		t.Errorf("%s with unknown parameters: %+v", sql, st.where)
	}
	sql = "INSERT INTO t (id, c) VALUES (?, ?), (?, 'x')"
	st = analyzeBound(lex(sql), []param{bind(i(1)), bind(value{kind: valString, s: "a"}), unknown})
	if len(st.insertRows) != 2 || *st.insertRows[0][0] != i(1) || st.insertRows[0][1].s != "a" || st.insertRows[1][0] != nil || st.insertRows[1][1].s != "x" {
		t.Errorf("%s: %+v", sql, st.insertRows)
	}
	// Without bound values (the text form, or a prepare) a placeholder
	// restricts nothing.
	st = analyze("SELECT c FROM t WHERE id = ?")
	if _, ok := st.where["id"]; ok {
		t.Errorf("unbound placeholder: %+v", st.where)
	}
	// Placeholders are numbered in text order.
	lx := lex("UPDATE t SET c = ? WHERE id = ? AND '?' <> ?")
	var nums []int32
	for _, tk := range lx.toks {
		if tk.kind == tokParam {
			nums = append(nums, tk.param)
		}
	}
	if !reflect.DeepEqual(nums, []int32{0, 1, 2}) {
		t.Errorf("placeholder numbers %v", nums)
	}
}
