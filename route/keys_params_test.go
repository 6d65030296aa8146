package route

import (
	"encoding/binary"
	"obgate/internal/obpart"
	"testing"
)

// execParam is one parameter of a COM_STMT_EXECUTE built by the tests.
type execParam struct {
	typ      byte
	unsigned bool
	null     bool
	value    []byte // the encoded value (after the type)
}

func leInt(v uint64, size int) []byte {
	b := make([]byte, 8)
	binary.LittleEndian.PutUint64(b, v)
	return b[:size]
}

func lenencStr(s string) []byte { return append([]byte{byte(len(s))}, s...) }

// execPayload builds a COM_STMT_EXECUTE payload (after the command
// byte); withTypes sets the new-params-bound flag.
func execPayload(params []execParam, withTypes bool) []byte {
	p := binary.LittleEndian.AppendUint32(nil, 1) // statement id
	p = append(p, 0)                              // flags
	p = binary.LittleEndian.AppendUint32(p, 1)    // iterations
	nulls := make([]byte, (len(params)+7)/8)
	for i, x := range params {
		if x.null {
			nulls[i/8] |= 1 << (i % 8)
		}
	}
	p = append(p, nulls...)
	if withTypes {
		p = append(p, 1)
		p = append(p, execTypes(params)...)
	} else {
		p = append(p, 0)
	}
	for _, x := range params {
		if !x.null {
			p = append(p, x.value...)
		}
	}
	return p
}

func execTypes(params []execParam) []byte {
	var t []byte
	for _, x := range params {
		flag := byte(0)
		if x.unsigned {
			flag = unsignedFlag
		}
		t = append(t, x.typ, flag)
	}
	return t
}

func TestExecParams(t *testing.T) {
	params := []execParam{
		{typ: myLongLong, value: leInt(uint64(0xffffffffffffff85), 8)}, // -123
		{typ: myTiny, unsigned: true, value: []byte{255}},
		{typ: myTiny, value: []byte{0xfe}}, // -2
		{typ: myShort, value: leInt(0x8000, 2)},
		{typ: myLong, value: leInt(0xffffffff, 4)},
		{typ: myLong, unsigned: true, value: leInt(0xffffffff, 4)},
		{typ: myInt24, value: leInt(7, 4)},
		{typ: myYear, value: leInt(2024, 2)},
		{typ: myVarString, value: lenencStr("abc")},
		{typ: myNull},
		{typ: myLong, null: true},
		{typ: myNewDecimal, value: lenencStr("12.50")},
		{typ: myBlob, value: lenencStr("")},
		{typ: myDouble, value: leInt(0, 8)},
		{typ: myDateTime, value: []byte{4, 0xe8, 7, 1, 1}},
		{typ: myTimestamp, value: []byte{11, 0xe8, 7, 2, 29, 13, 45, 10, 0x40, 0xe2, 0x01, 0}}, // 2024-02-29 13:45:10.123456
		{typ: myDate, value: []byte{4, 0xe7, 7, 2, 29}},                                        // 2023-02-29: no such day
		{typ: myTime, value: []byte{8, 0, 0, 0, 0, 0, 1, 2, 3}},
		{typ: myLongLong, unsigned: true, value: leInt(1<<63, 8)},
		{typ: myString, value: lenencStr("tail")},
	}
	want := []Value{
		{Kind: ValInt, Int: -123},
		{Kind: ValUint, Int: 255},
		{Kind: ValInt, Int: -2},
		{Kind: ValInt, Int: -32768},
		{Kind: ValInt, Int: -1},
		{Kind: ValUint, Int: 0xffffffff},
		{Kind: ValInt, Int: 7},
		{Kind: ValInt, Int: 2024},
		{Kind: ValString, Str: []byte("abc")},
		{Kind: ValNull},
		{Kind: ValNull},
		{Kind: ValString, Str: []byte("12.50")},
		{Kind: ValString, Str: []byte{}},
		{},
		{Kind: ValTime, Int: int64(obpart.DayNumber(2024, 1, 1)) * usecPerDay},
		{Kind: ValTime, Int: int64(obpart.DayNumber(2024, 2, 29))*usecPerDay + (13*3600+45*60+10)*1000000 + 123456},
		{},
		{},
		{Kind: ValUint, Int: -1 << 63},
		{Kind: ValString, Str: []byte("tail")},
	}
	check := func(name string, p *ExecParams) {
		t.Helper()
		for i, w := range want {
			got, ok := p.Param(i)
			if ok != (w.Kind != ValUnknown) || got.Kind != w.Kind || got.Int != w.Int || string(got.Str) != string(w.Str) {
				t.Errorf("%s: param %d = %+v %v, want %+v", name, i, got, ok, w)
			}
		}
		if _, ok := p.Param(len(want)); ok {
			t.Errorf("%s: a parameter past the end", name)
		}
		if _, ok := p.Param(-1); ok {
			t.Errorf("%s: parameter -1", name)
		}
	}
	var p ExecParams
	payload := execPayload(params, true)
	p.Reset(payload, len(params), nil)
	check("with types", &p)
	if string(p.Types()) != string(execTypes(params)) {
		t.Errorf("types %x", p.Types())
	}

	// Without types, the kept ones are used; without either, nothing.
	kept := append([]byte(nil), p.Types()...)
	p.Reset(execPayload(params, false), len(params), kept)
	check("kept types", &p)
	p.Reset(execPayload(params, false), len(params), nil)
	if _, ok := p.Param(0); ok || p.Types() != nil {
		t.Error("values without types")
	}

	// Truncated: what can be read is, the rest is unknown.
	p.Reset(payload[:len(payload)-3], len(params), nil)
	if v, ok := p.Param(8); !ok || string(v.Str) != "abc" {
		t.Errorf("truncated: param 8 = %+v %v", v, ok)
	}
	if _, ok := p.Param(16); ok {
		t.Error("truncated: last parameter read")
	}

	// A long-data parameter has no value in the payload.
	long := []execParam{{typ: myBlob}, {typ: myLong, value: leInt(9, 4)}}
	p.ResetLongData(execPayload(long, true), 2, nil, 1)
	if _, ok := p.Param(0); ok {
		t.Error("long data parameter known")
	}
	if v, ok := p.Param(1); !ok || v.Int != 9 {
		t.Errorf("after long data: %+v %v", v, ok)
	}

	// An unknown type stops the decoding.
	odd := []execParam{{typ: myLong, value: leInt(1, 4)}, {typ: 0x20, value: []byte{1}}, {typ: myLong, value: leInt(2, 4)}}
	p.Reset(execPayload(odd, true), 3, nil)
	if _, ok := p.Param(0); !ok {
		t.Error("first parameter lost")
	}
	if _, ok := p.Param(2); ok {
		t.Error("parameter after an unknown type read")
	}
	p.Reset(nil, 3, nil)
	if _, ok := p.Param(0); ok {
		t.Error("parameter from an empty payload")
	}
}

