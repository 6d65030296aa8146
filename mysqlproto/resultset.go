package mysqlproto

import (
	"encoding/binary"
	"fmt"
	"strconv"
)

// Column types (enum_field_types).
const (
	TypeDecimal    byte = 0x00
	TypeTiny       byte = 0x01
	TypeShort      byte = 0x02
	TypeLong       byte = 0x03
	TypeFloat      byte = 0x04
	TypeDouble     byte = 0x05
	TypeNull       byte = 0x06
	TypeTimestamp  byte = 0x07
	TypeLongLong   byte = 0x08
	TypeInt24      byte = 0x09
	TypeDate       byte = 0x0a
	TypeTime       byte = 0x0b
	TypeDatetime   byte = 0x0c
	TypeYear       byte = 0x0d
	TypeVarchar    byte = 0x0f
	TypeBit        byte = 0x10
	TypeJSON       byte = 0xf5
	TypeNewDecimal byte = 0xf6
	TypeBlob       byte = 0xfc
	TypeVarString  byte = 0xfd
	TypeString     byte = 0xfe
)

// Column flags used by obgate's own result sets.
const (
	FlagNotNull  uint16 = 0x0001
	FlagBinary   uint16 = 0x0080
	FlagUnsigned uint16 = 0x0020
)

// Character sets obgate labels its own columns with.
const (
	CharsetUTF8MB4 uint16 = 45 // utf8mb4_general_ci
	CharsetBinary  uint16 = 63
)

// MaxColumns caps the column count of a result set that a decoder in this
// package accepts. The count is a length-encoded integer of up to 8 bytes,
// so unchecked it could size an allocation (or a loop) from a single
// packet. MySQL and OceanBase tables have at most 4096 columns, and the
// column and parameter counts of a COM_STMT_PREPARE answer are 2-byte
// fields, so 65535 is the protocol's own ceiling.
const MaxColumns = 1<<16 - 1

// Column is a column definition (Protocol::ColumnDefinition41).
type Column struct {
	Schema, Table, OrgTable, Name, OrgName string
	Charset                                uint16
	Length                                 uint32
	Type                                   byte
	Flags                                  uint16
	Decimals                               byte
}

// VarcharColumn describes a text column named name.
func VarcharColumn(name string) Column {
	return Column{Name: name, OrgName: name, Charset: CharsetUTF8MB4, Length: 1024, Type: TypeVarString}
}

// BigintColumn describes a BIGINT column named name.
func BigintColumn(name string) Column {
	return Column{Name: name, OrgName: name, Charset: CharsetBinary, Length: 20, Type: TypeLongLong, Flags: FlagBinary}
}

// Append encodes c as a ColumnDefinition41 payload.
func (c *Column) Append(dst []byte) []byte {
	dst = AppendLenEncString(dst, "def")
	dst = AppendLenEncString(dst, c.Schema)
	dst = AppendLenEncString(dst, c.Table)
	dst = AppendLenEncString(dst, c.OrgTable)
	dst = AppendLenEncString(dst, c.Name)
	dst = AppendLenEncString(dst, c.OrgName)
	dst = append(dst, 0x0c)
	dst = binary.LittleEndian.AppendUint16(dst, c.Charset)
	dst = binary.LittleEndian.AppendUint32(dst, c.Length)
	dst = append(dst, c.Type)
	dst = binary.LittleEndian.AppendUint16(dst, c.Flags)
	dst = append(dst, c.Decimals, 0, 0)
	return dst
}

// ParseColumn decodes a ColumnDefinition41 payload. Strings are copied.
func ParseColumn(b []byte) (Column, bool) {
	var c Column
	pos := 0
	fields := [6]*string{nil, &c.Schema, &c.Table, &c.OrgTable, &c.Name, &c.OrgName}
	for _, f := range fields {
		s, p, ok := ReadLenEncString(b, pos)
		if !ok {
			return c, false
		}
		if f != nil {
			*f = string(s)
		}
		pos = p
	}
	if _, p, ok := ReadLenEncInt(b, pos); ok {
		pos = p
	} else {
		return c, false
	}
	if len(b)-pos < 10 {
		return c, false
	}
	c.Charset = binary.LittleEndian.Uint16(b[pos:])
	c.Length = binary.LittleEndian.Uint32(b[pos+2:])
	c.Type = b[pos+6]
	c.Flags = binary.LittleEndian.Uint16(b[pos+7:])
	c.Decimals = b[pos+9]
	return c, true
}

