package mysqlproto

// OceanBase's binary serialization of values ("ObObj"), as far as obgate
// meets it: the old-format OB20 extra info, and the partition bounds that
// __all_virtual_proxy_partition reports in high_bound_val_bin (a serialized
// rowkey for RANGE partitions, a sequence of serialized rows for LIST).
//
// Integers in this encoding are OceanBase varints: unsigned LEB128, 7 bits
// per byte, least significant group first, bit 7 set on every byte but the
// last. Signed values are encoded as their two's-complement bit pattern
// (so -1 takes 10 bytes as a 64-bit varint and 5 as a 32-bit one).

// AppendOBVarint appends v as an OceanBase varint.
func AppendOBVarint(dst []byte, v uint64) []byte {
	for v > 0x7f {
		dst = append(dst, byte(v)|0x80)
		v >>= 7
	}
	return append(dst, byte(v))
}

// ReadOBVarint decodes a varint at b[pos:] of at most 10 bytes.
func ReadOBVarint(b []byte, pos int) (uint64, int, bool) {
	var v uint64
	for i := 0; i < 10; i++ {
		if pos < 0 || pos >= len(b) {
			return 0, pos, false
		}
		c := b[pos]
		pos++
		v |= uint64(c&0x7f) << (7 * i)
		if c&0x80 == 0 {
			return v, pos, true
		}
	}
	return 0, pos, false
}

// OBObjType is an OceanBase value type (ObObjType).
type OBObjType uint8

// The value types obgate encodes and decodes.
const (
	OBTypeNull       OBObjType = 0
	OBTypeTinyInt    OBObjType = 1
	OBTypeSmallInt   OBObjType = 2
	OBTypeMediumInt  OBObjType = 3
	OBTypeInt32      OBObjType = 4
	OBTypeInt        OBObjType = 5
	OBTypeUTinyInt   OBObjType = 6
	OBTypeUSmallInt  OBObjType = 7
	OBTypeUMediumInt OBObjType = 8
	OBTypeUInt32     OBObjType = 9
	OBTypeUInt64     OBObjType = 10
	OBTypeDatetime   OBObjType = 17 // microseconds since 1970-01-01 00:00:00, wall clock
	OBTypeTimestamp  OBObjType = 18 // microseconds since the epoch, UTC
	OBTypeDate       OBObjType = 19 // days since 1970-01-01
	OBTypeVarchar    OBObjType = 22
	OBTypeChar       OBObjType = 23
	OBTypeExtend     OBObjType = 25
	// OBTypeDecimalInt is a DECIMAL as OceanBase 4.2 and later hold it:
	// Bytes is the unscaled integer (little-endian two's complement),
	// Meta.Scale its scale.
	OBTypeDecimalInt OBObjType = 50
)

// IsString reports whether t carries bytes (varchar or char).
func (t OBObjType) IsString() bool { return t == OBTypeVarchar || t == OBTypeChar }

// IsInt reports whether t is one of the integer types.
func (t OBObjType) IsInt() bool { return t >= OBTypeTinyInt && t <= OBTypeUInt64 }

// IsUnsigned reports whether t is an unsigned integer type.
func (t OBObjType) IsUnsigned() bool { return t >= OBTypeUTinyInt && t <= OBTypeUInt64 }

// Values of an OBTypeExtend object.
const (
	OBExtMinValue int64 = 1
	OBExtMaxValue int64 = 2
)

// OceanBase collation levels and collations used in obgate's encodings.
const (
	OBCollationLevelImplicit = 2
	OBCollationLevelNumeric  = 5
	OBCollationUTF8MB4       = 45 // utf8mb4_general_ci
	OBCollationBinary        = 63
)

// OBObjMeta is the 4-byte header of a serialized value.
type OBObjMeta struct {
	Type           OBObjType
	CollationLevel uint8
	Collation      uint8
	Scale          int8
}

// Metas OceanBase gives the values obgate builds.
var (
	OBVarcharMeta = OBObjMeta{Type: OBTypeVarchar, CollationLevel: OBCollationLevelImplicit, Collation: OBCollationUTF8MB4, Scale: -1}
	OBIntMeta     = OBObjMeta{Type: OBTypeInt, CollationLevel: OBCollationLevelNumeric, Collation: OBCollationBinary, Scale: -1}
	OBExtendMeta  = OBObjMeta{Type: OBTypeExtend, CollationLevel: OBCollationLevelNumeric, Collation: OBCollationBinary, Scale: -1}
)

// OBObj is one serialized value. Integers (and the extend marker) are held
// in Int; unsigned types keep their bit pattern there. Strings are in Bytes,
// which decoders borrow from their input.
type OBObj struct {
	Meta  OBObjMeta
	Int   int64
	Bytes []byte
}

// OBMaxValue is the MAXVALUE bound of a RANGE partition (also the DEFAULT
// marker of a LIST partition).
var OBMaxValue = OBObj{Meta: OBExtendMeta, Int: OBExtMaxValue}

// OBIntValue returns a BIGINT value.
func OBIntValue(v int64) OBObj { return OBObj{Meta: OBIntMeta, Int: v} }

// OBVarcharValue returns a utf8mb4_general_ci VARCHAR value.
func OBVarcharValue(s string) OBObj { return OBObj{Meta: OBVarcharMeta, Bytes: []byte(s)} }

