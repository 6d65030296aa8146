package reactor

import (
	"errors"
	"sync"
	"sync/atomic"

	"github.com/cloudwego/netpoll"
)

// Input backlog bounds of netpoll connections. A server connection stops
// being read once a response has high bytes waiting for a slow client, so
// TCP pushes back on the server; a client connection stops being read
// once it has pipelined high bytes ahead of what its session consumed.
// Reading resumes at low. Between the two, one read of the poller (at most
// netpoll's 8 MiB book) can land, so a paused connection holds well under
// high + 8 MiB.
const (
	serverInputHigh = 1 << 20
	serverInputLow  = 256 << 10
	clientInputHigh = 4 * chunkSize
	clientInputLow  = chunkSize
)

// errNPGone says a connection was closed while it joined netpoll.
var errNPGone = errors.New("reactor: connection closed while joining netpoll")

// readBoundPauses counts the pauses of every netpoll connection (tests
// read it).
var readBoundPauses atomic.Uint64

// readBound stops netpoll from reading a connection while its input
// backlog is over a high-water mark and lets it read again once the
// consumer brought the backlog under the low-water mark (see
// npinternals.go for how it reaches netpoll's poller).
//
// The poller pauses, right after a read grew the backlog (inputAck, on the
// poller goroutine); the consumer resumes, after it consumed bytes
// (afterConsume) and before it waits for bytes not yet there (beforeWait),
// so it never waits on a paused connection. The consumer is the one
// goroutine reading the connection at a time (the session's command).
// Pausing publishes paused and then looks at what the consumer waits for;
// the consumer publishes what it waits for and then looks at paused, so
// one of the two always sees the other. mu orders the epoll changes with
// each other and with the connection's close (closing), after which the
// descriptor may be reused and is never touched again.
type readBound struct {
	h         npHandle
	in        netpoll.Reader
	ack       func(int) error // netpoll's own InputAck
	high, low int

	paused atomic.Bool
	want   atomic.Int64 // bytes the consumer waits for, 0 when not waiting

	mu   sync.Mutex
	dead bool // under mu: the connection is closing
}

// newReadBound installs a bound on conn, a connection netpoll registered
// a moment ago that nothing reads yet.
func newReadBound(conn netpoll.Connection, high, low int) (*readBound, error) {
	h, err := npHandleOf(conn)
	if err != nil {
		return nil, err
	}
	rb := &readBound{h: h, in: conn.Reader(), high: high, low: low}
	if !h.lockOperator() {
		return nil, errNPGone
	}
	rb.ack = h.op.InputAck
	h.op.InputAck = rb.inputAck
	h.unlockOperator()
	// Close callbacks run newest first: this one before netpoll's own,
	// which closes the descriptor.
	_ = conn.AddCloseCallback(rb.closing)
	return rb, nil
}

// inputAck runs on the poller after each read into the connection.
func (rb *readBound) inputAck(n int) error {
	err := rb.ack(n)
	if !rb.paused.Load() && rb.in.Len() >= rb.high {
		rb.pause()
	}
	return err
}

func (rb *readBound) pause() {
	rb.mu.Lock()
	defer rb.mu.Unlock()
	if rb.dead || rb.paused.Load() {
		return
	}
	rb.paused.Store(true)
	if l := rb.in.Len(); l < rb.high || int64(l) < rb.want.Load() || rb.h.setEvents(npPausedEvents) != nil {
		rb.paused.Store(false) // consumed meanwhile, or waited on: go on reading
		return
	}
	readBoundPauses.Add(1)
}

func (rb *readBound) resume() {
	rb.mu.Lock()
	defer rb.mu.Unlock()
	if rb.dead || !rb.paused.Load() {
		return
	}
	_ = rb.h.setEvents(npReadEvents)
	rb.paused.Store(false)
}

// beforeWait tells the bound that the consumer is about to wait for n
// bytes in all (the backlog has fewer).
func (rb *readBound) beforeWait(n int) {
	rb.want.Store(int64(n))
	if rb.paused.Load() {
		rb.resume()
	}
}

// afterConsume runs after the consumer released what it read.
func (rb *readBound) afterConsume() {
	rb.want.Store(0)
	if rb.paused.Load() && rb.in.Len() <= rb.low {
		rb.resume()
	}
}

// closing is a close callback of the connection.
func (rb *readBound) closing(netpoll.Connection) error {
	rb.mu.Lock()
	rb.dead = true
	rb.mu.Unlock()
	return nil
}
