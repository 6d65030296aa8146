package mysqlproto

import (
	"encoding/binary"
	"errors"
)

// ErrMalformed reports a packet that does not decode.
var ErrMalformed = errors.New("mysqlproto: malformed packet")

// ProtocolVersion10 is the only handshake version obgate speaks.
const ProtocolVersion10 = 10

// Handshake is the server's initial handshake packet (protocol v10).
type Handshake struct {
	ServerVersion string
	ConnectionID  uint32
	// Capability holds the server's flags; MariaDB's extended flags are in
	// the high 32 bits when ClientMySQL is clear.
	Capability Capability
	Charset    byte
	Status     ServerStatus
	// AuthData is the scramble (usually 20 bytes, without the trailing NUL).
	AuthData   []byte
	AuthPlugin string
}

// ParseHandshake decodes an initial handshake payload. The result owns its
// memory.
func ParseHandshake(b []byte) (*Handshake, error) {
	if len(b) < 1 || b[0] != ProtocolVersion10 {
		return nil, ErrMalformed
	}
	h := &Handshake{}
	ver, pos, ok := ReadNullString(b, 1)
	if !ok {
		return nil, ErrMalformed
	}
	h.ServerVersion = string(ver)
	if h.ConnectionID, pos, ok = ReadUint32(b, pos); !ok {
		return nil, ErrMalformed
	}
	part1, pos, ok := ReadFixed(b, pos, 8)
	if !ok {
		return nil, ErrMalformed
	}
	pos++ // filler
	capLow, pos, ok := ReadUint16(b, pos)
	if !ok {
		return nil, ErrMalformed
	}
	h.Capability = Capability(capLow)
	h.AuthData = append([]byte(nil), part1...)
	if pos >= len(b) {
		return h, nil // pre-4.1 style short greeting
	}
	h.Charset = b[pos]
	pos++
	st, pos, ok := ReadUint16(b, pos)
	if !ok {
		return nil, ErrMalformed
	}
	h.Status = ServerStatus(st)
	capHigh, pos, ok := ReadUint16(b, pos)
	if !ok {
		return nil, ErrMalformed
	}
	h.Capability |= Capability(capHigh) << 16
	if pos >= len(b) {
		return nil, ErrMalformed
	}
	authLen := int(b[pos])
	pos++
	reserved, pos, ok := ReadFixed(b, pos, 10)
	if !ok {
		return nil, ErrMalformed
	}
	h.Capability = withMariaDBCaps(h.Capability, reserved[6:])
	if h.Capability.Has(ClientSecureConnection) {
		n := max(13, authLen-8)
		part2, p, ok := ReadFixed(b, pos, n)
		if !ok {
			// Some servers send fewer bytes; take what is there.
			part2, p = b[pos:], len(b)
		}
		pos = p
		if l := len(part2); l > 0 && part2[l-1] == 0 {
			part2 = part2[:l-1]
		}
		h.AuthData = append(h.AuthData, part2...)
	}
	if h.Capability.Has(ClientPluginAuth) && pos < len(b) {
		name, _, ok := ReadNullString(b, pos)
		if !ok {
			name = b[pos:] // the NUL is missing in some server versions
		}
		h.AuthPlugin = string(name)
	}
	return h, nil
}

// Append encodes h as a handshake payload.
func (h *Handshake) Append(dst []byte) []byte {
	dst = append(dst, ProtocolVersion10)
	dst = AppendNullString(dst, h.ServerVersion)
	dst = binary.LittleEndian.AppendUint32(dst, h.ConnectionID)
	var part1 [8]byte
	copy(part1[:], h.AuthData)
	dst = append(dst, part1[:]...)
	dst = append(dst, 0)
	c := uint32(h.Capability)
	dst = binary.LittleEndian.AppendUint16(dst, uint16(c))
	dst = append(dst, h.Charset)
	dst = binary.LittleEndian.AppendUint16(dst, uint16(h.Status))
	dst = binary.LittleEndian.AppendUint16(dst, uint16(c>>16))
	if h.Capability.Has(ClientPluginAuth) {
		dst = append(dst, byte(len(h.AuthData)+1))
	} else {
		dst = append(dst, 0)
	}
	var reserved [10]byte
	putMariaDBCaps(reserved[6:], h.Capability)
	dst = append(dst, reserved[:]...)
	if h.Capability.Has(ClientSecureConnection) {
		part2 := []byte(nil)
		if len(h.AuthData) > 8 {
			part2 = h.AuthData[8:]
		}
		dst = append(dst, part2...)
		for i := len(part2); i < 12; i++ {
			dst = append(dst, 0)
		}
		dst = append(dst, 0)
	}
	if h.Capability.Has(ClientPluginAuth) {
		dst = AppendNullString(dst, h.AuthPlugin)
	}
	return dst
}

