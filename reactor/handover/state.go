package handover

import (
	"encoding/binary"
	"fmt"
)

// State is what a session is handed to another obgate process with (a
// hot upgrade, reactor/handover.go), as plain data: the client session's
// own fields, then a record per part (records.go).
type State struct {
	Mode      byte   // ModeMySQL or ModeOB
	SessionID uint32 // the client's connection id
	Caps      uint64 // negotiated with the client
	Status    uint16 // status flags the client was last told
	User      string // the login name as the client sent it
	DB        string
	// ConnectedAt and LastActive are unix nanoseconds.
	ConnectedAt, LastActive int64
	TransCount, StmtCount   uint64
	BytesIn, BytesOut       uint64
	StmtLast                uint32 // the statement id given last
	Stmts                   []Stmt
	// Servers are the session's server sessions, the current one first;
	// the descriptors travel beside the state in the same order.
	Servers []Server
	// Move is what mysql routing mode keeps to log the client in on
	// another server; nil when the session cannot move.
	Move *Move
	// OB is an OceanBase-mode session's login and session state.
	OB *OB
}

const (
	magic = "OBGS"
	// Version is the encoding this obgate writes and reads. A new process
	// announces it to its parent, which hands sessions over only to a
	// process that reads its version.
	Version = 1
	// ModeMySQL is a mysql routing mode session, ModeOB an OceanBase one.
	ModeMySQL = 'm'
	ModeOB    = 'o'
	// MaxState bounds an encoded state: one message on the hand-over
	// socket. A bigger session is not handed over.
	MaxState = 256 << 10
)

// The state's own tags. Never reuse a number.
const (
	tagMode        = 1
	tagSessionID   = 2
	tagCaps        = 3
	tagStatus      = 4
	tagUser        = 5
	tagDB          = 6
	tagConnectedAt = 7
	tagLastActive  = 8
	tagStmtLast    = 9
	tagStmt        = 10 // a Stmt record
	tagServer      = 11 // a Server record
	tagMove        = 12 // a Move record
	tagOB          = 13 // an OB record

	tagTransCount = optional | 1
	tagStmtCount  = optional | 2
	tagBytesIn    = optional | 3
	tagBytesOut   = optional | 4
)

// Encode returns the state's encoding.
func (h *State) Encode() []byte {
	w := fieldWriter{b: append([]byte(magic), 0, 0)}
	binary.LittleEndian.PutUint16(w.b[4:], Version)
	w.bytes(tagMode, []byte{h.Mode})
	w.u64(tagSessionID, uint64(h.SessionID))
	w.u64(tagCaps, h.Caps)
	w.u64(tagStatus, uint64(h.Status))
	w.str(tagUser, h.User)
	w.str(tagDB, h.DB)
	w.u64(tagConnectedAt, uint64(h.ConnectedAt))
	w.u64(tagLastActive, uint64(h.LastActive))
	w.u64(tagTransCount, h.TransCount)
	w.u64(tagStmtCount, h.StmtCount)
	w.u64(tagBytesIn, h.BytesIn)
	w.u64(tagBytesOut, h.BytesOut)
	w.u64(tagStmtLast, uint64(h.StmtLast))
	for i := range h.Stmts {
		w.record(tagStmt, h.Stmts[i].encode)
	}
	for i := range h.Servers {
		w.record(tagServer, h.Servers[i].encode)
	}
	if h.Move != nil {
		w.record(tagMove, h.Move.encode)
	}
	if h.OB != nil {
		w.record(tagOB, h.OB.encode)
	}
	return w.b
}

// Decode reads an encoding; the state does not borrow b.
func Decode(b []byte) (*State, error) {
	if len(b) < 6 || string(b[:4]) != magic {
		return nil, fmt.Errorf("%w: no header", ErrState)
	}
	if v := binary.LittleEndian.Uint16(b[4:]); v != Version {
		return nil, fmt.Errorf("%w: version %d; this obgate reads version %d", ErrState, v, Version)
	}
	h := &State{}
	var seen uint64 // required top-level tags present, by bit
	err := eachField(b[6:], func(tag uint16, v []byte) (bool, error) {
		var err error
		if tag < 64 {
			seen |= 1 << tag
		}
		switch tag {
		case tagMode:
			if len(v) != 1 {
				return true, fmt.Errorf("%w: mode", ErrState)
			}
			h.Mode = v[0]
		case tagSessionID:
			h.SessionID, err = fieldU32(tag, v)
		case tagCaps:
			h.Caps, err = fieldU64(tag, v)
		case tagStatus:
			h.Status, err = fieldU16(tag, v)
		case tagUser:
			h.User = string(v)
		case tagDB:
			h.DB = string(v)
		case tagConnectedAt:
			h.ConnectedAt, err = fieldI64(tag, v)
		case tagLastActive:
			h.LastActive, err = fieldI64(tag, v)
		case tagTransCount:
			h.TransCount, err = fieldU64(tag, v)
		case tagStmtCount:
			h.StmtCount, err = fieldU64(tag, v)
		case tagBytesIn:
			h.BytesIn, err = fieldU64(tag, v)
		case tagBytesOut:
			h.BytesOut, err = fieldU64(tag, v)
		case tagStmtLast:
			h.StmtLast, err = fieldU32(tag, v)
		case tagStmt:
			var st Stmt
			err = st.decode(v)
			h.Stmts = append(h.Stmts, st)
		case tagServer:
			var sv Server
			err = sv.decode(v)
			h.Servers = append(h.Servers, sv)
		case tagMove:
			h.Move = &Move{}
			err = h.Move.decode(v)
		case tagOB:
			h.OB = &OB{}
			err = h.OB.decode(v)
		default:
			return false, nil
		}
		return true, err
	})
	if err != nil {
		return nil, err
	}
	for _, tag := range []uint16{tagMode, tagSessionID, tagCaps, tagUser} {
		if seen&(1<<tag) == 0 {
			return nil, fmt.Errorf("%w: field %#x missing", ErrState, tag)
		}
	}
	return h, nil
}
