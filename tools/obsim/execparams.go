package obsim

import (
	"encoding/binary"
	"math"

	"obgate/mysqlproto"
)

// The parameters of COM_STMT_EXECUTE, decoded far enough to locate the
// statement: integers (signed or unsigned) and text (strings, blobs,
// decimals) become values, NULL is NULL, anything else is unknown and
// restricts nothing.
//
//	1  COM_STMT_EXECUTE
//	4  statement id
//	1  flags (cursor type)
//	4  iteration count
//	   when the statement has parameters:
//	(n+7)/8  NULL bitmap
//	1  new-params-bound flag; when 1, n × (type, flags with 0x80 = unsigned)
//	   the values of the parameters that are not NULL, in the binary
//	   protocol's encoding of their type
//
// With the flag 0 the types are those of the previous execute of the same
// statement. A parameter sent with COM_STMT_SEND_LONG_DATA has no value in
// the packet.

// param is the value bound to a placeholder; known is false when it could
// not be decoded.
type param struct {
	v     value
	known bool
}

// execHeaderLen is the part of COM_STMT_EXECUTE before the NULL bitmap.
const execHeaderLen = 1 + 4 + 1 + 4

// More field types (mysqlproto has the common ones).
const (
	typeEnum       byte = 0xf7
	typeSet        byte = 0xf8
	typeTinyBlob   byte = 0xf9
	typeMediumBlob byte = 0xfa
	typeLongBlob   byte = 0xfb
	typeGeometry   byte = 0xff
)

// decodeExecParams decodes the parameters of a COM_STMT_EXECUTE packet of
// ps, remembering the types it sends for the next execute. Parameters it
// cannot read are unknown; a malformed packet leaves the rest unknown.
//
// Called by the session's goroutine.
func decodeExecParams(pkt []byte, ps *prepared) []param {
	n := ps.nparams
	if n == 0 {
		return nil
	}
	params := make([]param, n)
	pos := execHeaderLen
	nullLen := (n + 7) / 8
	if len(pkt) < pos+nullLen+1 {
		return params
	}
	nulls := pkt[pos : pos+nullLen]
	pos += nullLen
	bound := pkt[pos]
	pos++
	if bound == 1 {
		if len(pkt) < pos+2*n {
			ps.types = nil
			return params
		}
		ps.types = append(ps.types[:0], pkt[pos:pos+2*n]...)
		pos += 2 * n
	}
	if len(ps.types) != 2*n {
		return params
	}
	for i := range n {
		if nulls[i/8]&(1<<(i%8)) != 0 {
			params[i] = param{v: value{kind: valNull}, known: true}
			continue
		}
		if ps.longData[i] {
			continue // the value came in COM_STMT_SEND_LONG_DATA
		}
		v, known, next, ok := readParam(pkt, pos, ps.types[2*i], ps.types[2*i+1]&0x80 != 0)
		if !ok {
			break
		}
		params[i], pos = param{v: v, known: known}, next
	}
	return params
}

// readParam reads one binary-protocol value of type typ at pkt[pos:]. It
// returns the value, whether it is usable as a key, the position after it,
// and false when the packet is too short or the type unknown.
func readParam(pkt []byte, pos int, typ byte, unsigned bool) (value, bool, int, bool) {
	fixed := func(size int) (uint64, bool) {
		if len(pkt)-pos < size {
			return 0, false
		}
		var u uint64
		for k := size - 1; k >= 0; k-- {
			u = u<<8 | uint64(pkt[pos+k])
		}
		return u, true
	}
	integer := func(size int) (value, bool, int, bool) {
		u, ok := fixed(size)
		if !ok {
			return value{}, false, pos, false
		}
		if unsigned {
			if u > math.MaxInt64 {
				return value{kind: valUint, u: u}, true, pos + size, true
			}
			return value{kind: valInt, i: int64(u)}, true, pos + size, true
		}
		shift := 64 - 8*size // sign-extend
		return value{kind: valInt, i: int64(u<<shift) >> shift}, true, pos + size, true
	}
	switch typ {
	case mysqlproto.TypeNull:
		return value{kind: valNull}, true, pos, true
	case mysqlproto.TypeTiny:
		return integer(1)
	case mysqlproto.TypeShort, mysqlproto.TypeYear:
		return integer(2)
	case mysqlproto.TypeLong, mysqlproto.TypeInt24:
		return integer(4)
	case mysqlproto.TypeLongLong:
		return integer(8)
	case mysqlproto.TypeFloat:
		_, ok := fixed(4)
		return value{}, false, pos + 4, ok
	case mysqlproto.TypeDouble:
		_, ok := fixed(8)
		return value{}, false, pos + 8, ok
	case mysqlproto.TypeDate, mysqlproto.TypeDatetime, mysqlproto.TypeTimestamp, mysqlproto.TypeTime:
		if pos >= len(pkt) || len(pkt)-pos-1 < int(pkt[pos]) {
			return value{}, false, pos, false
		}
		return value{}, false, pos + 1 + int(pkt[pos]), true
	case mysqlproto.TypeDecimal, mysqlproto.TypeNewDecimal, mysqlproto.TypeVarchar, mysqlproto.TypeVarString,
		mysqlproto.TypeString, mysqlproto.TypeBlob, typeTinyBlob, typeMediumBlob, typeLongBlob:
		b, next, ok := mysqlproto.ReadLenEncString(pkt, pos)
		if !ok {
			return value{}, false, pos, false
		}
		return value{kind: valString, s: string(b)}, true, next, true
	case mysqlproto.TypeBit, mysqlproto.TypeJSON, typeEnum, typeSet, typeGeometry:
		next, ok := mysqlproto.SkipLenEncString(pkt, pos)
		return value{}, false, next, ok
	}
	return value{}, false, pos, false
}

// stmtIDOf reads the statement id of a COM_STMT_* packet; false when the
// packet is too short.
func stmtIDOf(pkt []byte) (uint32, bool) {
	if len(pkt) < 5 {
		return 0, false
	}
	return binary.LittleEndian.Uint32(pkt[1:]), true
}
