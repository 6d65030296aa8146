package health

import (
	"strconv"

	"obgate/internal/failure"
	"obgate/mysqlproto"
)

// AliveFailureERR reports the server ERR codes that count against the
// server on the alive-but-unavailable list (odp-behaviour.md §2.4): the
// server is starting or stopping, or corrupt or out of memory.
func AliveFailureERR(code uint16) bool {
	switch code {
	case mysqlproto.OBServerIsInit, mysqlproto.OBServerIsStopping, mysqlproto.OBPacketChecksumError,
		mysqlproto.OBAllocateMemoryFailed:
		return true
	}
	return false
}

// Outcome is what one try of a statement on a server did, as far as the
// server's health is concerned.
type Outcome struct {
	Failure failure.Kind
	// Code is the server ERR's code, 0 when it answered none.
	Code uint16
	// ClosedHere: obgate closed the server connection itself (a KILL,
	// the detect task, the session ending), so its breaking says nothing
	// of the server, unless PeerGone says the server went first.
	ClosedHere, PeerGone bool
}

// AliveFailure returns the reason an outcome counts against its server on
// the alive list, "" when it does not: an ERR of AliveFailureERR, a broken
// connection, a protocol failure or a timeout the server caused.
func AliveFailure(o Outcome) string {
	switch o.Failure {
	case failure.None, failure.HeldERR:
		if o.Code != 0 && AliveFailureERR(o.Code) {
			return ERRReason(o.Code)
		}
	case failure.Transport, failure.Protocol, failure.Timeout:
		if !o.ClosedHere || o.PeerGone {
			return o.Failure.String()
		}
	}
	return ""
}

// ERRReason names a server ERR as a failure reason (metrics, logs).
func ERRReason(code uint16) string { return "err_" + strconv.Itoa(int(code)) }
