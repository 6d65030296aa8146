package route

import (
	"reflect"
	"strings"
	"testing"

	"obgate/mysqlproto"
)

func TestPartDescShape(t *testing.T) {
	d := descMetrics(t)
	if d.Level() != 2 || d.NumTablets() != 4 || d.NumParts() != 2 || d.NumSubParts(1) != 2 || d.NumSubParts(5) != 0 {
		t.Fatalf("shape: level %d tablets %d parts %d", d.Level(), d.NumTablets(), d.NumParts())
	}
	if got := d.Tablets(); !reflect.DeepEqual(got, []int64{6000, 6001, 6010, 6011}) {
		t.Errorf("tablets %v", got)
	}
	d.Tablets()[0] = 1 // the caller's copy
	if d.Tablets()[0] != 6000 {
		t.Error("Tablets shares its slice")
	}
	if got := d.KeyNames(); !reflect.DeepEqual(got, []string{"day", "host"}) {
		t.Errorf("keys %v", got)
	}
	for name, want := range map[string]int64{"p0sp0": 6000, "P1SP1": 6011, "p1sp0": 6010} {
		if id, ok := d.TabletByName([]byte(name)); !ok || id != want {
			t.Errorf("TabletByName(%s) = %d %v", name, id, ok)
		}
	}
	for _, name := range []string{"p0", "p1", "nope", "", strings.Repeat("p", 100)} {
		if id, ok := d.TabletByName([]byte(name)); ok {
			t.Errorf("TabletByName(%q) = %d", name, id)
		}
	}
	if _, ok := d.Tablet(0, 2); ok {
		t.Error("Tablet(0, 2)")
	}

	r := descRange(t) // rows were given out of order
	if got := r.Tablets(); !reflect.DeepEqual(got, []int64{4000, 4001, 4002}) {
		t.Errorf("range tablets %v", got)
	}
	if id, ok := r.TabletByName([]byte("p1")); !ok || id != 4001 {
		t.Errorf("TabletByName(p1) = %d %v", id, ok)
	}
	if id, ok := r.Tablet(2, 99); !ok || id != 4002 {
		t.Errorf("Tablet(2, ignored) = %d %v", id, ok)
	}
	nt := descNonTemplate(t)
	if got := nt.Tablets(); !reflect.DeepEqual(got, []int64{9200, 9201, 9210, 9211, 9212}) {
		t.Errorf("non-template tablets %v", got)
	}
	if nt.NumSubParts(0) != 2 || nt.NumSubParts(1) != 3 {
		t.Errorf("non-template sub counts %d %d", nt.NumSubParts(0), nt.NumSubParts(1))
	}
	for f := PartFunc(-1); f <= 7; f++ {
		if f.String() == "" {
			t.Errorf("PartFunc(%d) has no name", f)
		}
	}
}