// ResultSet is a small materialised text result set that obgate answers
// itself (admin commands, the simulator's views). Row values may be nil
// (NULL), string, []byte, bool, any integer type, float64, or a
// fmt.Stringer.
type ResultSet struct {
	Columns []Column
	Rows    [][]any
}

// AppendPackets appends the framed packets of rs (column count, column
// definitions, EOF unless DEPRECATE_EOF, rows, and the final EOF or OK)
// starting at sequence id seq. It returns the extended slice and the next
// sequence id.
func (rs *ResultSet) AppendPackets(dst []byte, seq uint8, caps Capability, status ServerStatus) ([]byte, uint8) {
	var payload []byte
	payload = AppendLenEncInt(payload[:0], uint64(len(rs.Columns)))
	dst, seq = AppendPacket(dst, seq, payload)
	for i := range rs.Columns {
		payload = rs.Columns[i].Append(payload[:0])
		dst, seq = AppendPacket(dst, seq, payload)
	}
	deprecateEOF := caps.Has(ClientDeprecateEOF)
	if !deprecateEOF {
		dst, seq = AppendPacket(dst, seq, AppendEOF(payload[:0], 0, status))
	}
	for _, row := range rs.Rows {
		payload = payload[:0]
		for _, v := range row {
			payload = AppendTextValue(payload, v)
		}
		dst, seq = AppendPacket(dst, seq, payload)
	}
	if deprecateEOF {
		payload = AppendOKAsEOF(payload[:0], OK{Status: status}, caps)
	} else {
		payload = AppendEOF(payload[:0], 0, status)
	}
	return AppendPacket(dst, seq, payload)
}

// AppendTextValue appends one text-protocol row value.
func AppendTextValue(dst []byte, v any) []byte {
	switch x := v.(type) {
	case nil:
		return append(dst, lenEncNull)
	case string:
		return AppendLenEncString(dst, x)
	case []byte:
		return AppendLenEncBytes(dst, x)
	case bool:
		if x {
			return AppendLenEncString(dst, "1")
		}
		return AppendLenEncString(dst, "0")
	case int:
		return appendLenEncNumber(dst, strconv.AppendInt(nil, int64(x), 10))
	case int32:
		return appendLenEncNumber(dst, strconv.AppendInt(nil, int64(x), 10))
	case int64:
		return appendLenEncNumber(dst, strconv.AppendInt(nil, x, 10))
	case uint16:
		return appendLenEncNumber(dst, strconv.AppendUint(nil, uint64(x), 10))
	case uint32:
		return appendLenEncNumber(dst, strconv.AppendUint(nil, uint64(x), 10))
	case uint64:
		return appendLenEncNumber(dst, strconv.AppendUint(nil, x, 10))
	case float64:
		return appendLenEncNumber(dst, strconv.AppendFloat(nil, x, 'g', -1, 64))
	case fmt.Stringer:
		return AppendLenEncString(dst, x.String())
	default:
		return AppendLenEncString(dst, fmt.Sprint(x))
	}
}

func appendLenEncNumber(dst, digits []byte) []byte { return AppendLenEncBytes(dst, digits) }

// ReadTextRow splits a text-protocol row payload into n values, borrowed
// from b; a NULL value is returned as nil with null[i] set.
func ReadTextRow(b []byte, vals [][]byte, null []bool) bool {
	pos := 0
	for i := range vals {
		if pos < len(b) && b[pos] == lenEncNull {
			vals[i], null[i] = nil, true
			pos++
			continue
		}
		v, p, ok := ReadLenEncString(b, pos)
		if !ok {
			return false
		}
		vals[i], null[i], pos = v, false, p
	}
	return pos == len(b)
}