// ConnAttr is one connection attribute of a handshake response.
type ConnAttr struct{ Key, Value string }

// HandshakeResponse is the client's HandshakeResponse41.
type HandshakeResponse struct {
	// Capability holds the client's flags; MariaDB clients put their
	// extended flags in the filler, read into the high 32 bits.
	Capability    Capability
	MaxPacketSize uint32
	Charset       byte
	User          string
	AuthResponse  []byte
	Database      string
	AuthPlugin    string
	Attrs         []ConnAttr
}

// sslRequestLen is the payload length of an SSLRequest: the fixed prefix of
// a HandshakeResponse41.
const sslRequestLen = 32

// IsSSLRequest reports whether a client's first packet asks for TLS.
func IsSSLRequest(b []byte) bool {
	return len(b) == sslRequestLen && Capability(binary.LittleEndian.Uint32(b)).Has(ClientSSL)
}

// ParseHandshakeResponse decodes a HandshakeResponse41 payload. The result
// owns its memory. A response with more than MaxConnectAttrs connection
// attributes fails with ErrTooManyConnAttrs; a server answers any error
// with ER_HANDSHAKE_ERROR ("Bad handshake").
func ParseHandshakeResponse(b []byte) (*HandshakeResponse, error) {
	c32, pos, ok := ReadUint32(b, 0)
	if !ok {
		return nil, ErrMalformed
	}
	r := &HandshakeResponse{Capability: Capability(c32)}
	if !r.Capability.Has(ClientProtocol41) {
		return nil, errors.New("mysqlproto: client does not speak protocol 4.1")
	}
	if r.MaxPacketSize, pos, ok = ReadUint32(b, pos); !ok {
		return nil, ErrMalformed
	}
	if pos >= len(b) {
		return nil, ErrMalformed
	}
	r.Charset = b[pos]
	pos++
	filler, pos, ok := ReadFixed(b, pos, 23)
	if !ok {
		return nil, ErrMalformed
	}
	r.Capability = withMariaDBCaps(r.Capability, filler[19:])
	user, pos, ok := ReadNullString(b, pos)
	if !ok {
		return nil, ErrMalformed
	}
	r.User = string(user)
	var auth []byte
	switch {
	case r.Capability.Has(ClientPluginAuthLenEncData):
		auth, pos, ok = ReadLenEncString(b, pos)
	case r.Capability.Has(ClientSecureConnection):
		if pos >= len(b) {
			return nil, ErrMalformed
		}
		auth, pos, ok = ReadFixed(b, pos+1, int(b[pos]))
	default:
		auth, pos, ok = ReadNullString(b, pos)
	}
	if !ok {
		return nil, ErrMalformed
	}
	r.AuthResponse = append([]byte(nil), auth...)
	if r.Capability.Has(ClientConnectWithDB) && pos < len(b) {
		db, p, ok := ReadNullString(b, pos)
		if !ok {
			return nil, ErrMalformed
		}
		r.Database, pos = string(db), p
	}
	var err error
	if r.AuthPlugin, r.Attrs, _, err = readAuthTail(b, pos, r.Capability); err != nil {
		return nil, err
	}
	return r, nil
}

