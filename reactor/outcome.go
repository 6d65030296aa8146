package reactor

import (
	"errors"
	"net"

	"obgate/mysqlproto"
)

// relayStage says how far a statement got when its relay ended.
type relayStage uint8

const (
	// stageSent: the request went to a server; nothing of the answer
	// reached the client. The request may be kept (Session.kept).
	stageSent relayStage = iota
	// stagePartAnswered: some of the answer reached the client; nothing
	// may be sent again.
	stagePartAnswered
	// stageAnswered: the whole answer reached the client.
	stageAnswered
)

// failClass says what ended a relay that did not complete.
type failClass uint8

const (
	failNone            failClass = iota
	failClient                    // the client's connection broke or the client broke the protocol
	failServerTransport           // the server connection broke (EOF, reset, refused write)
	failServerProtocol            // the server broke the protocol (bad checksum, out of step)
	failTimeout                   // the server did not answer in time
	failServerERR                 // the server answered an ERR obgate held back to retry elsewhere
)

// outcome is what relaying one statement's answer did. When the server
// answered with an ERR, the stage is stageAnswered and errCode its code.
type outcome struct {
	stage   relayStage
	fail    failClass
	errCode uint16
	written int64 // bytes of the answer that reached the client
	err     error // the relay's error (nil when answered)
}

// relay streams the answer to cmd (relayResponse), says how far it got
// and what failed, and tells the server's health entry.
func (s *Session) relay(cmd mysqlproto.Command) outcome {
	be := s.backend
	be.health.Begin()
	written, err := s.relayResponse(cmd)
	be.health.End()
	o := outcome{written: written, err: err, stage: stageAnswered}
	switch {
	case err == nil:
		o.errCode = s.scanner.ErrCode()
	case errors.Is(err, errRetryableERR):
		o.stage, o.fail, o.errCode = stageSent, failServerERR, s.scanner.ErrCode()
	case written > 0:
		o.stage, o.fail = stagePartAnswered, classifyFailure(err)
	default:
		o.stage, o.fail = stageSent, classifyFailure(err)
	}
	reportOutcome(be, o)
	return o
}

// reportOutcome counts what the server did wrong, if anything, against
// it: the ERR codes of §2.4, and a broken connection, a protocol failure
// or a timeout, unless obgate closed the connection itself (a KILL, the
// detect task, the session ending).
func reportOutcome(be *serverConn, o outcome) {
	switch o.fail {
	case failNone, failServerERR:
		if o.errCode != 0 && aliveFailureERR(o.errCode) {
			be.health.AliveFailed(errReason(o.errCode))
		}
	case failServerTransport, failServerProtocol, failTimeout:
		if !be.closed.Load() || be.peerGone.Load() {
			be.health.AliveFailed(o.fail.String())
		}
	}
}

// classifyFailure names what err says failed.
func classifyFailure(err error) failClass {
	var se *sessionError
	if errors.As(err, &se) {
		switch se.source {
		case QuitClientNetwork, QuitClientProto:
			return failClient
		case QuitServerProto:
			return failServerProtocol
		}
	}
	var ne net.Error
	switch {
	case errors.As(err, &ne) && ne.Timeout():
		return failTimeout
	case errors.Is(err, mysqlproto.ErrOB20PayloadChecksum), errors.Is(err, mysqlproto.ErrOB20HeaderChecksum),
		errors.Is(err, mysqlproto.ErrOB20Sequence), errors.Is(err, mysqlproto.ErrOB20Malformed):
		return failServerProtocol
	}
	return failServerTransport
}

// releaseKept ends the hold on the request kept for a resend: called once
// the first byte of its answer is on its way to the client, before the
// client is read again, and when the command ends.
func (s *Session) releaseKept() {
	if s.kept != nil {
		s.kept = nil
		if s.keptOwned {
			s.keptOwned = false
			return
		}
		s.client.Release()
	}
}
