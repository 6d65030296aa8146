package reactor

import (
	"encoding/binary"
	"errors"
	"fmt"
)

// The state a session is handed to another obgate process with (a hot
// upgrade, handover.go), as plain data, and its encoding.
//
// The encoding is explicit and versioned so that a newer obgate takes
// sessions from an older one:
//
//	"OBGS" | version:2 | fields
//	field: tag:2 | length:4 | value
//
// all little-endian. A record (a prepared statement, a server session) is
// a field whose value is fields again. A tag with handoverOptional set
// may be skipped by a reader that does not know it (a detail the session
// can do without); an unknown tag without it makes the reader refuse the
// session, which then stays with the old process and drains there. A new
// field that a session cannot do without takes a new required tag; the
// version changes only when the meaning of an existing field does.
type handoverState struct {
	Mode      byte   // handoverModeMySQL
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
	Stmts                   []handoverStmt
	// Servers are the session's server sessions, the current one first;
	// the descriptors travel beside the state in the same order.
	Servers []handoverServer
	// Move is what mysql routing mode keeps to log the client in on
	// another server (moveLogin); nil when the session cannot move.
	Move *handoverMove
	// OB is an OceanBase-mode session's login and session state, which
	// the new process replays on the server sessions it opens.
	OB *handoverOB
}

// handoverOB is an OceanBase-mode session's login and variables.
type handoverOB struct {
	Cluster, Tenant, IdentityUser string
	ClusterID                     int64
	Login                         []byte // the client's login, replayed on new server sessions
	Scramble                      []byte
	DB                            string
	Sys, User                     []handoverVar // user values are SQL literals
	Hot                           []handoverHot
	// MultiStmtSet says the client chose MULTI_STATEMENTS with
	// COM_SET_OPTION, MultiStmt what it chose.
	MultiStmtSet, MultiStmt bool
}

// handoverVar is a session variable.
type handoverVar struct{ Name, Value string }

// handoverHot is a hot variable (sessvars.go) by its index.
type handoverHot struct {
	Index uint8
	Value string
}

// handoverStmt is one of the client's prepared statements.
type handoverStmt struct {
	ID              uint32
	SQL             []byte
	Params, Columns uint16
	Types           []byte
	Home            bool // its long data or open cursor is on Servers[0]
}

// handoverServer is one server session.
type handoverServer struct {
	Addr     string
	ThreadID uint32
	Status   uint16
	LastUsed int64
	Stmts    []handoverServerStmt
}

// handoverServerStmt maps a client statement id to the server's.
type handoverServerStmt struct {
	Client, Server uint32
	Bound          bool
}

// handoverMove is moveLogin's data.
type handoverMove struct {
	Scramble []byte
	Login    []byte // the client's login, as a HandshakeResponse41 payload
	Stage1   []byte // SHA1(password); empty for a user without one
	Caps     uint64
	Stateful bool
}

const (
	handoverMagic   = "OBGS"
	handoverVersion = 1
	// handoverModeMySQL is a mysql routing mode session,
	// handoverModeOB an OceanBase one.
	handoverModeMySQL = 'm'
	handoverModeOB    = 'o'
	// handoverOptional marks a tag a reader may skip.
	handoverOptional = 0x8000
	// maxHandoverState bounds an encoded state: one message on the
	// hand-over socket. A bigger session is not handed over.
	maxHandoverState = 256 << 10
)

// Field tags. Never reuse a number.
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
	tagStmt        = 10
	tagServer      = 11
	tagMove        = 12
	tagOB          = 13

	tagTransCount = handoverOptional | 1
	tagStmtCount  = handoverOptional | 2
	tagBytesIn    = handoverOptional | 3
	tagBytesOut   = handoverOptional | 4

	// In a statement record.
	tagStmtID      = 1
	tagStmtSQL     = 2
	tagStmtParams  = 3
	tagStmtColumns = 4
	tagStmtTypes   = 5
	tagStmtHome    = 6

	// In a server record.
	tagSrvAddr     = 1
	tagSrvThreadID = 2
	tagSrvStatus   = 3
	tagSrvStmt     = 4 // client:4 | server:4 | bound:1
	tagSrvLastUsed = handoverOptional | 1

	// In a move record.
	tagMoveScramble = 1
	tagMoveLogin    = 2
	tagMoveStage1   = 3
	tagMoveCaps     = 4
	tagMoveStateful = 5

	// In an OceanBase record.
	tagOBCluster   = 1
	tagOBTenant    = 2
	tagOBUser      = 3
	tagOBClusterID = 4
	tagOBLogin     = 5
	tagOBScramble  = 6
	tagOBDB        = 7
	tagOBSysVar    = 8  // a record: tagVarName, tagVarValue
	tagOBUserVar   = 9  // a record: tagVarName, tagVarValue
	tagOBHot       = 10 // index:1 | value
	tagOBMultiStmt = 11 // on:1

	tagVarName  = 1
	tagVarValue = 2
)

