// Package golden gives tests the partition-calculation vectors that
// OceanBase's own code computed (vectors.txt, whose header says how).
// route and tools/obsim check their placement against them.
package golden

import (
	_ "embed"
	"encoding/hex"
	"fmt"
	"strconv"
	"strings"
)

//go:embed vectors.txt
var vectorsText string

// Kind is the type of a Value.
type Kind uint8

// Value kinds, as the vectors spell them.
const (
	Null     Kind = iota // null
	Int                  // i:
	Uint                 // u:
	CI                   // ci: utf8mb4_general_ci
	PadBin               // mb4bin: utf8mb4_bin
	Binary               // bin: binary
	Date                 // date:text=day
	Datetime             // datetime:text=usec
	TS                   // ts:usec (a TIMESTAMP's UTC microseconds)
	Decimal              // dec:precision:scale:text
)

// Value is one key value of a vector.
type Value struct {
	Kind Kind
	// Int: Int, Uint (bit pattern), the day of a Date, the microseconds
	// of a Datetime or TS.
	Int int64
	// Bytes: a string's bytes. Text: a date's or decimal's literal text.
	Bytes []byte
	Text  string
	// Precision and Scale of a Decimal.
	Precision, Scale int
	// Spelled is the value as the file spells it.
	Spelled string
}

// Murmur is a murmurhash64A vector.
type Murmur struct {
	Data []byte
	Seed uint64
	Hash uint64
}

// Weight is the utf8mb4_general_ci weight of one code point.
type Weight struct {
	CodePoint rune
	Weight    uint16
}

// Key is a KEY partitioning vector: the key values in key order, the
// chained hash and the partition among Parts.
type Key struct {
	Parts, Part int
	Hash        uint64
	Values      []Value
}

// Hash is a HASH partitioning vector; Null says the value is NULL.
type Hash struct {
	Parts, Part int
	Value       int64
	Null        bool
}

// Cmp is a comparison vector: the sign of comparing A with B in
// collation Collation (an OceanBase collation id).
type Cmp struct {
	Collation int64
	A, B      []byte
	Sign      int
}

// Vectors is the whole file.
type Vectors struct {
	Murmurs []Murmur
	Weights []Weight
	Keys    []Key
	Hashes  []Hash
	Cmps    []Cmp
}

// Load parses the vectors.
func Load() (*Vectors, error) {
	v := &Vectors{}
	for n, line := range strings.Split(vectorsText, "\n") {
		if line == "" || line[0] == '#' {
			continue
		}
		if err := v.add(strings.Fields(line)); err != nil {
			return nil, fmt.Errorf("golden vectors line %d: %w", n+1, err)
		}
	}
	return v, nil
}

func (v *Vectors) add(f []string) error {
	switch f[0] {
	case "murmur":
		if len(f) != 4 {
			return fmt.Errorf("murmur wants 3 fields")
		}
		data, err := hexBytes(f[1])
		seed, err2 := strconv.ParseUint(f[2], 10, 64)
		h, err3 := strconv.ParseUint(f[3], 0, 64)
		if err := firstErr(err, err2, err3); err != nil {
			return err
		}
		v.Murmurs = append(v.Murmurs, Murmur{data, seed, h})
	case "weight":
		if len(f) != 3 {
			return fmt.Errorf("weight wants 2 fields")
		}
		cp, err := strconv.ParseUint(f[1], 16, 32)
		w, err2 := strconv.ParseUint(f[2], 16, 16)
		if err := firstErr(err, err2); err != nil {
			return err
		}
		v.Weights = append(v.Weights, Weight{rune(cp), uint16(w)})
	case "key":
		if len(f) < 5 {
			return fmt.Errorf("key wants parts, partition, hash and values")
		}
		parts, err := strconv.Atoi(f[1])
		part, err2 := strconv.Atoi(f[2])
		h, err3 := strconv.ParseUint(f[3], 0, 64)
		if err := firstErr(err, err2, err3); err != nil {
			return err
		}
		k := Key{Parts: parts, Part: part, Hash: h}
		for _, s := range f[4:] {
			val, err := parseValue(s)
			if err != nil {
				return err
			}
			k.Values = append(k.Values, val)
		}
		v.Keys = append(v.Keys, k)
	case "hash":
		if len(f) != 4 {
			return fmt.Errorf("hash wants 3 fields")
		}
		parts, err := strconv.Atoi(f[1])
		part, err2 := strconv.Atoi(f[2])
		if err := firstErr(err, err2); err != nil {
			return err
		}
		h := Hash{Parts: parts, Part: part, Null: f[3] == "null"}
		if !h.Null {
			if h.Value, err = strconv.ParseInt(f[3], 10, 64); err != nil {
				return err
			}
		}
		v.Hashes = append(v.Hashes, h)
	case "cmp":
		if len(f) != 5 {
			return fmt.Errorf("cmp wants 4 fields")
		}
		coll, err := strconv.ParseInt(f[1], 10, 64)
		a, err2 := hexBytes(f[2])
		b, err3 := hexBytes(f[3])
		sign, err4 := strconv.Atoi(f[4])
		if err := firstErr(err, err2, err3, err4); err != nil {
			return err
		}
		v.Cmps = append(v.Cmps, Cmp{coll, a, b, sign})
	default:
		return fmt.Errorf("unknown line kind %q", f[0])
	}
	return nil
}

// parseValue reads one key value.
func parseValue(s string) (Value, error) {
	v := Value{Spelled: s}
	if s == "null" {
		return v, nil
	}
	kind, rest, ok := strings.Cut(s, ":")
	if !ok {
		return v, fmt.Errorf("value %q", s)
	}
	var err error
	switch kind {
	case "i":
		v.Kind = Int
		v.Int, err = strconv.ParseInt(rest, 10, 64)
	case "u":
		v.Kind = Uint
		var u uint64
		u, err = strconv.ParseUint(rest, 10, 64)
		v.Int = int64(u)
	case "ci", "mb4bin", "bin":
		v.Kind = map[string]Kind{"ci": CI, "mb4bin": PadBin, "bin": Binary}[kind]
		v.Bytes, err = hexBytes(rest)
	case "date", "datetime":
		v.Kind = Date
		if kind == "datetime" {
			v.Kind = Datetime
		}
		text, num, ok := strings.Cut(rest, "=")
		if !ok {
			return v, fmt.Errorf("value %q", s)
		}
		v.Text = strings.ReplaceAll(text, "_", " ")
		v.Int, err = strconv.ParseInt(num, 10, 64)
	case "ts":
		v.Kind = TS
		v.Int, err = strconv.ParseInt(rest, 10, 64)
	case "dec":
		v.Kind = Decimal
		f := strings.SplitN(rest, ":", 3)
		if len(f) != 3 {
			return v, fmt.Errorf("value %q", s)
		}
		v.Text = f[2]
		v.Precision, err = strconv.Atoi(f[0])
		if err == nil {
			v.Scale, err = strconv.Atoi(f[1])
		}
	default:
		return v, fmt.Errorf("value kind %q", kind)
	}
	return v, err
}

func hexBytes(s string) ([]byte, error) {
	if s == "-" {
		return []byte{}, nil
	}
	return hex.DecodeString(s)
}

func firstErr(errs ...error) error {
	for _, e := range errs {
		if e != nil {
			return e
		}
	}
	return nil
}
