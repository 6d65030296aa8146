package mysqlproto

import "encoding/binary"

// OB20 extra info comes in two formats, chosen by the OB20NewExtraInfo
// flag:
//
//   - new: records of type(uint16) length(uint32) value(length bytes);
//   - old: pairs of ObObj varchar key and ObObj varchar value, where each
//     ObObj is type(1) collation level(1) collation(1) scale(1), a varint
//     length, the bytes and a NUL.
//
// The new record layout is also the layout of the SESS_INFO,
// FEEDBACK_PROXY_INFO and full-link-trace values inside a record, so
// ReadOB20ExtraItem and AppendOB20ExtraItem serve those too.

// OB20ExtraType identifies a new-format extra-info record. Types 0-999 are
// driver-private, 1001-1999 proxy-private and 2001-65535 shared.
type OB20ExtraType uint16

// Extra-info record types.
const (
	OB20ExtraFeedbackProxyInfo OB20ExtraType = 1001
	OB20ExtraTraceInfo         OB20ExtraType = 2001
	OB20ExtraSessInfo          OB20ExtraType = 2002
	OB20ExtraFullTrc           OB20ExtraType = 2003
	OB20ExtraSessInfoVeri      OB20ExtraType = 2004
)

// Old-format keys of the shared record types.
const (
	OB20ExtraKeyTraceInfo    = "ob_trace_info"
	OB20ExtraKeySessInfo     = "sess_inf"
	OB20ExtraKeyFullTrc      = "full_trc"
	OB20ExtraKeySessInfoVeri = "sess_ver"
)

// OldKey returns the old-format key for t, or "" when the old format has
// none.
func (t OB20ExtraType) OldKey() string {
	switch t {
	case OB20ExtraTraceInfo:
		return OB20ExtraKeyTraceInfo
	case OB20ExtraSessInfo:
		return OB20ExtraKeySessInfo
	case OB20ExtraFullTrc:
		return OB20ExtraKeyFullTrc
	case OB20ExtraSessInfoVeri:
		return OB20ExtraKeySessInfoVeri
	}
	return ""
}

// OB20ExtraTypeOfKey maps an old-format key to its record type; unknown keys
// report false.
func OB20ExtraTypeOfKey(key []byte) (OB20ExtraType, bool) {
	switch string(key) {
	case OB20ExtraKeyTraceInfo:
		return OB20ExtraTraceInfo, true
	case OB20ExtraKeySessInfo:
		return OB20ExtraSessInfo, true
	case OB20ExtraKeyFullTrc:
		return OB20ExtraFullTrc, true
	case OB20ExtraKeySessInfoVeri:
		return OB20ExtraSessInfoVeri, true
	}
	return 0, false
}

// AppendOB20ExtraItem appends one new-format record.
func AppendOB20ExtraItem(dst []byte, typ OB20ExtraType, value []byte) []byte {
	dst = binary.LittleEndian.AppendUint16(dst, uint16(typ))
	dst = binary.LittleEndian.AppendUint32(dst, uint32(len(value)))
	return append(dst, value...)
}

// ReadOB20ExtraItem decodes the new-format record at b[pos:]. The value is
// borrowed from b.
func ReadOB20ExtraItem(b []byte, pos int) (typ OB20ExtraType, value []byte, next int, ok bool) {
	if pos < 0 || len(b)-pos < 6 {
		return 0, nil, pos, false
	}
	typ = OB20ExtraType(binary.LittleEndian.Uint16(b[pos:]))
	n := binary.LittleEndian.Uint32(b[pos+2:])
	if uint64(n) > uint64(len(b)-pos-6) {
		return 0, nil, pos, false
	}
	start := pos + 6
	return typ, b[start : start+int(n)], start + int(n), true
}

// AppendOB20ExtraOldItem appends one old-format pair: key and value as
// ObObj varchars in utf8mb4_general_ci.
func AppendOB20ExtraOldItem(dst []byte, key string, value []byte) []byte {
	dst = AppendOBObj(dst, OBObj{Meta: OBVarcharMeta, Bytes: []byte(key)})
	return AppendOBObj(dst, OBObj{Meta: OBVarcharMeta, Bytes: value})
}

// ReadOB20ExtraOldItem decodes the old-format pair at b[pos:]. Both key and
// value must be varchar (or char) ObObjs. They are borrowed from b.
func ReadOB20ExtraOldItem(b []byte, pos int) (key, value []byte, next int, ok bool) {
	k, p, ok := ReadOBObj(b, pos)
	if !ok || !k.Meta.Type.IsString() {
		return nil, nil, pos, false
	}
	v, p, ok := ReadOBObj(b, p)
	if !ok || !v.Meta.Type.IsString() {
		return nil, nil, pos, false
	}
	return k.Bytes, v.Bytes, p, true
}

// OB20ExtraIter walks the records of an extra-info block in either format.
// The zero value is exhausted; create one with OB20ExtraItems.
type OB20ExtraIter struct {
	b         []byte
	pos       int
	newFormat bool
	bad       bool
	key       []byte
}

// OB20ExtraItems returns an iterator over extra, the block without its
// length prefix. newFormat is the frame's OB20NewExtraInfo flag.
func OB20ExtraItems(extra []byte, newFormat bool) OB20ExtraIter {
	return OB20ExtraIter{b: extra, newFormat: newFormat}
}

// Next returns the next record. For the old format the key is mapped to its
// type; unknown keys give type 0 (Key returns the key). The value is
// borrowed. It returns false at the end or on malformed input.
func (it *OB20ExtraIter) Next() (typ OB20ExtraType, value []byte, ok bool) {
	if it.bad || it.pos >= len(it.b) {
		return 0, nil, false
	}
	var next int
	if it.newFormat {
		typ, value, next, ok = ReadOB20ExtraItem(it.b, it.pos)
		it.key = nil
	} else {
		var key []byte
		key, value, next, ok = ReadOB20ExtraOldItem(it.b, it.pos)
		it.key = key
		typ, _ = OB20ExtraTypeOfKey(key)
	}
	if !ok {
		it.bad = true
		return 0, nil, false
	}
	it.pos = next
	return typ, value, true
}

// Key returns the old-format key of the record Next returned last (nil for
// the new format). It is borrowed.
func (it *OB20ExtraIter) Key() []byte { return it.key }

// Malformed reports whether iteration stopped on bad input.
func (it *OB20ExtraIter) Malformed() bool { return it.bad }
