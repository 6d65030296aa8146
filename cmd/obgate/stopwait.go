package main

import (
	"errors"
	"os"
)

// stopEvents are what serve waits on once it serves.
type stopEvents struct {
	serveErr <-chan error     // the SQL listener failed
	sig      <-chan os.Signal // SIGTERM or SIGINT: drain and exit
	usr2     <-chan os.Signal // SIGUSR2: a hot upgrade, then wait on
	exit     <-chan string    // the upgrader's reason to drain and exit
}

// stopReason is why serve stops: exactly one field is set.
type stopReason struct {
	err    error
	signal os.Signal
	exit   string
}

// waitForStop waits until ev says serve must stop, and calls onUSR2 for
// each SIGUSR2 meanwhile, inside guard: a panic in one hot upgrade's
// start is logged and counted, and obgate goes on serving and waiting.
func waitForStop(ev stopEvents, guard *loopGuard, onUSR2 func()) stopReason {
	for {
		select {
		case err := <-ev.serveErr:
			return stopReason{err: err}
		case s := <-ev.sig:
			return stopReason{signal: s}
		case <-ev.usr2:
			guard.do(whereSignals, onUSR2)
		case why := <-ev.exit:
			return stopReason{exit: why}
		}
	}
}

// maxAdoptPanics bounds how often adoptSessions starts adopt again after
// a panic, so that a bug that panics before reading anything does not
// spin.
const maxAdoptPanics = 16

// adoptSessions runs adopt (reactor.Server.AdoptSessions on the link the
// parent hands sessions over on) inside guard until it returns: after a
// panic, it reads on from the next record of the link (a SOCK_SEQPACKET
// socket keeps records whole), so one bad record costs its session, not
// the others still to come. It returns adopt's error, or after
// maxAdoptPanics panics gives up with errAdoptPanics.
func adoptSessions(guard *loopGuard, adopt func() error) error {
	for range maxAdoptPanics {
		var err error
		if guard.do(whereAdopt, func() { err = adopt() }) {
			return err
		}
	}
	return errAdoptPanics
}

var errAdoptPanics = errors.New("adopting sessions panicked too often; the rest are not taken")