// fieldWriter appends fields to b.
type fieldWriter struct{ b []byte }

func (w *fieldWriter) bytes(tag uint16, v []byte) {
	w.b = binary.LittleEndian.AppendUint16(w.b, tag)
	w.b = binary.LittleEndian.AppendUint32(w.b, uint32(len(v)))
	w.b = append(w.b, v...)
}

func (w *fieldWriter) str(tag uint16, v string) { w.bytes(tag, []byte(v)) }

func (w *fieldWriter) u64(tag uint16, v uint64) {
	w.bytes(tag, binary.LittleEndian.AppendUint64(nil, v))
}

func (w *fieldWriter) flag(tag uint16, v bool) {
	if v {
		w.bytes(tag, []byte{1})
	}
}

// record writes a nested record that fill writes.
func (w *fieldWriter) record(tag uint16, fill func(*fieldWriter)) {
	var inner fieldWriter
	fill(&inner)
	w.bytes(tag, inner.b)
}

// encode returns the state's encoding.
func (h *handoverState) encode() []byte {
	w := fieldWriter{b: append([]byte(handoverMagic), 0, 0)}
	binary.LittleEndian.PutUint16(w.b[4:], handoverVersion)
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
	for _, st := range h.Stmts {
		w.record(tagStmt, func(r *fieldWriter) {
			r.u64(tagStmtID, uint64(st.ID))
			r.bytes(tagStmtSQL, st.SQL)
			r.u64(tagStmtParams, uint64(st.Params))
			r.u64(tagStmtColumns, uint64(st.Columns))
			r.bytes(tagStmtTypes, st.Types)
			r.flag(tagStmtHome, st.Home)
		})
	}
	for _, sv := range h.Servers {
		w.record(tagServer, func(r *fieldWriter) {
			r.str(tagSrvAddr, sv.Addr)
			r.u64(tagSrvThreadID, uint64(sv.ThreadID))
			r.u64(tagSrvStatus, uint64(sv.Status))
			r.u64(tagSrvLastUsed, uint64(sv.LastUsed))
			for _, m := range sv.Stmts {
				v := binary.LittleEndian.AppendUint32(nil, m.Client)
				v = binary.LittleEndian.AppendUint32(v, m.Server)
				b := byte(0)
				if m.Bound {
					b = 1
				}
				r.bytes(tagSrvStmt, append(v, b))
			}
		})
	}
	if mv := h.Move; mv != nil {
		w.record(tagMove, func(r *fieldWriter) {
			r.bytes(tagMoveScramble, mv.Scramble)
			r.bytes(tagMoveLogin, mv.Login)
			r.bytes(tagMoveStage1, mv.Stage1)
			r.u64(tagMoveCaps, mv.Caps)
			r.flag(tagMoveStateful, mv.Stateful)
		})
	}
	if ob := h.OB; ob != nil {
		w.record(tagOB, func(r *fieldWriter) {
			r.str(tagOBCluster, ob.Cluster)
			r.str(tagOBTenant, ob.Tenant)
			r.str(tagOBUser, ob.IdentityUser)
			r.u64(tagOBClusterID, uint64(ob.ClusterID))
			r.bytes(tagOBLogin, ob.Login)
			r.bytes(tagOBScramble, ob.Scramble)
			r.str(tagOBDB, ob.DB)
			for _, list := range []struct {
				tag  uint16
				vars []handoverVar
			}{{tagOBSysVar, ob.Sys}, {tagOBUserVar, ob.User}} {
				for _, v := range list.vars {
					r.record(list.tag, func(vr *fieldWriter) {
						vr.str(tagVarName, v.Name)
						vr.str(tagVarValue, v.Value)
					})
				}
			}
			for _, hv := range ob.Hot {
				r.bytes(tagOBHot, append([]byte{hv.Index}, hv.Value...))
			}
			if ob.MultiStmtSet {
				on := byte(0)
				if ob.MultiStmt {
					on = 1
				}
				r.bytes(tagOBMultiStmt, []byte{on})
			}
		})
	}
	return w.b
}

