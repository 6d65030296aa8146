package mysqlproto

import (
	"errors"
	"strconv"
)

// MaxConnectAttrs caps the connection attributes a login or
// COM_CHANGE_USER may carry. Each attribute costs a decoder a ConnAttr and
// two strings, and an entry takes only 2 bytes on the wire, so without a
// cap a 64 KiB login could make the proxy build 32,768 of them (and keep
// them for every later server login). Real drivers send 5 to 30 (libmysql
// and Connector/J under a dozen, and ODP adds about 14 of its own);
// MySQL's performance_schema keeps only 512 bytes of them per session by
// default. 256 leaves ample room for all of that.
const MaxConnectAttrs = 256

// ErrTooManyConnAttrs reports a connection-attribute list longer than
// MaxConnectAttrs. It is a malformed login: servers answer it with
// ER_HANDSHAKE_ERROR ("Bad handshake").
var ErrTooManyConnAttrs = errors.New("mysqlproto: more than " + strconv.Itoa(MaxConnectAttrs) + " connection attributes")

// parseConnAttrs decodes the key/value pairs of a connection attribute
// list (without its length prefix). Keys and values are copied, so the
// result does not borrow b; their sizes are bounded by b, and their number
// by MaxConnectAttrs.
func parseConnAttrs(b []byte) ([]ConnAttr, error) {
	var out []ConnAttr
	for q := 0; q < len(b); {
		if len(out) == MaxConnectAttrs {
			return nil, ErrTooManyConnAttrs
		}
		k, q2, ok := ReadLenEncString(b, q)
		if !ok {
			return nil, ErrMalformed
		}
		v, q3, ok := ReadLenEncString(b, q2)
		if !ok {
			return nil, ErrMalformed
		}
		out = append(out, ConnAttr{string(k), string(v)})
		q = q3
	}
	return out, nil
}

// appendConnAttrs encodes a connection attribute list with its length
// prefix.
func appendConnAttrs(dst []byte, attrs []ConnAttr) []byte {
	n := 0
	for _, a := range attrs {
		n += LenEncIntSize(uint64(len(a.Key))) + len(a.Key) + LenEncIntSize(uint64(len(a.Value))) + len(a.Value)
	}
	dst = AppendLenEncInt(dst, uint64(n))
	for _, a := range attrs {
		dst = AppendLenEncString(dst, a.Key)
		dst = AppendLenEncString(dst, a.Value)
	}
	return dst
}