// readAuthTail reads what ends a HandshakeResponse41 and a
// COM_CHANGE_USER, from b at pos, each part when caps has its flag and b
// has bytes left: the auth plugin name, then the connection attributes
// (hasAttrs: the packet carried an attribute list, possibly empty).
func readAuthTail(b []byte, pos int, caps Capability) (plugin string, attrs []ConnAttr, hasAttrs bool, err error) {
	if caps.Has(ClientPluginAuth) && pos < len(b) {
		name, p, ok := ReadNullString(b, pos)
		if !ok {
			return "", nil, false, ErrMalformed
		}
		plugin, pos = string(name), p
	}
	if caps.Has(ClientConnectAttrs) && pos < len(b) {
		list, _, ok := ReadLenEncString(b, pos)
		if !ok {
			return "", nil, false, ErrMalformed
		}
		if attrs, err = parseConnAttrs(list); err != nil {
			return "", nil, false, err
		}
		hasAttrs = true
	}
	return plugin, attrs, hasAttrs, nil
}

// Attr returns the value of connection attribute key.
func (r *HandshakeResponse) Attr(key string) (string, bool) {
	for _, a := range r.Attrs {
		if a.Key == key {
			return a.Value, true
		}
	}
	return "", false
}

// Append encodes r as a HandshakeResponse41 payload.
func (r *HandshakeResponse) Append(dst []byte) []byte {
	c := r.Capability
	if len(r.Attrs) > 0 {
		c |= ClientConnectAttrs
	}
	if r.Database != "" {
		c |= ClientConnectWithDB
	}
	dst = appendResponsePrefix(dst, c, r.MaxPacketSize, r.Charset)
	dst = AppendNullString(dst, r.User)
	switch {
	case c.Has(ClientPluginAuthLenEncData):
		dst = AppendLenEncBytes(dst, r.AuthResponse)
	case c.Has(ClientSecureConnection):
		dst = append(dst, byte(len(r.AuthResponse)))
		dst = append(dst, r.AuthResponse...)
	default:
		dst = append(dst, r.AuthResponse...)
		dst = append(dst, 0)
	}
	if c.Has(ClientConnectWithDB) {
		dst = AppendNullString(dst, r.Database)
	}
	if c.Has(ClientPluginAuth) {
		dst = AppendNullString(dst, r.AuthPlugin)
	}
	if c.Has(ClientConnectAttrs) {
		dst = appendConnAttrs(dst, r.Attrs)
	}
	return dst
}

// AppendSSLRequest encodes the SSLRequest a client sends before starting TLS.
func AppendSSLRequest(dst []byte, c Capability, maxPacket uint32, charset byte) []byte {
	return appendResponsePrefix(dst, c|ClientSSL, maxPacket, charset)
}

// appendResponsePrefix encodes the fixed prefix of a HandshakeResponse41
// (all of an SSLRequest): capabilities, max packet size, charset and the
// filler, which carries MariaDB's extended capabilities.
func appendResponsePrefix(dst []byte, c Capability, maxPacket uint32, charset byte) []byte {
	dst = binary.LittleEndian.AppendUint32(dst, uint32(c))
	dst = binary.LittleEndian.AppendUint32(dst, maxPacket)
	dst = append(dst, charset)
	var filler [23]byte
	putMariaDBCaps(filler[19:], c)
	return append(dst, filler[:]...)
}

// PatchResponseCapability rewrites the capability flags of an encoded
// HandshakeResponse41 (or SSLRequest) in place, MariaDB's extended flags
// included, leaving every other byte as the client sent it.
func PatchResponseCapability(b []byte, c Capability) bool {
	if len(b) < sslRequestLen {
		return false
	}
	binary.LittleEndian.PutUint32(b, uint32(c))
	putMariaDBCaps(b[28:], c)
	return true
}

// withMariaDBCaps returns caps with the MariaDB extended capabilities that
// ext (4 bytes of a greeting's or response's filler) holds, unless caps
// has ClientMySQL: a MySQL peer's filler is reserved.
func withMariaDBCaps(caps Capability, ext []byte) Capability {
	if caps.Has(ClientMySQL) {
		return caps
	}
	return caps | Capability(binary.LittleEndian.Uint32(ext))<<mariadbExtendedShift
}

// putMariaDBCaps writes c's MariaDB extended capabilities into ext (4
// bytes of a greeting's or response's filler), unless c has ClientMySQL.
func putMariaDBCaps(ext []byte, c Capability) {
	if !c.Has(ClientMySQL) {
		binary.LittleEndian.PutUint32(ext, uint32(c>>mariadbExtendedShift))
	}
}
