package handover

import (
	"encoding/binary"
	"fmt"
)

// The records of a State, each with its own tags, its encoding and its
// decoding. Tags are per record; never reuse a number.

// Stmt is one of the client's prepared statements.
type Stmt struct {
	ID              uint32
	SQL             []byte
	Params, Columns uint16
	Types           []byte
	Home            bool // its long data or open cursor is on Servers[0]
}

const (
	tagStmtID      = 1
	tagStmtSQL     = 2
	tagStmtParams  = 3
	tagStmtColumns = 4
	tagStmtTypes   = 5
	tagStmtHome    = 6
)

func (st *Stmt) encode(w *fieldWriter) {
	w.u64(tagStmtID, uint64(st.ID))
	w.bytes(tagStmtSQL, st.SQL)
	w.u64(tagStmtParams, uint64(st.Params))
	w.u64(tagStmtColumns, uint64(st.Columns))
	w.bytes(tagStmtTypes, st.Types)
	w.flag(tagStmtHome, st.Home)
}

func (st *Stmt) decode(b []byte) error {
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

// Server is one server session.
type Server struct {
	Addr     string
	ThreadID uint32
	Status   uint16
	LastUsed int64
	Stmts    []ServerStmt
}

// ServerStmt maps a client statement id to the server's.
type ServerStmt struct {
	Client, Server uint32
	Bound          bool
}

const (
	tagSrvAddr     = 1
	tagSrvThreadID = 2
	tagSrvStatus   = 3
	tagSrvStmt     = 4 // client:4 | server:4 | bound:1
	tagSrvLastUsed = optional | 1
)

func (sv *Server) encode(w *fieldWriter) {
	w.str(tagSrvAddr, sv.Addr)
	w.u64(tagSrvThreadID, uint64(sv.ThreadID))
	w.u64(tagSrvStatus, uint64(sv.Status))
	w.u64(tagSrvLastUsed, uint64(sv.LastUsed))
	for _, m := range sv.Stmts {
		v := binary.LittleEndian.AppendUint32(nil, m.Client)
		v = binary.LittleEndian.AppendUint32(v, m.Server)
		b := byte(0)
		if m.Bound {
			b = 1
		}
		w.bytes(tagSrvStmt, append(v, b))
	}
}

func (sv *Server) decode(b []byte) error {
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
			sv.LastUsed, err = fieldI64(tag, v)
		case tagSrvStmt:
			if len(v) != 9 || v[8] > 1 {
				return true, fmt.Errorf("%w: server statement", ErrState)
			}
			sv.Stmts = append(sv.Stmts, ServerStmt{
				Client: binary.LittleEndian.Uint32(v), Server: binary.LittleEndian.Uint32(v[4:]), Bound: v[8] == 1,
			})
		default:
			return false, nil
		}
		return true, err
	})
}

// Move is what mysql routing mode keeps to log the client in on another
// server (reactor's moveLogin).
type Move struct {
	Scramble []byte
	Login    []byte // the client's login, as a HandshakeResponse41 payload
	Stage1   []byte // SHA1(password); empty for a user without one
	Caps     uint64
	Stateful bool
}

const (
	tagMoveScramble = 1
	tagMoveLogin    = 2
	tagMoveStage1   = 3
	tagMoveCaps     = 4
	tagMoveStateful = 5
)

func (mv *Move) encode(w *fieldWriter) {
	w.bytes(tagMoveScramble, mv.Scramble)
	w.bytes(tagMoveLogin, mv.Login)
	w.bytes(tagMoveStage1, mv.Stage1)
	w.u64(tagMoveCaps, mv.Caps)
	w.flag(tagMoveStateful, mv.Stateful)
}

func (mv *Move) decode(b []byte) error {
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

// OB is an OceanBase-mode session's login and variables, which the new
// process replays on the server sessions it opens.
type OB struct {
	Cluster, Tenant, IdentityUser string
	ClusterID                     int64
	Login                         []byte // the client's login, replayed on new server sessions
	Scramble                      []byte
	DB                            string
	Sys, User                     []Var // user values are SQL literals
	Hot                           []Hot
	// MultiStmtSet says the client chose MULTI_STATEMENTS with
	// COM_SET_OPTION, MultiStmt what it chose.
	MultiStmtSet, MultiStmt bool
}

// Var is a session variable.
type Var struct{ Name, Value string }

// Hot is a hot variable (reactor's sessvars.go) by its index; the reader
// checks the index against the variables it knows.
type Hot struct {
	Index uint8
	Value string
}

const (
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

func (ob *OB) encode(w *fieldWriter) {
	w.str(tagOBCluster, ob.Cluster)
	w.str(tagOBTenant, ob.Tenant)
	w.str(tagOBUser, ob.IdentityUser)
	w.u64(tagOBClusterID, uint64(ob.ClusterID))
	w.bytes(tagOBLogin, ob.Login)
	w.bytes(tagOBScramble, ob.Scramble)
	w.str(tagOBDB, ob.DB)
	for _, list := range []struct {
		tag  uint16
		vars []Var
	}{{tagOBSysVar, ob.Sys}, {tagOBUserVar, ob.User}} {
		for _, v := range list.vars {
			w.record(list.tag, v.encode)
		}
	}
	for _, hv := range ob.Hot {
		w.bytes(tagOBHot, append([]byte{hv.Index}, hv.Value...))
	}
	if ob.MultiStmtSet {
		on := byte(0)
		if ob.MultiStmt {
			on = 1
		}
		w.bytes(tagOBMultiStmt, []byte{on})
	}
}

func (ob *OB) decode(b []byte) error {
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
			ob.ClusterID, err = fieldI64(tag, v)
		case tagOBLogin:
			ob.Login = append([]byte{}, v...)
		case tagOBScramble:
			ob.Scramble = append([]byte{}, v...)
		case tagOBDB:
			ob.DB = string(v)
		case tagOBSysVar, tagOBUserVar:
			var hv Var
			err = hv.decode(v)
			if tag == tagOBSysVar {
				ob.Sys = append(ob.Sys, hv)
			} else {
				ob.User = append(ob.User, hv)
			}
		case tagOBHot:
			if len(v) < 1 {
				return true, fmt.Errorf("%w: hot variable", ErrState)
			}
			ob.Hot = append(ob.Hot, Hot{Index: v[0], Value: string(v[1:])})
		case tagOBMultiStmt:
			ob.MultiStmtSet = true
			ob.MultiStmt, err = fieldFlag(tag, v)
		default:
			return false, nil
		}
		return true, err
	})
}

func (v Var) encode(w *fieldWriter) {
	w.str(tagVarName, v.Name)
	w.str(tagVarValue, v.Value)
}

func (v *Var) decode(b []byte) error {
	return eachField(b, func(tag uint16, val []byte) (bool, error) {
		switch tag {
		case tagVarName:
			v.Name = string(val)
		case tagVarValue:
			v.Value = string(val)
		default:
			return false, nil
		}
		return true, nil
	})
}