// errHandoverState says an encoded state could not be read.
var errHandoverState = errors.New("bad session hand-over state")

// eachField calls f with each field of b; f returns false for a tag it
// does not know. Unknown optional tags are skipped, unknown required ones
// refused.
func eachField(b []byte, f func(tag uint16, v []byte) (bool, error)) error {
	for len(b) > 0 {
		if len(b) < 6 {
			return fmt.Errorf("%w: truncated field", errHandoverState)
		}
		tag := binary.LittleEndian.Uint16(b)
		n := binary.LittleEndian.Uint32(b[2:])
		if uint64(n) > uint64(len(b)-6) {
			return fmt.Errorf("%w: field %#x runs past the end", errHandoverState, tag)
		}
		v := b[6 : 6+n]
		b = b[6+n:]
		known, err := f(tag, v)
		if err != nil {
			return err
		}
		if !known && tag&handoverOptional == 0 {
			return fmt.Errorf("%w: field %#x is not known to this obgate", errHandoverState, tag)
		}
	}
	return nil
}

func fieldU64(tag uint16, v []byte) (uint64, error) {
	if len(v) != 8 {
		return 0, fmt.Errorf("%w: field %#x has %d bytes, want 8", errHandoverState, tag, len(v))
	}
	return binary.LittleEndian.Uint64(v), nil
}

// fieldU32 reads a u64 field that must fit 32 bits.
func fieldU32(tag uint16, v []byte) (uint32, error) {
	x, err := fieldU64(tag, v)
	if err == nil && x > 1<<32-1 {
		err = fmt.Errorf("%w: field %#x out of range", errHandoverState, tag)
	}
	return uint32(x), err
}

func fieldU16(tag uint16, v []byte) (uint16, error) {
	x, err := fieldU64(tag, v)
	if err == nil && x > 1<<16-1 {
		err = fmt.Errorf("%w: field %#x out of range", errHandoverState, tag)
	}
	return uint16(x), err
}

func fieldFlag(tag uint16, v []byte) (bool, error) {
	if len(v) != 1 || v[0] > 1 {
		return false, fmt.Errorf("%w: field %#x is not a flag", errHandoverState, tag)
	}
	return v[0] == 1, nil
}

