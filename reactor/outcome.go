package reactor

import (
	"errors"
	"net"

	"obgate/health"
	"obgate/internal/failure"
	"obgate/mysqlproto"
	"obgate/reactor/backend"
)

// relayStage says how far a statement got when its relay ended.
type relayStage uint8

const (
	// stageSent: the request went to a server; nothing of the answer
	// reached the client. The request may be kept (statement.kept).
	stageSent relayStage = iota
	// stagePartAnswered: some of the answer reached the client; nothing
	// may be sent again.
	stagePartAnswered
	// stageAnswered: the whole answer reached the client.
	stageAnswered
)

// outcome is what relaying one statement's answer did. When the server
// answered with an ERR, the stage is stageAnswered and errCode its code.
type outcome struct {
	stage   relayStage
	fail    failure.Kind
	errCode uint16
	written int64 // bytes of the answer that reached the client
	err     error // the relay's error (nil when answered)
}

// relay streams the answer to cmd (runRelay), says how far it got
// and what failed, and tells the server's health entry.
func (st *statement) relay(cmd mysqlproto.Command) outcome {
	st.relayBegin(cmd)
	written, err := st.runRelay(true)
	return st.relayEnd(written, err)
}

// relayEnd closes the relay relayBegin opened, which ended with written
// bytes to the client and err, and judges its outcome.
func (st *statement) relayEnd(written int64, err error) outcome {
	s := st.s
	be := st.rr.be
	st.rr.close()
	be.Health.End()
	o := outcome{written: written, err: err, stage: stageAnswered}
	switch {
	case err == nil:
		o.errCode = s.scanner.ErrCode()
	case errors.Is(err, errRetryableERR):
		o.stage, o.fail, o.errCode = stageSent, failure.HeldERR, s.scanner.ErrCode()
	case written > 0:
		o.stage, o.fail = stagePartAnswered, classifyFailure(err)
	default:
		o.stage, o.fail = stageSent, classifyFailure(err)
	}
	reportOutcome(be, o)
	return o
}

// reportOutcome tells the server's health entry what the try did, when
// that counts against the server (health.AliveFailure).
func reportOutcome(be *backend.Conn, o outcome) {
	if reason := health.AliveFailure(health.Outcome{Failure: o.fail, Code: o.errCode,
		ClosedHere: be.Closed.Load(), PeerGone: be.PeerGone.Load()}); reason != "" {
		be.Health.AliveFailed(reason)
	}
}

// classifyFailure names what err says failed.
func classifyFailure(err error) failure.Kind {
	var se *sessionError
	if errors.As(err, &se) {
		switch se.source {
		case QuitClientNetwork, QuitClientProto:
			return failure.Client
		case QuitServerProto:
			return failure.Protocol
		}
	}
	var ne net.Error
	switch {
	case errors.As(err, &ne) && ne.Timeout():
		return failure.Timeout
	case errors.Is(err, mysqlproto.ErrOB20PayloadChecksum), errors.Is(err, mysqlproto.ErrOB20HeaderChecksum),
		errors.Is(err, mysqlproto.ErrOB20Sequence), errors.Is(err, mysqlproto.ErrOB20Malformed):
		return failure.Protocol
	}
	return failure.Transport
}

// releaseKept ends the hold on the request kept for a resend: called once
// the first byte of its answer is on its way to the client, before the
// client is read again, and when the command ends.
func (st *statement) releaseKept() {
	s := st.s
	if st.kept != nil {
		st.kept = nil
		if st.keptOwned {
			st.keptOwned = false
			return
		}
		s.client.io.Release()
	}
}