func TestPartDescErrors(t *testing.T) {
	id := []PartKey{intKey("id", 1, 0)}
	rng := func(v int64) []byte { return rangeBin(obInt(v)) }
	for _, tc := range []struct {
		name  string
		spec  PartInfoSpec
		parts []PartRow
		subs  []SubPartRow
		want  string
	}{
		{"level 0", PartInfoSpec{Level: 0, Keys: id}, hashParts(2, 0), nil, "level"},
		{"level 3", PartInfoSpec{Level: 3, Keys: id}, hashParts(2, 0), nil, "level"},
		{"bad type", PartInfoSpec{Level: 1, PartType: 9, Keys: id}, hashParts(2, 0), nil, "type"},
		{"no parts", PartInfoSpec{Level: 1, Keys: id}, nil, nil, "no partitions"},
		{"part num", PartInfoSpec{Level: 1, PartNum: 3, Keys: id}, hashParts(2, 0), nil, "part_num"},
		{"no keys", PartInfoSpec{Level: 1}, hashParts(2, 0), nil, "key"},
		{"key level", PartInfoSpec{Level: 1, Keys: []PartKey{intKey("id", 2, 0)}}, hashParts(2, 0), nil, "level"},
		{"hash two keys", PartInfoSpec{Level: 1, Keys: []PartKey{intKey("a", 1, 0), intKey("b", 1, 1)}}, hashParts(2, 0), nil, "key columns"},
		{"same id", PartInfoSpec{Level: 1, Keys: id}, []PartRow{{PartID: 1}, {PartID: 1}}, nil, "twice"},
		{"range no bound", PartInfoSpec{Level: 1, PartType: PartFuncRange, Keys: id}, hashParts(2, 0), nil, "high_bound"},
		{"range bad bound", PartInfoSpec{Level: 1, PartType: PartFuncRange, Keys: id},
			[]PartRow{{PartID: 0, HighBound: []byte{1, 5}}}, nil, "high_bound"},
		{"range trailing bytes", PartInfoSpec{Level: 1, PartType: PartFuncRange, Keys: id},
			[]PartRow{{PartID: 0, HighBound: append(rng(5), 0)}}, nil, "high_bound"},
		{"range equal bounds", PartInfoSpec{Level: 1, PartType: PartFuncRange, Keys: id},
			[]PartRow{{PartID: 0, HighBound: rng(5)}, {PartID: 1, HighBound: rng(5)}}, nil, "one bound"},
		{"range string bound on int", PartInfoSpec{Level: 1, PartType: PartFuncRange, Keys: id},
			[]PartRow{{PartID: 0, HighBound: rangeBin(obStr("x"))}}, nil, "bound value"},
		{"range null bound", PartInfoSpec{Level: 1, PartType: PartFuncRange, Keys: id},
			[]PartRow{{PartID: 0, HighBound: rangeBin(mysqlproto.OBObj{})}}, nil, "bound value"},
		{"list empty", PartInfoSpec{Level: 1, PartType: PartFuncList, Keys: id},
			[]PartRow{{PartID: 0}}, nil, "no values"},
		{"list two defaults", PartInfoSpec{Level: 1, PartType: PartFuncList, Keys: id},
			[]PartRow{{PartID: 0, HighBound: listBin(one(obMax))}, {PartID: 1, HighBound: listBin(one(obMax))}}, nil, "DEFAULT"},
		{"list wrong arity", PartInfoSpec{Level: 1, PartType: PartFuncListColumns, Keys: []PartKey{intKey("a", 1, 0), intKey("b", 1, 1)}},
			[]PartRow{{PartID: 0, HighBound: listBin(one(obInt(1)))}}, nil, "values for"},
		{"sub of unknown part", PartInfoSpec{Level: 2, SubPartType: PartFuncHash, Keys: []PartKey{intKey("a", 1, 0), intKey("b", 2, 1)}},
			hashParts(1, 0), []SubPartRow{{PartID: 5}}, "unknown partition"},
		{"part without subs", PartInfoSpec{Level: 2, SubPartType: PartFuncHash, Keys: []PartKey{intKey("a", 1, 0), intKey("b", 2, 1)}},
			hashParts(2, 0), []SubPartRow{{PartID: 0}}, "no sub-partitions"},
		{"sub part num", PartInfoSpec{Level: 2, SubPartType: PartFuncHash, Keys: []PartKey{intKey("a", 1, 0), intKey("b", 2, 1)}},
			[]PartRow{{PartID: 0, SubPartNum: 2}}, []SubPartRow{{PartID: 0}}, "sub_part_num"},
		{"same sub id", PartInfoSpec{Level: 2, SubPartType: PartFuncHash, Keys: []PartKey{intKey("a", 1, 0), intKey("b", 2, 1)}},
			hashParts(1, 0), []SubPartRow{{PartID: 0, SubPartID: 1}, {PartID: 0, SubPartID: 1}}, "twice"},
		{"no sub keys", PartInfoSpec{Level: 2, SubPartType: PartFuncHash, Keys: id}, hashParts(1, 0), nil, "key"},
	} {
		_, err := NewPartDesc(tc.spec, tc.parts, tc.subs)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: error %v, want %q", tc.name, err, tc.want)
		}
	}
}