// decodeHandoverState reads an encoding; the state does not borrow b.
func decodeHandoverState(b []byte) (*handoverState, error) {
	if len(b) < 6 || string(b[:4]) != handoverMagic {
		return nil, fmt.Errorf("%w: no header", errHandoverState)
	}
	if v := binary.LittleEndian.Uint16(b[4:]); v != handoverVersion {
		return nil, fmt.Errorf("%w: version %d; this obgate reads version %d", errHandoverState, v, handoverVersion)
	}
	h := &handoverState{}
	var seen uint64 // required top-level tags present, by bit
	err := eachField(b[6:], func(tag uint16, v []byte) (bool, error) {
		var err error
		if tag < 64 {
			seen |= 1 << tag
		}
		switch tag {
		case tagMode:
			if len(v) != 1 {
				return true, fmt.Errorf("%w: mode", errHandoverState)
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
			var x uint64
			x, err = fieldU64(tag, v)
			h.ConnectedAt = int64(x)
		case tagLastActive:
			var x uint64
			x, err = fieldU64(tag, v)
			h.LastActive = int64(x)
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
			var st handoverStmt
			err = decodeStmt(v, &st)
			h.Stmts = append(h.Stmts, st)
		case tagServer:
			var sv handoverServer
			err = decodeServer(v, &sv)
			h.Servers = append(h.Servers, sv)
		case tagMove:
			h.Move = &handoverMove{}
			err = decodeMove(v, h.Move)
		case tagOB:
			h.OB = &handoverOB{}
			err = decodeOB(v, h.OB)
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
			return nil, fmt.Errorf("%w: field %#x missing", errHandoverState, tag)
		}
	}
	return h, nil
}

func decodeStmt(b []byte, st *handoverStmt) error {
	return eachField(b, func(tag uint16, v []byte) (bool, error) {
		var err error
		switch tag {
		case tagStmtID:
			st.ID, err = fieldU32(tag, v)
		case tagStmtSQL:
			st.SQL = append([]byte{}, v...)
		case tagStmtParams:
			st.Params, err = fieldU16(tag, v)
		case tagStmtColumns:
			st.Columns, err = fieldU16(tag, v)
		case tagStmtTypes:
			st.Types = append([]byte(nil), v...)
		case tagStmtHome:
			st.Home, err = fieldFlag(tag, v)
		default:
			return false, nil
		}
		return true, err
	})
}

func decodeServer(b []byte, sv *handoverServer) error {
	return eachField(b, func(tag uint16, v []byte) (bool, error) {
		var err error
		switch tag {
		case tagSrvAddr:
			sv.Addr = string(v)
		case tagSrvThreadID:
			sv.ThreadID, err = fieldU32(tag, v)
		case tagSrvStatus:
			sv.Status, err = fieldU16(tag, v)
		case tagSrvLastUsed:
			var x uint64
			x, err = fieldU64(tag, v)
			sv.LastUsed = int64(x)
		case tagSrvStmt:
			if len(v) != 9 || v[8] > 1 {
				return true, fmt.Errorf("%w: server statement", errHandoverState)
			}
			sv.Stmts = append(sv.Stmts, handoverServerStmt{
				Client: binary.LittleEndian.Uint32(v), Server: binary.LittleEndian.Uint32(v[4:]), Bound: v[8] == 1,
			})
		default:
			return false, nil
		}
		return true, err
	})
}

func decodeMove(b []byte, mv *handoverMove) error {
	return eachField(b, func(tag uint16, v []byte) (bool, error) {
		var err error
		switch tag {
		case tagMoveScramble:
			mv.Scramble = append([]byte{}, v...)
		case tagMoveLogin:
			mv.Login = append([]byte{}, v...)
		case tagMoveStage1:
			mv.Stage1 = append([]byte{}, v...)
		case tagMoveCaps:
			mv.Caps, err = fieldU64(tag, v)
		case tagMoveStateful:
			mv.Stateful, err = fieldFlag(tag, v)
		default:
			return false, nil
		}
		return true, err
	})
}

func decodeOB(b []byte, ob *handoverOB) error {
	return eachField(b, func(tag uint16, v []byte) (bool, error) {
		var err error
		switch tag {
		case tagOBCluster:
			ob.Cluster = string(v)
		case tagOBTenant:
			ob.Tenant = string(v)
		case tagOBUser:
			ob.IdentityUser = string(v)
		case tagOBClusterID:
			var x uint64
			x, err = fieldU64(tag, v)
			ob.ClusterID = int64(x)
		case tagOBLogin:
			ob.Login = append([]byte{}, v...)
		case tagOBScramble:
			ob.Scramble = append([]byte{}, v...)
		case tagOBDB:
			ob.DB = string(v)
		case tagOBSysVar, tagOBUserVar:
			var hv handoverVar
			err = eachField(v, func(tag uint16, v []byte) (bool, error) {
				switch tag {
				case tagVarName:
					hv.Name = string(v)
				case tagVarValue:
					hv.Value = string(v)
				default:
					return false, nil
				}
				return true, nil
			})
			if tag == tagOBSysVar {
				ob.Sys = append(ob.Sys, hv)
			} else {
				ob.User = append(ob.User, hv)
			}
		case tagOBHot:
			if len(v) < 1 || v[0] >= uint8(numHot) {
				return true, fmt.Errorf("%w: hot variable", errHandoverState)
			}
			ob.Hot = append(ob.Hot, handoverHot{Index: v[0], Value: string(v[1:])})
		case tagOBMultiStmt:
			ob.MultiStmtSet = true
			ob.MultiStmt, err = fieldFlag(tag, v)
		default:
			return false, nil
		}
		return true, err
	})
}
