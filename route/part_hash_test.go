package route

import (
	"encoding/hex"
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	"obgate/internal/obpart/golden"
	"obgate/mysqlproto"
)

// The partition calculation against vectors computed by OceanBase's own
// code (internal/obpart/golden): each vector becomes a table partitioned
// by KEY, HASH or RANGE COLUMNS over columns of the vector's types and a
// statement with the vector's values as literals, and Calculate must pick
// the partition OceanBase picks. This runs the whole path: the literal
// reader, the cast to the column, the collation, the hash chain in key
// order and the partition index.

func loadGolden(t *testing.T) *golden.Vectors {
	t.Helper()
	v, err := golden.Load()
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// goldenKey is the key column and SQL literal for a vector value.
func goldenKey(t *testing.T, name string, v golden.Value) (PartKey, string) {
	k := PartKey{Name: name, Level: 1, Type: mysqlproto.OBTypeInt, Collation: mysqlproto.OBCollationBinary}
	hexLit := func(b []byte) string { return "X'" + hex.EncodeToString(b) + "'" }
	switch v.Kind {
	case golden.Null:
		return k, "NULL"
	case golden.Int:
		return k, strconv.FormatInt(v.Int, 10)
	case golden.Uint:
		k.Type = mysqlproto.OBTypeUInt64
		return k, strconv.FormatUint(uint64(v.Int), 10)
	case golden.CI, golden.PadBin, golden.Binary:
		k.Type = mysqlproto.OBTypeVarchar
		k.Collation = map[golden.Kind]int64{golden.CI: 45, golden.PadBin: 46, golden.Binary: 63}[v.Kind]
		return k, hexLit(v.Bytes)
	case golden.Date:
		k.Type = mysqlproto.OBTypeDate
		return k, "'" + v.Text + "'"
	case golden.Datetime:
		k.Type, k.Scale = mysqlproto.OBTypeDatetime, 6
		return k, "'" + v.Text + "'"
	case golden.TS:
		k.Type, k.Scale = mysqlproto.OBTypeTimestamp, 6
		return k, "'" + time.UnixMicro(v.Int).UTC().Format("2006-01-02 15:04:05.000000") + "'"
	case golden.Decimal:
		k.Type, k.Precision, k.Scale = mysqlproto.OBTypeDecimalInt, v.Precision, v.Scale
		return k, v.Text
	}
	t.Fatalf("value %s", v.Spelled)
	return k, ""
}

func TestCalculateMatchesOceanBaseKey(t *testing.T) {
	n := 0
	for _, vec := range loadGolden(t).Keys {
		var keys []PartKey
		var names, lits []string
		for i, v := range vec.Values {
			k, lit := goldenKey(t, fmt.Sprintf("c%d", i), v)
			k.Idx = i
			keys = append(keys, k)
			names = append(names, k.Name)
			lits = append(lits, lit)
		}
		d := mustDesc(t, PartInfoSpec{Level: 1, PartType: PartFuncKey, PartNum: int64(vec.Parts),
			PartExpr: strings.Join(names, ","), Keys: keys}, hashParts(vec.Parts, 100), nil)
		sql := fmt.Sprintf("INSERT INTO t (%s) VALUES (%s)", strings.Join(names, ", "), strings.Join(lits, ", "))
		r := PartResult{TZ: time.UTC}
		stmt := []byte(sql)
		f := Lex(stmt)
		d.Calculate(stmt, &f, TableRef{Name: []byte("t")}, nil, &r)
		if !r.Known || r.Part != vec.Part {
			t.Errorf("%s with %d partitions: part %d (%s), OceanBase %d", sql, vec.Parts, r.Part, r.How, vec.Part)
		}
		n++
	}
	if n < 500 {
		t.Fatalf("only %d KEY vectors", n)
	}
}

func TestCalculateMatchesOceanBaseHash(t *testing.T) {
	for _, vec := range loadGolden(t).Hashes {
		d := mustDesc(t, PartInfoSpec{Level: 1, PartType: PartFuncHash, PartNum: int64(vec.Parts),
			Keys: []PartKey{intKey("id", 1, 0)}}, hashParts(vec.Parts, 100), nil)
		lit := strconv.FormatInt(vec.Value, 10)
		if vec.Null {
			lit = "NULL"
		}
		runCalcCases(t, d, []calcCase{{sql: "INSERT INTO t (id) VALUES (" + lit + ")", part: vec.Part, sub: -1, how: HowKeys}})
	}
}

// Each comparison vector as a RANGE COLUMNS table of two partitions, p0
// VALUES LESS THAN (b) and p1 LESS THAN (MAXVALUE): a goes to p0 exactly
// when it is below b in the collation.
func TestCalculateMatchesOceanBaseCompare(t *testing.T) {
	for _, vec := range loadGolden(t).Cmps {
		b := mysqlproto.OBObj{Meta: mysqlproto.OBVarcharMeta, Bytes: vec.B}
		b.Meta.Collation = uint8(vec.Collation)
		d := mustDesc(t, PartInfoSpec{Level: 1, PartType: PartFuncRangeColumns, PartNum: 2,
			Keys: []PartKey{varcharKey("s", 1, 0, vec.Collation)}},
			[]PartRow{{PartID: 0, TabletID: 10, Name: "p0", HighBound: rangeBin(b)},
				{PartID: 1, TabletID: 11, Name: "p1", HighBound: rangeBin(obMax)}}, nil)
		want := 1
		if vec.Sign < 0 {
			want = 0
		}
		runCalcCases(t, d, []calcCase{{sql: "SELECT * FROM t WHERE s = X'" + hex.EncodeToString(vec.A) + "'", part: want, sub: -1, how: HowKeys}})
	}
}
