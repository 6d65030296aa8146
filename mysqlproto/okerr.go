package mysqlproto

import "encoding/binary"

// Response packet headers.
const (
	OKHeader          = 0x00
	EOFHeader         = 0xfe
	ERRHeader         = 0xff
	LocalInfileHeader = 0xfb
)

// maxEOFLen bounds an EOF packet's payload: longer 0xfe packets are rows.
const maxEOFLen = 9

// IsEOFPacket reports whether payload is an EOF packet in the classic
// (pre-DEPRECATE_EOF) sense: header 0xfe and a short payload.
func IsEOFPacket(b []byte) bool { return len(b) > 0 && b[0] == EOFHeader && len(b) < maxEOFLen }

// IsResultSetTerminator reports whether a packet read where a row could
// appear ends the result set: an ERR, or the 0xfe-headed EOF (or the OK
// that replaces it when DEPRECATE_EOF is on). n is the packet's payload
// length, which may exceed len(b) when only a prefix is at hand.
func IsResultSetTerminator(first byte, n int, deprecateEOF bool) bool {
	switch first {
	case ERRHeader:
		return true
	case EOFHeader:
		if deprecateEOF {
			return n < MaxPayloadLen
		}
		return n < maxEOFLen
	}
	return false
}

// OK is a decoded OK packet (or the OK-style EOF of DEPRECATE_EOF). Info and
// SessionState are borrowed from the decoded payload.
type OK struct {
	AffectedRows uint64
	LastInsertID uint64
	Status       ServerStatus
	Warnings     uint16
	Info         []byte
	// SessionState holds the raw session-state-change entries when the
	// server set StatusSessionStateChange; iterate them with SessionStates.
	SessionState []byte
}

// ParseOK decodes an OK payload whose header is 0x00 or 0xfe. caps are the
// capabilities in force on the connection (SESSION_TRACK changes the layout).
func ParseOK(b []byte, caps Capability) (OK, bool) {
	var ok OK
	if len(b) < 1 || (b[0] != OKHeader && b[0] != EOFHeader) {
		return ok, false
	}
	var good bool
	pos := 1
	if ok.AffectedRows, pos, good = ReadLenEncInt(b, pos); !good {
		return ok, false
	}
	if ok.LastInsertID, pos, good = ReadLenEncInt(b, pos); !good {
		return ok, false
	}
	var st uint16
	if st, pos, good = ReadUint16(b, pos); !good {
		return ok, false
	}
	ok.Status = ServerStatus(st)
	if ok.Warnings, pos, good = ReadUint16(b, pos); !good {
		return ok, false
	}
	if pos >= len(b) {
		return ok, true
	}
	if caps.Has(ClientSessionTrack) {
		if ok.Info, pos, good = ReadLenEncString(b, pos); !good {
			return ok, false
		}
		if ok.Status.Has(StatusSessionStateChange) && pos < len(b) {
			if ok.SessionState, _, good = ReadLenEncString(b, pos); !good {
				return ok, false
			}
		}
		return ok, true
	}
	ok.Info = b[pos:]
	return ok, true
}

// AppendOK encodes an OK payload with header 0x00.
func AppendOK(dst []byte, ok OK, caps Capability) []byte {
	return appendOK(dst, OKHeader, ok, caps)
}

// AppendOKAsEOF encodes the 0xfe-headed OK that ends a result set when the
// client set DEPRECATE_EOF.
func AppendOKAsEOF(dst []byte, ok OK, caps Capability) []byte {
	return appendOK(dst, EOFHeader, ok, caps)
}

func appendOK(dst []byte, header byte, ok OK, caps Capability) []byte {
	dst = append(dst, header)
	dst = AppendLenEncInt(dst, ok.AffectedRows)
	dst = AppendLenEncInt(dst, ok.LastInsertID)
	st := ok.Status
	if len(ok.SessionState) > 0 {
		st |= StatusSessionStateChange
	}
	dst = binary.LittleEndian.AppendUint16(dst, uint16(st))
	dst = binary.LittleEndian.AppendUint16(dst, ok.Warnings)
	if caps.Has(ClientSessionTrack) {
		if len(ok.Info) > 0 || len(ok.SessionState) > 0 {
			dst = AppendLenEncBytes(dst, ok.Info)
		}
		if len(ok.SessionState) > 0 {
			dst = AppendLenEncBytes(dst, ok.SessionState)
		}
		return dst
	}
	return append(dst, ok.Info...)
}

// EOF is a decoded classic EOF packet.
type EOF struct {
	Warnings uint16
	Status   ServerStatus
}