// AppendOBObj appends the serialization of o. Types outside the ones listed
// above are written as their meta alone, like a NULL.
func AppendOBObj(dst []byte, o OBObj) []byte {
	dst = append(dst, byte(o.Meta.Type), o.Meta.CollationLevel, o.Meta.Collation, byte(o.Meta.Scale))
	switch o.Meta.Type {
	case OBTypeTinyInt, OBTypeUTinyInt:
		dst = append(dst, byte(o.Int))
	case OBTypeSmallInt, OBTypeMediumInt, OBTypeInt32, OBTypeUSmallInt, OBTypeUMediumInt, OBTypeUInt32, OBTypeDate:
		dst = AppendOBVarint(dst, uint64(uint32(o.Int)))
	case OBTypeInt, OBTypeUInt64, OBTypeExtend, OBTypeDatetime, OBTypeTimestamp:
		dst = AppendOBVarint(dst, uint64(o.Int))
	case OBTypeDecimalInt: // val_len and scale as 32-bit varints, then the bytes
		dst = AppendOBVarint(dst, uint64(len(o.Bytes)))
		dst = AppendOBVarint(dst, uint64(uint32(int32(o.Meta.Scale))))
		dst = append(dst, o.Bytes...)
	case OBTypeVarchar, OBTypeChar:
		dst = AppendOBVarint(dst, uint64(len(o.Bytes)))
		dst = append(dst, o.Bytes...)
		dst = append(dst, 0)
	}
	return dst
}

// ReadOBObj decodes one value at b[pos:]. It fails on types it does not
// know, since their length cannot be determined.
func ReadOBObj(b []byte, pos int) (OBObj, int, bool) {
	var o OBObj
	if pos < 0 || len(b)-pos < 4 {
		return o, pos, false
	}
	o.Meta = OBObjMeta{Type: OBObjType(b[pos]), CollationLevel: b[pos+1], Collation: b[pos+2], Scale: int8(b[pos+3])}
	p := pos + 4
	switch o.Meta.Type {
	case OBTypeNull:
	case OBTypeTinyInt, OBTypeUTinyInt:
		if p >= len(b) {
			return o, pos, false
		}
		if o.Meta.Type == OBTypeTinyInt {
			o.Int = int64(int8(b[p]))
		} else {
			o.Int = int64(b[p])
		}
		p++
	case OBTypeSmallInt, OBTypeMediumInt, OBTypeInt32, OBTypeUSmallInt, OBTypeUMediumInt, OBTypeUInt32, OBTypeDate:
		v, q, ok := ReadOBVarint(b, p)
		if !ok || v > 0xffffffff {
			return o, pos, false
		}
		if o.Meta.Type.IsUnsigned() {
			o.Int = int64(uint32(v))
		} else {
			o.Int = int64(int32(uint32(v)))
		}
		p = q
	case OBTypeInt, OBTypeUInt64, OBTypeExtend, OBTypeDatetime, OBTypeTimestamp:
		v, q, ok := ReadOBVarint(b, p)
		if !ok {
			return o, pos, false
		}
		o.Int, p = int64(v), q
	case OBTypeDecimalInt:
		n, q, ok := ReadOBVarint(b, p)
		if !ok || n > 64 {
			return o, pos, false
		}
		sc, q, ok := ReadOBVarint(b, q)
		if !ok || sc > 0xffffffff || int32(uint32(sc)) != int32(o.Meta.Scale) || uint64(len(b)-q) < n {
			return o, pos, false
		}
		o.Bytes, p = b[q:q+int(n)], q+int(n)
	case OBTypeVarchar, OBTypeChar:
		n, q, ok := ReadOBVarint(b, p)
		if !ok || n >= uint64(len(b)-q) { // the bytes and the NUL
			return o, pos, false
		}
		o.Bytes = b[q : q+int(n)]
		p = q + int(n) + 1
	default:
		return o, pos, false
	}
	return o, p, true
}

// AppendOBRowkey appends a serialized rowkey: a varint count and the values.
// It is the high_bound_val_bin of a RANGE partition.
func AppendOBRowkey(dst []byte, objs ...OBObj) []byte {
	dst = AppendOBVarint(dst, uint64(len(objs)))
	for _, o := range objs {
		dst = AppendOBObj(dst, o)
	}
	return dst
}

// ReadOBRowkey decodes a rowkey at b[pos:], appending its values to objs.
// At most max values are accepted, so a lying count cannot force a large
// allocation.
func ReadOBRowkey(b []byte, pos int, objs []OBObj, max int) ([]OBObj, int, bool) {
	n, p, ok := ReadOBVarint(b, pos)
	if !ok || n > uint64(max) {
		return objs, pos, false
	}
	for range n {
		var o OBObj
		if o, p, ok = ReadOBObj(b, p); !ok {
			return objs, pos, false
		}
		objs = append(objs, o)
	}
	return objs, p, true
}

// AppendOBRow appends a serialized row (ObNewRow): the values as in a rowkey
// followed by an empty projector. A LIST partition's high_bound_val_bin is
// one such row per listed value (a DEFAULT partition: one row holding
// OBMaxValue).
func AppendOBRow(dst []byte, objs ...OBObj) []byte {
	dst = AppendOBRowkey(dst, objs...)
	return AppendOBVarint(dst, 0)
}

// ReadOBRow decodes a row at b[pos:], appending its values to objs. A
// non-empty projector is skipped.
func ReadOBRow(b []byte, pos int, objs []OBObj, max int) ([]OBObj, int, bool) {
	objs, p, ok := ReadOBRowkey(b, pos, objs, max)
	if !ok {
		return objs, pos, false
	}
	n, p, ok := ReadOBVarint(b, p)
	if !ok || n > uint64(len(b)-p) {
		return objs, pos, false
	}
	for range n {
		if _, p, ok = ReadOBVarint(b, p); !ok {
			return objs, pos, false
		}
	}
	return objs, p, true
}
