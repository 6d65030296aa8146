package mysqlproto

import "encoding/binary"

// ChangeUser is a COM_CHANGE_USER request: log another user in on the
// same connection and reset its session. Which optional fields the packet
// carries depends on the capabilities the connection's login negotiated.
type ChangeUser struct {
	User         string
	AuthResponse []byte
	Database     string
	// Charset is the collation id the session switches to; HasCharset
	// says whether the packet carried one (old clients stop after the
	// database).
	Charset    uint16
	HasCharset bool
	AuthPlugin string
	// Attrs are the connection attributes; HasAttrs says whether the
	// packet carried an attribute list (possibly empty).
	Attrs    []ConnAttr
	HasAttrs bool
}

// ParseChangeUser decodes a COM_CHANGE_USER payload, command byte
// included, sent on a connection with capabilities caps. The result owns
// its memory. More than MaxConnectAttrs connection attributes fail with
// ErrTooManyConnAttrs.
func ParseChangeUser(b []byte, caps Capability) (*ChangeUser, error) {
	if len(b) < 1 || Command(b[0]) != ComChangeUser {
		return nil, ErrMalformed
	}
	user, pos, ok := ReadNullString(b, 1)
	if !ok {
		return nil, ErrMalformed
	}
	r := &ChangeUser{User: string(user)}
	var auth []byte
	if caps.Has(ClientSecureConnection) {
		if pos >= len(b) {
			return nil, ErrMalformed
		}
		auth, pos, ok = ReadFixed(b, pos+1, int(b[pos]))
	} else {
		auth, pos, ok = ReadNullString(b, pos)
	}
	if !ok {
		return nil, ErrMalformed
	}
	r.AuthResponse = append([]byte(nil), auth...)
	db, pos, ok := ReadNullString(b, pos)
	if !ok {
		return nil, ErrMalformed
	}
	r.Database = string(db)
	if pos >= len(b) {
		return r, nil
	}
	if r.Charset, pos, ok = ReadUint16(b, pos); !ok {
		return nil, ErrMalformed
	}
	r.HasCharset = true
	var err error
	if r.AuthPlugin, r.Attrs, r.HasAttrs, err = readAuthTail(b, pos, caps); err != nil {
		return nil, err
	}
	return r, nil
}

// Append encodes r as a COM_CHANGE_USER payload, command byte included,
// for a connection with capabilities caps.
func (r *ChangeUser) Append(dst []byte, caps Capability) []byte {
	dst = append(dst, byte(ComChangeUser))
	dst = AppendNullString(dst, r.User)
	if caps.Has(ClientSecureConnection) {
		dst = append(dst, byte(len(r.AuthResponse)))
		dst = append(dst, r.AuthResponse...)
	} else {
		dst = append(dst, r.AuthResponse...)
		dst = append(dst, 0)
	}
	dst = AppendNullString(dst, r.Database)
	if !r.HasCharset {
		return dst
	}
	dst = binary.LittleEndian.AppendUint16(dst, r.Charset)
	if caps.Has(ClientPluginAuth) {
		dst = AppendNullString(dst, r.AuthPlugin)
	}
	if caps.Has(ClientConnectAttrs) && r.HasAttrs {
		dst = appendConnAttrs(dst, r.Attrs)
	}
	return dst
}