// ParseEOF decodes a classic EOF payload.
func ParseEOF(b []byte) (EOF, bool) {
	if !IsEOFPacket(b) {
		return EOF{}, false
	}
	if len(b) < 5 {
		return EOF{}, true // 4.0-style EOF without status
	}
	return EOF{
		Warnings: binary.LittleEndian.Uint16(b[1:]),
		Status:   ServerStatus(binary.LittleEndian.Uint16(b[3:])),
	}, true
}

// AppendEOF encodes a classic EOF payload.
func AppendEOF(dst []byte, warnings uint16, status ServerStatus) []byte {
	dst = append(dst, EOFHeader)
	dst = binary.LittleEndian.AppendUint16(dst, warnings)
	return binary.LittleEndian.AppendUint16(dst, uint16(status))
}

// ERR is a decoded ERR packet. Message is borrowed from the payload.
type ERR struct {
	Code    uint16
	State   [5]byte
	Message []byte
}

// MariaDBProgressCode is the error code MariaDB uses for progress reports,
// which are sent as 0xff packets in the middle of a response when the client
// asked for MARIADB_CLIENT_PROGRESS. They are not errors.
const MariaDBProgressCode = 0xffff

// ParseERR decodes an ERR payload (protocol 4.1, with SQLSTATE marker when
// present).
func ParseERR(b []byte) (ERR, bool) {
	var e ERR
	if len(b) < 3 || b[0] != ERRHeader {
		return e, false
	}
	e.Code = binary.LittleEndian.Uint16(b[1:])
	pos := 3
	if len(b) >= 9 && b[3] == '#' {
		copy(e.State[:], b[4:9])
		pos = 9
	} else {
		copy(e.State[:], "HY000")
	}
	e.Message = b[pos:]
	return e, true
}

// SQLState returns the SQLSTATE as a string.
func (e ERR) SQLState() string { return string(e.State[:]) }

// AppendERR encodes an ERR payload.
func AppendERR(dst []byte, code uint16, state, message string) []byte {
	dst = append(dst, ERRHeader)
	dst = binary.LittleEndian.AppendUint16(dst, code)
	dst = append(dst, '#')
	var st [5]byte
	copy(st[:], state)
	for i := len(state); i < 5; i++ {
		st[i] = '0'
	}
	dst = append(dst, st[:]...)
	return append(dst, message...)
}

// Session-state change types of an OK packet.
const (
	SessionTrackSystemVariables = 0x00
	SessionTrackSchema          = 0x01
	SessionTrackStateChange     = 0x02
	SessionTrackGTIDs           = 0x03
	SessionTrackTxCharacter     = 0x04
	SessionTrackTxState         = 0x05
)

// SessionStateIter walks the entries of OK.SessionState. The zero value is
// exhausted; create one with SessionStates.
type SessionStateIter struct {
	b   []byte
	pos int
	bad bool
}

// SessionStates returns an iterator over raw session-state entries.
func SessionStates(raw []byte) SessionStateIter { return SessionStateIter{b: raw} }

// Next returns the next entry's type and data (borrowed). It returns false
// at the end or on malformed input; Err tells which.
func (it *SessionStateIter) Next() (typ byte, data []byte, ok bool) {
	if it.bad || it.pos >= len(it.b) {
		return 0, nil, false
	}
	typ = it.b[it.pos]
	data, p, good := ReadLenEncString(it.b, it.pos+1)
	if !good {
		it.bad = true
		return 0, nil, false
	}
	it.pos = p
	return typ, data, true
}

// Malformed reports whether iteration stopped on bad input.
func (it *SessionStateIter) Malformed() bool { return it.bad }

// ParseSystemVariable decodes the data of a SessionTrackSystemVariables entry
// at data[pos:]: a name and a value, both borrowed. Servers may pack several
// pairs in one entry; call again with the returned position.
func ParseSystemVariable(data []byte, pos int) (name, value []byte, next int, ok bool) {
	name, p, ok := ReadLenEncString(data, pos)
	if !ok {
		return nil, nil, pos, false
	}
	value, p, ok = ReadLenEncString(data, p)
	if !ok {
		return nil, nil, pos, false
	}
	return name, value, p, true
}

// AppendSystemVariableState appends one SessionTrackSystemVariables entry.
func AppendSystemVariableState(dst []byte, name, value string) []byte {
	n := LenEncIntSize(uint64(len(name))) + len(name) + LenEncIntSize(uint64(len(value))) + len(value)
	dst = append(dst, SessionTrackSystemVariables)
	dst = AppendLenEncInt(dst, uint64(n))
	dst = AppendLenEncString(dst, name)
	return AppendLenEncString(dst, value)
}

// AppendSchemaState appends one SessionTrackSchema entry.
func AppendSchemaState(dst []byte, schema string) []byte {
	dst = append(dst, SessionTrackSchema)
	dst = AppendLenEncInt(dst, uint64(LenEncIntSize(uint64(len(schema)))+len(schema)))
	return AppendLenEncString(dst, schema)
}