func TestCalculateExecParams(t *testing.T) {
	d := descKey(t)
	sql := []byte("update t set c = ? where id = ? and c2 = ?")
	params := []execParam{
		{typ: myVarString, value: lenencStr("x")},
		{typ: myLongLong, value: leInt(42, 8)},
		{typ: myLong, value: leInt(5, 4)},
	}
	var p ExecParams
	p.Reset(execPayload(params, true), 3, nil)
	var r PartResult
	d.Calculate(sql, nil, TableRef{Name: []byte("t")}, &p, &r)
	if !r.Known || r.Part != 3 || r.TabletID != 2003 {
		t.Fatalf("%+v", r)
	}
	// The id as a string parameter.
	params[1] = execParam{typ: myString, value: lenencStr("42")}
	p.Reset(execPayload(params, true), 3, nil)
	d.Calculate(sql, nil, TableRef{Name: []byte("t")}, &p, &r)
	if !r.Known || r.Part != 3 {
		t.Fatalf("string id: %+v", r)
	}
	// id = NULL matches no row: nothing to route by.
	params[1] = execParam{typ: myLongLong, null: true}
	p.Reset(execPayload(params, true), 3, nil)
	d.Calculate(sql, nil, TableRef{Name: []byte("t")}, &p, &r)
	if r.Known || r.How != HowNoKey {
		t.Fatalf("NULL id: %+v", r)
	}
	// An inserted NULL hashes as the server hashes NULL: partition 5.
	ins := []byte("insert into t (c, id) values (?, ?)")
	p.Reset(execPayload(params[:2], true), 2, nil)
	d.Calculate(ins, nil, TableRef{Name: []byte("t")}, &p, &r)
	if !r.Known || r.Part != 5 {
		t.Fatalf("NULL id inserted: %+v", r)
	}
	// A double is not read.
	params[1] = execParam{typ: myDouble, value: leInt(0, 8)}
	p.Reset(execPayload(params, true), 3, nil)
	d.Calculate(sql, nil, TableRef{Name: []byte("t")}, &p, &r)
	if r.Known || r.How != HowNoParam {
		t.Fatalf("double id: %+v", r)
	}
}

func TestLiteralParams(t *testing.T) {
	var p LiteralParams
	lits := []string{"'abc'", "12", "NULL", "X'00ff'", "-5", "1.5", "now()", `'it\'s'`, " 'x' ", "TRUE",
		"0x10", "N'n'", "_utf8mb4'u'", "'a' 'b'", "18446744073709551615", `"dq"`, "?", "'unclosed"}
	want := []Value{
		{Kind: ValString, Str: []byte("abc")},
		{Kind: ValInt, Int: 12},
		{Kind: ValNull},
		{Kind: ValString, Str: []byte{0, 0xff}, hex: true},
		{Kind: ValInt, Int: -5},
		{Kind: ValString, Str: []byte("1.5")},
		{},
		{Kind: ValString, Str: []byte("it's")},
		{Kind: ValString, Str: []byte("x")},
		{Kind: ValInt, Int: 1},
		{Kind: ValUint, Int: 16, hex: true},
		{Kind: ValString, Str: []byte("n")},
		{Kind: ValString, Str: []byte("u")},
		{},
		{Kind: ValUint, Int: -1},
		{Kind: ValString, Str: []byte("dq")},
		{},
		{},
	}
	raw := make([][]byte, len(lits))
	for i, l := range lits {
		raw[i] = []byte(l)
	}
	p.Reset(raw)
	for i := range raw { // the values are copies
		for j := range raw[i] {
			raw[i][j] = '#'
		}
	}
	for i, w := range want {
		got, ok := p.Param(i)
		if ok != (w.Kind != ValUnknown) || got.Kind != w.Kind || got.Int != w.Int || string(got.Str) != string(w.Str) || got.hex != w.hex {
			t.Errorf("literal %q = %+v %v, want %+v", lits[i], got, ok, w)
		}
	}
	p.Reset(nil)
	if _, ok := p.Param(0); ok {
		t.Error("a parameter after Reset(nil)")
	}
}
